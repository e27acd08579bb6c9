"""What a person who opens the built graph reads, against the gold graph (the live bench and
the ingest bench; the sentences compared by MiniLM cosine, as fact recall is):

- ``fact_precision``: the share of built facts that match a gold fact of the turns that ran (any
  statement of it, restatements included) by their two ends or by meaning;
- ``facts_readable``: the share of built facts whose sentence reads
  (:func:`bench.quality.readable.readable`: names both ends, repeats no word sequence, ends on a
  complete clause, most content words the message's or the speakers'), with the count failing each
  check (``unreadable.<check>``);
- ``owner_right``: of the built things given to a speaker, the share given to the right one: a fact
  naming a speaker that matches a gold fact is right when it matches better as written than with the
  speakers' names exchanged ("Jon lost his job" against "Gina lost her job"); an entity named as a
  speaker's possessive ("Gina's business") is right when the gold names it so, wrong when the gold
  names it as the other speaker's (``owners_checked``: how many were judged);
- the summary check: for every gold entity with at least three gold facts, the share of those facts
  that the summary of the built entity matching it states (a sentence of it by meaning:
  ``summary_fact_recall``, pooled over the entities, ``summaries_checked`` of them), and the share of
  those summaries' sentences that state no built fact (``summary_sentences_unsupported``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from bench.quality.readable import CHECKS, readable
from epigraph.graph.model import Entity, Fact

Cosines = Callable[[list[str], list[str]], Any]
"""Two lists of sentences -> their cosine matrix (an awaitable of it)."""
SameEntity = Callable[[Sequence[str], Sequence[str]], bool]

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def facts_readable(
    facts: Sequence[Fact],
    names: Callable[[str], list[str]],
    message_of: Mapping[str, str],
    speakers: Sequence[str],
) -> tuple[dict[str, float], list[tuple[Fact, list[str]]]]:
    """The readable share and each check's failures; also every unreadable fact with what it failed.
    ``names``: an entity uuid's name and aliases; ``message_of``: episode uuid -> its content."""
    failures: list[tuple[Fact, list[str]]] = []
    for fact in facts:
        message = next((message_of[e] for e in fact.episodes if e in message_of), "")
        failed = readable(fact.text, names(fact.source_uuid), names(fact.target_uuid), message, speakers)
        if failed:
            failures.append((fact, failed))
    figures: dict[str, float] = {"facts_readable": _share(len(facts) - len(failures), len(facts))}
    for check in CHECKS:
        figures[f"unreadable.{check}"] = sum(1 for _, failed in failures if check in failed)
    return figures, failures


def fact_precision(matched: Sequence[bool]) -> float:
    """The share of built facts matched to some gold fact (``matched``: one flag per built fact)."""
    return _share(sum(matched), len(matched))


def exchanged(text: str, speakers: Sequence[str]) -> str:
    """``text`` with the two speakers' names exchanged (possessives too); unchanged for other than two."""
    if len(speakers) != 2:
        return text
    a, b = speakers
    pattern = re.compile(rf"\b({re.escape(a)}|{re.escape(b)})\b", re.IGNORECASE)
    return pattern.sub(lambda m: b if m.group(1).casefold() == a.casefold() else a, text)


async def owner_right(
    facts: Sequence[Fact],
    entities: Sequence[Entity],
    gold_facts: Sequence[str],
    gold_names: Sequence[Sequence[str]],
    speakers: Sequence[str],
    cosines: Cosines,
    same_entity: SameEntity,
    threshold: float,
) -> dict[str, float]:
    """See the module: facts by the exchange test, possessive entities by the gold names."""
    right = checked = 0
    named = [f.text for f in facts if exchanged(f.text, speakers) != f.text]
    if named and gold_facts:
        as_said = np.asarray(await cosines(named, list(gold_facts))).max(axis=1)
        swapped = np.asarray(await cosines([exchanged(t, speakers) for t in named], list(gold_facts))).max(
            axis=1
        )
        for said, other in zip(as_said, swapped, strict=True):
            if max(said, other) >= threshold:
                checked += 1
                right += bool(said > other)
    for entity in entities:
        owner, _, owned = entity.name.partition("'s ")
        if not owned or owner.casefold() not in {s.casefold() for s in speakers}:
            continue
        others = [s for s in speakers if s.casefold() != owner.casefold()]
        mine = any(same_entity([entity.name], g) for g in gold_names)
        theirs = any(same_entity([f"{o}'s {owned}"], g) for o in others for g in gold_names)
        if mine or theirs:
            checked += 1
            right += mine
    return {"owner_right": _share(right, checked), "owners_checked": checked}


async def summary_check(
    gold_entities: Sequence[Sequence[str]],
    gold_facts: Sequence[tuple[str, str, str]],
    entities: Sequence[Entity],
    built_facts: Sequence[str],
    cosines: Cosines,
    same_entity: SameEntity,
    threshold: float,
) -> dict[str, float]:
    """``gold_entities``: each gold entity's names; ``gold_facts``: (source, target, sentence) of the
    canonical gold facts; ``entities``: the built ones (with their summaries); ``built_facts``: the
    built facts' sentences."""
    stated = asked = checked = 0
    sentences: list[str] = []
    for names in gold_entities:
        own = [text for source, target, text in gold_facts if source in names or target in names]
        if len(own) < 3:
            continue
        checked += 1
        asked += len(own)
        match = next((e for e in entities if same_entity(names, [e.name, *e.aliases])), None)
        said = [s for s in _SENTENCE_END.split(match.summary.strip()) if s] if match is not None else []
        sentences.extend(said)
        if said:
            stated += int((np.asarray(await cosines(own, said)).max(axis=1) >= threshold).sum())
    unsupported = 0
    if sentences and built_facts:
        best = np.asarray(await cosines(sentences, list(built_facts))).max(axis=1)
        unsupported = int((best < threshold).sum())
    elif sentences:
        unsupported = len(sentences)
    return {
        "summaries_checked": checked,
        "summary_fact_recall": _share(stated, asked),
        "summary_sentences": len(sentences),
        "summary_sentences_unsupported": _share(unsupported, len(sentences)) if sentences else 0.0,
    }


def _share(hits: int, total: int) -> float:
    return round(hits / total, 4) if total else 1.0
