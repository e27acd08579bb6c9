"""What changed in a time window: the kinds of change, the window, and the one rule that finds them.

Pure, like :mod:`.temporal`: :func:`what_changed` reads the records a store returns for a window
(``ChangeReads.changes``: the facts with a time in it, the corrections made in it, the entities and
episodes they name) and says which changes fall in it. Both stores hand it the same records; the
contract suite checks that they do.

**The window** is half-open, ``[since, until)``: an instant equal to ``since`` is in it, one equal to
``until`` is not (so March then April, ``[03-01, 04-01)`` and ``[04-01, 05-01)``, share nothing). An
unset bound is no bound. Naive datetimes are read as UTC, as everywhere.

**Which axis decides** depends on the kind (each change carries both axes' times all the same: the fact
with its ``valid_at`` / ``invalid_at`` and its ``created_at`` / ``expired_at``, the correction with its
``created_at``):

- ``started`` (event time): the fact began to hold in the window: its start
  (:func:`.temporal.interval`: ``valid_at``, or for an unknown start the ``stated_at`` of its first
  statement) is in it;
- ``ended`` (event time): it stopped holding in the window: its ``invalid_at`` is in it (an end the
  statement gave, or one a contradiction set);
- ``learned`` (system time): the graph recorded it in the window (``created_at``);
- ``retired`` (system time): the graph retired it in the window (``expired_at``, with an
  ``invalidated_by``: a later statement contradicted it, or a person retired it by hand);
- ``corrected`` (system time): a correction by hand made in the window touched it (added, retired,
  edited, deleted or restored it; a rename touches an entity and no fact);
- ``merged`` (system time): a merge of two entities made in the window moved it to the entity kept;
- ``forgotten`` (system time): a forgetting made in the window (``kg.forget``, a retention pass:
  :mod:`.forgetting`) removed it. Its audit record is all that is left, and all that is shown: the
  fact's uuid, when (the record's ``at``), by which forgetting (its uuid, the door that asked, a
  retention's cutoff) and the ids of the subjects it forgot; never the fact's text, its ends' names or
  its times, which went with it (nothing is kept to be shown here). Its ends are not recorded, so a
  forgotten fact is listed under its forgetting (the record's uuid, named :data:`FORGOTTEN`), not under
  an entity; a forgetting that removed no fact (only episodes redacted) is one change without a fact.

Facts are read as the graph holds them now: a retirement undone since (the episode that caused it was
removed, or the correction was undone) is no longer ``retired``; the undo is listed, as a correction.
A withdrawn fact (expired without an ``invalidated_by``: the graph believes nothing of it) neither
starts nor ends. A fact a correction deleted is shown as the correction's record holds it.

A new kind needs a member here, a branch in :func:`what_changed` and, for records of a new sort, the
stores' read of them (``forgotten`` was added so: ``ChangeRecords.forgettings``).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Literal

from .corrections import CORRECTION_PREFIX, Correction, CorrectionOp
from .forgetting import ForgetRecord
from .model import Entity, Episode, Fact, Invalidation, to_utc
from .temporal import interval

Axis = Literal["event", "system"]


class ChangeKind(StrEnum):
    STARTED = "started"
    ENDED = "ended"
    LEARNED = "learned"
    RETIRED = "retired"
    CORRECTED = "corrected"
    MERGED = "merged"
    FORGOTTEN = "forgotten"

    @property
    def axis(self) -> Axis:
        """The time axis that puts a change of this kind in a window (module docstring)."""
        return "event" if self in (ChangeKind.STARTED, ChangeKind.ENDED) else "system"


KINDS: tuple[ChangeKind, ...] = tuple(ChangeKind)
"""Every kind, in the order a fact's changes are listed at one instant."""
FORGOTTEN = "[forgotten]"
"""The name a forgetting is listed under (its forgotten facts' ends are not recorded)."""


def kinds_of(names: str | Iterable[str | ChangeKind] | None) -> tuple[ChangeKind, ...]:
    """The kinds named (one, or several; every kind for None); ``ValueError`` naming the kinds there are
    otherwise."""
    if names is None:
        return KINDS
    if isinstance(names, str):
        names = [names]
    chosen: list[ChangeKind] = []
    for name in names:
        try:
            kind = ChangeKind(str(name).strip().lower())
        except ValueError:
            known = ", ".join(KINDS)
            raise ValueError(f"unknown kind of change {str(name)[:40]!r}: one of {known}") from None
        if kind not in chosen:
            chosen.append(kind)
    if not chosen:
        raise ValueError(f"no kind of change given: one or more of {', '.join(KINDS)}")
    return tuple(chosen)


