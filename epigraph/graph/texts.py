"""The words a record holds: every field of a graph record that carries text someone said or a model wrote
(names, contents, summaries, fact sentences, reasons, attribute values), as ``(field, text)`` pairs, so a
reader that must look at all of them (a dump loaded under the redaction policy, ``epigraph.privacy``)
names the same fields everywhere. Ids, hashes, times, kinds and vectors are not text."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel

from .corrections import Correction, GraphSlice
from .derived import Community, ConversationSummary
from .model import Entity, Episode, Fact

TEXT_FIELDS: dict[type[BaseModel], tuple[str, ...]] = {
    Episode: ("name", "content", "source_description", "error"),
    Entity: ("name", "aliases", "summary", "attributes"),
    Fact: ("text", "attributes"),
    Community: ("name", "summary"),
    ConversationSummary: ("summary",),
    Correction: ("reason",),
}
"""Per record type, its fields of text (a string, or lists and mappings of strings: ``aliases.0``)."""


def texts_of(record: BaseModel) -> Iterator[tuple[str, str]]:
    """``(field, text)`` for every non-empty text of ``record``; a correction's also from the entities and
    facts of its two sides (``before.entities.0.name``); an episode's report warnings too."""
    for name in TEXT_FIELDS.get(type(record), ()):
        yield from _strings(name, getattr(record, name))
    if isinstance(record, Episode):
        yield from _strings("report.warnings", record.report.warnings)
    if isinstance(record, Correction):
        for side in ("before", "after"):
            yield from _slice_texts(side, getattr(record, side))


def _slice_texts(side: str, records: GraphSlice) -> Iterator[tuple[str, str]]:
    for kind, items in (("entities", records.entities), ("facts", records.facts)):
        for i, item in enumerate(items):
            for field, text in texts_of(item):
                yield f"{side}.{kind}.{i}.{field}", text


def _strings(path: str, value: Any) -> Iterator[tuple[str, str]]:
    if isinstance(value, str):
        if value:
            yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(f"{path}.{key}", item)
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            yield from _strings(f"{path}.{i}", item)
