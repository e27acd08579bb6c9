"""An entity's whole record, for a question that gathers ("What activities does Melanie partake in?"):
every fact the entity has, current and past, deduplicated, one thing each first, each with its dates
(the fact lines of :mod:`.observations`): what the top facts or episodes of one search cannot hold,
since the things gathered were said at different times and in different words.

- **Whose record**: of the entities the question names (by name or alias, the longest names first),
  the first one the facts of a search of the question touch, else the first named; without a name,
  the entity that dominates those facts (an endpoint of at least half of them, and of two at least).
  No such entity: no record (the context then shows the facts the search found).
- **Deduplicated**: facts of the same words (case, punctuation and spacing aside) are one, which keeps
  the earliest and the episodes of all of them (so its citation leads to every message that said it).
- **One thing each, first**: the facts are grouped by the other entity each joins the record's entity
  to ("Melanie -> pottery class": signed up, made a plate), each group's facts and the groups ordered
  by closeness to the question (cosine of the question's and the facts' embeddings; by the newest fact
  when a store keeps no fact vectors), then taken in rounds: the closest fact of every group, then the
  second of every group, and so on. A list asks for several things, so the budget keeps one fact about
  each of the closest things before a second about any: shown group by group, a speaker's record on a
  whole conversation was its first groups alone, the other speaker's above all
  (docs/decisions/2026-11-25-ask.md). Each line carries its own dates.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import zip_longest

import numpy as np

from ..graph.model import Entity, Fact
from .lookups import Lookups

DOMINANT_SHARE = 0.5
"""An entity the question does not name has its record shown when it is an endpoint of at least this
share of the facts already shown."""
_NOT_WORD = re.compile(r"[\W_]+")


async def whose_record(lookups: Lookups, question: str, shown_facts: Sequence[Fact]) -> Entity | None:
    """The entity whose record the question gathers (see the module docstring), or None."""
    named = await lookups.entities_named(question, 5)
    touched = {u for f in shown_facts for u in (f.source_uuid, f.target_uuid)}
    for entity in named:
        if entity.uuid in touched:
            return entity
    if named:
        return named[0]
    counts: dict[str, int] = {}
    for f in shown_facts:
        for uuid in {f.source_uuid, f.target_uuid}:
            counts[uuid] = counts.get(uuid, 0) + 1
    if not counts:
        return None
    uuid, count = max(counts.items(), key=lambda item: item[1])
    if count < DOMINANT_SHARE * len(shown_facts) or count < 2:
        return None
    found = await lookups.store.get_entities(lookups.group_id, [uuid])
    return found[0] if found else None


async def record(lookups: Lookups, question: str, entity: Entity) -> list[Fact]:
    """``entity``'s facts, deduplicated, one thing each first (see the module docstring)."""
    facts = deduplicated(await lookups.facts_of([entity.uuid]))
    if not facts:
        return []
    closeness = await _closeness(lookups, question, facts)
    groups: dict[str, list[Fact]] = {}  # by the closeness of their closest fact (insertion order)
    for i in sorted(range(len(facts)), key=lambda i: -closeness[i]):
        groups.setdefault(_other(facts[i], entity.uuid), []).append(facts[i])
    return [f for round_ in zip_longest(*groups.values()) for f in round_ if f is not None]


def _other(fact: Fact, uuid: str) -> str:
    return fact.target_uuid if fact.source_uuid == uuid else fact.source_uuid


def deduplicated(facts: Sequence[Fact]) -> list[Fact]:
    """``facts`` with those of the same words merged: the earliest stated kept, with every one's
    episodes."""
    kept: dict[str, Fact] = {}
    for f in sorted(facts, key=lambda f: (f.stated_at or f.created_at, f.uuid)):
        key = _NOT_WORD.sub(" ", f.text.casefold()).strip()
        if (first := kept.get(key)) is None:
            kept[key] = f
        elif missing := [u for u in f.episodes if u not in first.episodes]:
            kept[key] = first.model_copy(update={"episodes": [*first.episodes, *missing]})
    return list(kept.values())


async def _closeness(lookups: Lookups, question: str, facts: Sequence[Fact]) -> list[float]:
    """Each fact's cosine to the question (facts without a vector: -1); by recency when none has one."""
    if not any(f.text_embedding for f in facts):
        newest = sorted(range(len(facts)), key=lambda i: facts[i].created_at)
        return [float(newest.index(i)) for i in range(len(facts))]
    query = (await lookups.embedder.embed([question]))[0]
    return [
        float(np.dot(query, np.asarray(f.text_embedding, dtype=np.float32))) if f.text_embedding else -1.0
        for f in facts
    ]
