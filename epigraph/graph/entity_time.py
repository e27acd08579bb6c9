"""Entities in time: which exist, by which names, with which summary and how many mentions, as of a
:class:`~epigraph.graph.temporal.TimeFilter`.

Facts carry both time axes themselves; an entity carries only its ``created_at``, so it is dated by
the episodes that mention it, by the same rule as an episode (``temporal.episode_matches``):

- **exists**: with no bound (``CURRENT``, ``include_retired``) every entity; otherwise it must be
  recorded by ``known_at`` (``created_at <= known_at``) and have a mention that passes (an episode
  said by ``as_of`` and stored by ``known_at``). An entity no episode mentions (made by a correction
  by hand) exists from its ``created_at`` on, on both axes.
- **aliases**: an alias is one as of then when a passing episode that mentions the entity says it
  (as a whole word, case and spacing aside); an entity no episode mentions keeps its aliases. Its
  ``name`` is always kept.
- **summary**: the stored summary is written from every episode that mentions the entity; when one of
  them does not pass, the summary holds what was said or learnt after the time asked, so it is not
  shown: ``summary`` is empty and :attr:`~epigraph.graph.model.Entity.summary_withheld` says from when
  it is (that episode's reference time, or its recording time when only ``known_at`` excludes it).
  The graph keeps no history of summaries: an earlier one cannot be shown instead.
- **mentions**: the passing mentions only.

Both stores read an entity's mentions (:class:`Mentioned`) and call :func:`entity_as_of` and
:func:`mentions_passing`; their search queries implement :func:`entity_exists` inside the query
(``entity_clause``, ``entity_pred``), so a time-travelling entity search ranks only entities that
existed then. The served page applies the same rules again in JavaScript (``explore/static/view.js``:
``nodeState``) from the mentions its data carries (``explore.payload``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from .model import Entity, normalize_name
from .store_records import Hit
from .temporal import TimeFilter, episode_bounds

__all__ = [
    "Mentioned",
    "bounded",
    "by_group",
    "entities_as_of",
    "entity_as_of",
    "entity_exists",
    "hits_then",
    "mentions_passing",
    "named_then",
    "not_yet_mentioned",
    "says",
    "shown_summary",
    "withheld_note",
]


@dataclass(frozen=True, slots=True)
class Mentioned:
    """One episode that mentions an entity, as the time rules read it."""

    said_at: datetime
    """The episode's ``reference_time`` (event time)."""
    recorded_at: datetime
    """The episode's ``created_at`` (system time)."""
    text: str = ""
    """The episode's content (where its aliases are looked for)."""


def bounded(flt: TimeFilter) -> bool:
    """Whether ``flt`` restricts entities at all (an ``as_of`` or a ``known_at``, retired not included):
    without a bound every read returns entities as stored, so stores skip the work."""
    said, stored = episode_bounds(flt)
    return said is not None or stored is not None


def _passes(m: Mentioned, flt: TimeFilter) -> bool:
    said, stored = episode_bounds(flt)
    return (said is None or m.said_at <= said) and (stored is None or m.recorded_at <= stored)


def entity_exists(entity: Entity, mentioned: Sequence[Mentioned], flt: TimeFilter) -> bool:
    """Whether ``entity`` (mentioned by ``mentioned``) exists under ``flt`` (see the module docstring)."""
    said, stored = episode_bounds(flt)
    if said is None and stored is None:
        return True
    if stored is not None and entity.created_at > stored:
        return False
    if not mentioned:
        return said is None or entity.created_at <= said
    return any(_passes(m, flt) for m in mentioned)


def mentions_passing(mentioned: Iterable[Mentioned], flt: TimeFilter) -> int:
    """How many of the mentions pass ``flt`` ("mentioned in N episodes" as of then)."""
    return sum(1 for m in mentioned if _passes(m, flt))


def says(text: str, name: str) -> bool:
    """Whether ``text`` says ``name`` as a whole word or phrase, case and spacing aside."""
    words = " ".join(name.casefold().split())
    if not words:
        return False
    pattern = r"(?<!\w)" + re.escape(words).replace(r"\ ", r"\s+") + r"(?!\w)"
    return re.search(pattern, text.casefold()) is not None