@dataclass(frozen=True, slots=True)
class Window:
    """The half-open window ``[since, until)`` (an unset bound is none); ``since`` before ``until``."""

    since: datetime | None = None
    until: datetime | None = None

    def __post_init__(self) -> None:
        since = None if self.since is None else to_utc(self.since)
        until = None if self.until is None else to_utc(self.until)
        if since is not None and until is not None and since >= until:
            raise ValueError(
                f"the window is empty: since ({since.isoformat()}) must be before until ({until.isoformat()})"
            )
        object.__setattr__(self, "since", since)
        object.__setattr__(self, "until", until)

    def holds(self, at: datetime | None) -> bool:
        """``since <= at < until``; no instant (None) is in no window."""
        if at is None:
            return False
        at = to_utc(at)
        return (self.since is None or self.since <= at) and (self.until is None or at < self.until)


@dataclass(frozen=True, slots=True)
class ChangeRecords:
    """What a store reads for a window (``ChangeReads.changes``)."""

    facts: list[Fact] = field(default_factory=list)
    """Every fact of the group with a time in the window (start: ``valid_at`` or ``stated_at``;
    ``invalid_at``, ``created_at``, ``expired_at``), at most the read's limit (oldest recorded first);
    a store may return more facts than that, never fewer: :func:`what_changed` decides."""
    corrections: list[Correction] = field(default_factory=list)
    """The corrections made in the window (``created_at``), oldest first, at most the limit."""
    entities: list[Entity] = field(default_factory=list)
    """The stored entities the facts and corrections name (a deleted one is found in its correction)."""
    episodes: list[Episode] = field(default_factory=list)
    """The stored episodes the facts cite (their provenance and the episodes that retired them)."""
    truncated: bool = False
    """More facts, corrections or forgettings were in the window than the limit let through."""
    forgettings: list[ForgetRecord] = field(default_factory=list)
    """The audit records of the forgettings made in the window (``at``), oldest first, at most the
    limit: ids and counts, never what was forgotten (:class:`~.forgetting.ForgetRecord`)."""


@dataclass(frozen=True, slots=True)
class Change:
    """One change: its kind, the instant that put it in the window (on the kind's axis), the fact (None:
    a correction that touched only entities), the entities it is about, and where it came from."""

    kind: ChangeKind
    at: datetime
    fact: Fact | None
    entities: tuple[str, ...]
    """The entity uuids it is listed under: the fact's ends; a correction's entities besides."""
    episodes: tuple[str, ...] = ()
    """The episodes that stated the fact (its provenance)."""
    retired_by: Invalidation | None = None
    """``retired``: the fact and episode that retired it (a correction's uuid when retired by hand)."""
    correction: Correction | None = None
    """``corrected`` / ``merged``: the correction."""
    forgotten: str | None = None
    """``forgotten``: the uuid of the fact forgotten (None: a forgetting that removed no fact)."""
    forgetting: ForgetRecord | None = None
    """``forgotten``: the audit record of the forgetting that removed it."""

    @property
    def axis(self) -> Axis:
        return self.kind.axis


def what_changed(
    records: ChangeRecords, window: Window, kinds: Collection[ChangeKind] = KINDS
) -> list[Change]:
    """Every change of ``kinds`` in ``window`` among ``records`` (module docstring), in time order:
    by instant, then kind (:data:`KINDS`' order), then fact uuid."""
    found = [c for c in _fact_changes(records.facts, window) if c.kind in kinds]
    found += [c for c in _correction_changes(records.corrections, window) if c.kind in kinds]
    if ChangeKind.FORGOTTEN in kinds:
        found += _forgotten(records.forgettings, window)
    order = {kind: i for i, kind in enumerate(KINDS)}
    return sorted(found, key=lambda c: (c.at, order[c.kind], c.fact.uuid if c.fact else "", _key(c)))


