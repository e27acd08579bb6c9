"""How a fact is worded, made comparable (pure functions): a relation as the model wrote it made one of
the graph's relation types, the relations a user's families say can contradict each other, a sentence
compared for word-for-word repeats."""

from __future__ import annotations

import re
from collections.abc import Iterable

from ...graph.model import RELATION_RE


def normalize_relation(raw: str) -> str | None:
    """SCREAMING_SNAKE_CASE from whatever the model wrote ("works at" -> WORKS_AT); None if impossible."""
    text = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", raw.strip())
    text = re.sub(r"[^A-Za-z0-9]+", "_", text).strip("_").upper()
    text = re.sub(r"_+", "_", text)[:64].rstrip("_")
    if text and text[0].isdigit():
        text = "R_" + text
    return text if text and RELATION_RE.fullmatch(text) else None


def compatible_relations(relation: str, families: Iterable[frozenset[str]]) -> frozenset[str]:
    """The relations a fact with ``relation`` can contradict across different endpoints."""
    related = {relation}
    for family in families:
        if relation in family:
            related |= family
    return frozenset(related)


def normalize_text(text: str) -> str:
    """Fact sentences compared for deterministic duplicates: case, spacing and final punctuation."""
    return " ".join(text.casefold().split()).rstrip(" .!;")