def _withheld_since(mentioned: Sequence[Mentioned], flt: TimeFilter) -> datetime | None:
    """When the summary's latest source not passing ``flt`` was said (or recorded, when only
    ``known_at`` keeps it out); None when every mention passes."""
    said, _ = episode_bounds(flt)
    late = [
        m.said_at if said is not None and m.said_at > said else m.recorded_at
        for m in mentioned
        if not _passes(m, flt)
    ]
    return max(late) if late else None


def entity_as_of(entity: Entity, mentioned: Sequence[Mentioned], flt: TimeFilter) -> Entity | None:
    """``entity`` as it was under ``flt``: None when it did not exist yet; else with only the aliases
    said by then and, when its summary draws on a later episode, no summary (``summary_withheld`` set).
    Unbounded filters return it unchanged."""
    if not bounded(flt):
        return entity
    if not entity_exists(entity, mentioned, flt):
        return None
    if not mentioned:
        return entity
    passing = [m for m in mentioned if _passes(m, flt)]
    aliases = [a for a in entity.aliases if any(says(m.text, a) for m in passing)]
    withheld = _withheld_since(mentioned, flt) if entity.summary else None
    if aliases == entity.aliases and withheld is None:
        return entity
    update: dict[str, object] = {"aliases": aliases}
    if withheld is not None:
        update.update(summary="", summary_withheld=withheld)
    return entity.model_copy(update=update)


def entities_as_of(
    entities: Iterable[Entity], mentioned: Mapping[str, Sequence[Mentioned]], flt: TimeFilter
) -> list[Entity]:
    """:func:`entity_as_of` of each (``mentioned`` by uuid), those that did not exist yet left out."""
    found = (entity_as_of(e, mentioned.get(e.uuid, ()), flt) for e in entities)
    return [e for e in found if e is not None]


def named_then(
    found: Mapping[str, Sequence[Entity]], then: Mapping[str, Entity]
) -> dict[str, list[Entity]]:
    """An ``entities_by_names`` answer as of a time: ``found`` (each name's entities as stored) kept to
    those of ``then`` (the entities as they were, by uuid) that still bore the name then."""

    def bore(entity: Entity | None, name: str) -> bool:
        return entity is not None and normalize_name(name) in entity.normalized_names

    return {name: [then[e.uuid] for e in es if bore(then.get(e.uuid), name)] for name, es in found.items()}


def hits_then(hits: Sequence[Hit[Entity]], then: Mapping[tuple[str, str], Entity]) -> list[Hit[Entity]]:
    """Entity hits as of a time: those in ``then`` (the entities as they were, by group and uuid), as
    they were, with their scores."""
    keys = [(h, (h.item.group_id, h.item.uuid)) for h in hits]
    return [Hit(then[key], h.score) for h, key in keys if key in then]


def by_group(entities: Iterable[Entity]) -> dict[str, list[Entity]]:
    """``entities`` by group, in their order."""
    out: dict[str, list[Entity]] = {}
    for e in entities:
        out.setdefault(e.group_id, []).append(e)
    return out


def not_yet_mentioned(entity: Entity) -> Entity:
    """An entity a fact shown as of a time names before any episode had mentioned it (a fact's start
    can lie before it was said): its name and labels only, no alias, no summary (withheld since it was
    recorded)."""
    withheld = entity.created_at if entity.summary else None
    return entity.model_copy(update={"aliases": [], "summary": "", "summary_withheld": withheld})


def withheld_note(entity: Entity) -> str | None:
    """The sentence readers show in place of a summary withheld (``summary_withheld``), or None."""
    when = entity.summary_withheld
    if when is None:
        return None
    return f"summary written from what was said {when.isoformat()}, after the time asked; not shown"


def shown_summary(entity: Entity) -> str:
    """What a reader shows for the summary: the summary, or in its place the note saying why it is not
    shown (in parentheses), or nothing."""
    note = withheld_note(entity)
    return entity.summary or (f"({note})" if note else "")