def _key(change: Change) -> str:
    if change.forgetting is not None:
        return f"{change.forgetting.uuid} {change.forgotten or ''}"
    return change.correction.uuid if change.correction is not None else ""


def _forgotten(records: Iterable[ForgetRecord], window: Window) -> Iterator[Change]:
    """One ``forgotten`` change per fact each forgetting in the window removed (its uuid, from the audit
    record's ``ids["facts"]``), listed under the forgetting itself."""
    for record in records:
        if not window.holds(record.at):
            continue
        facts: list[str | None] = [*record.ids.get("facts", [])]
        for uuid in facts or [None]:
            yield Change(
                ChangeKind.FORGOTTEN, record.at, None, (record.uuid,), forgotten=uuid, forgetting=record
            )


def _fact_changes(facts: Iterable[Fact], window: Window) -> Iterator[Change]:
    for fact in facts:
        ends = (fact.source_uuid, fact.target_uuid)
        episodes = tuple(fact.episodes)
        withdrawn = fact.expired_at is not None and fact.invalidated_by is None
        start, end = interval(fact)
        if not withdrawn and start is not None and window.holds(start):
            yield Change(ChangeKind.STARTED, start, fact, ends, episodes)
        if not withdrawn and end is not None and window.holds(end):
            yield Change(ChangeKind.ENDED, end, fact, ends, episodes)
        if window.holds(fact.created_at):
            yield Change(ChangeKind.LEARNED, fact.created_at, fact, ends, episodes)
        if fact.invalidated_by is not None and fact.expired_at is not None and window.holds(fact.expired_at):
            yield Change(ChangeKind.RETIRED, fact.expired_at, fact, ends, episodes, fact.invalidated_by)


def _correction_changes(corrections: Iterable[Correction], window: Window) -> Iterator[Change]:
    for correction in corrections:
        if not window.holds(correction.created_at):
            continue
        merge = correction.operation == CorrectionOp.MERGE_ENTITIES
        kind = ChangeKind.MERGED if merge else ChangeKind.CORRECTED
        named = _entities_named(correction)
        facts = _facts_of(correction)
        if not facts:
            yield Change(kind, correction.created_at, None, named, correction=correction)
        for fact in facts:
            ends = tuple(dict.fromkeys((fact.source_uuid, fact.target_uuid, *(named if merge else ()))))
            yield Change(kind, correction.created_at, fact, ends, tuple(fact.episodes), correction=correction)


def _facts_of(correction: Correction) -> list[Fact]:
    """The facts a correction touched, each as it left it (as it was, for one it deleted)."""
    after = {f.uuid: f for f in correction.after.facts}
    facts = dict(after)
    for fact in correction.before.facts:
        facts.setdefault(fact.uuid, fact)
    return [facts[uuid] for uuid in sorted(facts)]


def _entities_named(correction: Correction) -> tuple[str, ...]:
    sides = (correction.before, correction.after)
    return tuple(dict.fromkeys(e.uuid for side in sides for e in side.entities))


def named_entities(records: ChangeRecords) -> dict[str, str]:
    """Entity uuid -> name for everything ``records`` names: the stored entities, and the ones only a
    correction still holds (merged away, or created and deleted since)."""
    names: dict[str, str] = {}
    for correction in records.corrections:
        for side in (correction.before, correction.after):
            names.update((e.uuid, e.name) for e in side.entities)
    names.update((e.uuid, e.name) for e in records.entities)
    names.update((r.uuid, FORGOTTEN) for r in records.forgettings)
    return names


def cited(facts: Iterable[Fact], corrections: Iterable[Correction]) -> tuple[list[str], list[str]]:
    """The entity and episode uuids a store looks up for a window's facts and corrections (sorted):
    the facts' ends, the corrections' entities; the facts' episodes and the episodes that retired them."""
    entities: set[str] = set()
    episodes: set[str] = set()
    all_facts = list(facts)
    for correction in corrections:
        entities.update(_entities_named(correction))
        all_facts += _facts_of(correction)
    for fact in all_facts:
        entities.update((fact.source_uuid, fact.target_uuid))
        episodes.update(fact.episodes)
        if fact.invalidated_by is not None:
            episodes.add(fact.invalidated_by.episode_uuid)
    return sorted(entities), sorted(e for e in episodes if not e.startswith(CORRECTION_PREFIX))
