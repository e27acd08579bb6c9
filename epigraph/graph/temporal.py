"""Pure interval logic of the bi-temporal graph: overlap, as-of filtering, contradiction, undo.

No I/O, no clock: every function that needs "now" takes it as an argument, so results are reproducible
and every store can be checked against these definitions.

Intervals are half-open, ``[start, end)``, and ``None`` means unbounded (``-inf`` for a start, ``+inf``
for an end). A fact lives on two time axes:

- **event time** ``[valid_at, invalid_at)``: when it was true in the world;
- **system time** ``created_at`` / ``expired_at``: when the graph learned it, and when it retired it
  (contradicted it, changing its event-time end, or withdrew it).

:func:`matches` is THE definition of :class:`TimeFilter`; stores translate it to
their query language and the contract suite checks that they agree with it.

Contradictions are applied by shrinking, never by deleting: the retired fact keeps its row, gets an end
in event time and an expiry in system time, and records an :class:`~epigraph.graph.model.Invalidation`
(who retired it, in which episode, and the ``invalid_at`` it had before), so :func:`revert_invalidation`
can undo it exactly when the contradicting episode is deleted.

The record of a retired fact therefore holds two beliefs about its event time: before ``expired_at`` the
graph believed ``[valid_at, previous_invalid_at)``, from ``expired_at`` on it believes
``[valid_at, invalid_at)`` (:func:`believed_interval`). A fact that expired *without* an
``invalidated_by`` was withdrawn: from ``expired_at`` on the graph believes nothing of it. Filtering
reads the record that way, so ``as_of`` a past instant still finds a fact that was contradicted later,
and ``known_at`` a past instant sees the interval the graph held then.

**An unknown start** (no ``valid_at``: the statement gave no date) is never read as "forever": the fact
starts at its ``stated_at``, the reference time of the earliest episode that stated it (what was said
held by the time it was said, and nothing tells of it before). A stated date wins either way, earlier or
later. One exception keeps what a statement says of an earlier time: when the interval believed for the
fact ends no later than ``stated_at`` ("she worked there until 2020", said in 2024, or a fact a later
contradiction ended before it was first said), its start stays open. A fact with no ``stated_at`` (none
of its episodes is known) keeps an open start too. :func:`start_of` is the rule; :func:`matches`,
:func:`believed_interval` and every reader go through it, and :func:`start_unknown` tells readers which
facts to mark. The contradiction rules at the end of this module still read ``valid_at`` alone (an
undated older fact can be retired by any newer one), as ingestion always applied them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from .model import Episode, Fact, Invalidation, to_utc

__all__ = [
    "CURRENT",
    "EVERYTHING",
    "TimeFilter",
    "apply_contradiction",
    "believed_end",
    "believed_interval",
    "effective_valid_at",
    "episode_bounds",
    "episode_matches",
    "first_stated",
    "interval",
    "is_current",
    "is_known_at",
    "is_valid_at",
    "latest_creation",
    "latest_start",
    "matches",
    "overlaps",
    "resolve_contradiction",
    "revert_invalidation",
    "start_key",
    "start_of",
    "start_unknown",
    "valid_overlap",
]


@dataclass(frozen=True, slots=True)
class TimeFilter:
    """Which facts count, in event time (``as_of``) and system time (``known_at``).

    A retired fact is one record holding two beliefs. Contradictions shrink facts in place
    (``graph.temporal.resolve_contradiction``): the retired fact gets a new ``invalid_at``, an
    ``expired_at`` (when the graph retired it) and an ``invalidated_by`` that keeps the
    ``previous_invalid_at``. So before ``expired_at`` the graph believed the interval
    ``[valid_at, previous_invalid_at)``; from ``expired_at`` on it believes ``[valid_at, invalid_at)``.

    - ``include_retired=True``: every fact, whatever its intervals.
    - otherwise, with ``k = known_at`` and ``t = as_of`` (``None`` for either means "now"):

      1. not known yet: ``created_at > k`` -> excluded;
      2. withdrawn: ``expired_at`` set, no ``invalidated_by`` and ``expired_at <= k`` -> excluded
         (retired without an interval update, so no longer believed at all);
      3. the interval believed at ``k`` ends at ``invalidated_by.previous_invalid_at`` when the fact is
         invalidated (``invalidated_by`` and ``expired_at`` set) and ``k < expired_at``, else at
         ``invalid_at``;
      4. the fact counts iff ``start <= t < end``, where ``start`` is ``valid_at``, or for an unknown
         start ``stated_at`` unless ``end <= stated_at`` (:func:`start_of`); a missing bound is unbounded.

    So the default (now, now) hides facts whose ``invalid_at`` has passed, which includes every fact
    retired by a contradiction that has started; ``as_of`` in the past shows what was true then as the
    graph believes it now (a fact retired later still counts for its own interval); ``known_at`` in the
    past shows what the graph believed then (before a contradiction arrived, the old interval).
    :func:`matches` is the executable definition.

    **Episodes** (what was said, never retired) pass a filter by the same two axes
    (:func:`episode_matches`): said by ``as_of`` (``reference_time <= as_of``: a conversation of 2024
    is not among what was known as of 2023) and stored by ``known_at`` (``created_at <= known_at``: not
    what the graph held then otherwise). An unset bound is no bound for an episode (not "now": an
    episode dated ahead of the clock is still shown by a search that did not ask to travel);
    ``include_retired`` lets every episode through.
    """

    as_of: datetime | None = None
    known_at: datetime | None = None
    include_retired: bool = False


CURRENT = TimeFilter()
EVERYTHING = TimeFilter(include_retired=True)


def _utc(value: datetime) -> datetime:
    """Aware UTC datetime; a naive one is read as UTC, the same rule as the data model."""
    result: datetime = to_utc(value)
    return result


def overlaps(
    a_start: datetime | None, a_end: datetime | None, b_start: datetime | None, b_end: datetime | None
) -> bool:
    """Whether the half-open intervals ``[a_start, a_end)`` and ``[b_start, b_end)`` share an instant.

    ``None`` is unbounded on that side. An empty interval (``start >= end``) overlaps nothing, so
    touching intervals (``a_end == b_start``) do not overlap: that is succession.
    """
    lo = _later_start(a_start, b_start)
    hi = _earlier_end(a_end, b_end)
    return lo is None or hi is None or _utc(lo) < _utc(hi)


def _later_start(a: datetime | None, b: datetime | None) -> datetime | None:
    if a is None:
        return b
    if b is None:
        return a
    return max(_utc(a), _utc(b))


def _earlier_end(a: datetime | None, b: datetime | None) -> datetime | None:
    if a is None:
        return b
    if b is None:
        return a
    return min(_utc(a), _utc(b))


def valid_overlap(a: Fact, b: Fact) -> bool:
    """Whether the event-time intervals of two facts overlap (both could be true at one instant)."""
    return overlaps(a.valid_at, a.invalid_at, b.valid_at, b.invalid_at)


def start_unknown(fact: Fact) -> bool:
    """The statement gave no start date (``valid_at`` is ``None``): readers say so beside the fact."""
    return fact.valid_at is None


def start_of(fact: Fact, end: datetime | None) -> datetime | None:
    """When ``fact`` starts to hold, given the ``end`` of the interval believed for it (``None``: open).

    Its ``valid_at`` when the statement dated it. Otherwise its ``stated_at`` (the reference time of the
    earliest episode that stated it), unless ``end <= stated_at``: a fact known only to have ended by
    the time it was said keeps an open start. No ``stated_at`` either: open.
    """
    if fact.valid_at is not None:
        return fact.valid_at
    stated = fact.stated_at
    if stated is None or (end is not None and end <= stated):
        return None
    return stated


def interval(fact: Fact) -> tuple[datetime | None, datetime | None]:
    """The event-time interval of the fact's current record, ``(start, invalid_at)``, its start by
    :func:`start_of`: what "valid from ... until ..." shows and what a ``during`` window overlaps."""
    return start_of(fact, fact.invalid_at), fact.invalid_at


def start_key(fact: Fact) -> datetime | None:
    """The earliest start the fact has in any interval its record holds (``None``: open): the stores'
    index key for "begun by ``as_of``" (:func:`latest_start`). It may be earlier than the start a query
    reads (the query applies :func:`matches` exactly), never later."""
    ends = [fact.invalid_at]
    if fact.invalidated_by is not None:
        ends.append(fact.invalidated_by.previous_invalid_at)
    starts = [start_of(fact, end) for end in ends]
    return None if any(s is None for s in starts) else min(s for s in starts if s is not None)


def first_stated(
    reference_times: Iterable[datetime | None], default: datetime | None = None
) -> datetime | None:
    """The earliest of ``reference_times`` (when the episodes that state a fact happened; ``None`` ones
    skipped), or ``default`` when there is none: a fact's ``stated_at`` once an episode is added to its
    provenance (with the ``stated_at`` it had), or once one is removed (the remaining episodes' times)."""
    times = [_utc(t) for t in reference_times if t is not None]
    return min(times) if times else default


def is_valid_at(fact: Fact, t: datetime) -> bool:
    """Event time: ``start <= t < invalid_at`` on the fact's current record (:func:`interval`), a
    missing bound being unbounded."""
    t = _utc(t)
    start, end = interval(fact)
    return (start is None or start <= t) and (end is None or t < end)


def is_known_at(fact: Fact, t: datetime) -> bool:
    """System time: the graph held a belief about the fact at ``t``.

    ``created_at <= t``, and not withdrawn by then: an expiry without an ``invalidated_by``
    (``expired_at <= t``) withdraws the fact, while a contradiction (``invalidated_by`` set) only
    changes the interval believed from ``expired_at`` on (see :func:`believed_interval`).
    """
    t = _utc(t)
    if fact.created_at > t:
        return False
    withdrawn = fact.expired_at is not None and fact.invalidated_by is None and fact.expired_at <= t
    return not withdrawn


def believed_end(fact: Fact, t: datetime) -> datetime | None:
    """The end of the event-time interval the graph believed at system time ``t`` (``None``: unbounded).

    ``invalidated_by.previous_invalid_at`` while the contradiction had not arrived yet (the fact is
    invalidated, ``expired_at`` is set and ``t < expired_at``), else ``invalid_at``. Meaningful only
    when :func:`is_known_at` holds.
    """
    t = _utc(t)
    inv = fact.invalidated_by
    if inv is not None and fact.expired_at is not None and t < fact.expired_at:
        return inv.previous_invalid_at
    return fact.invalid_at


def believed_interval(fact: Fact, t: datetime) -> tuple[datetime | None, datetime | None] | None:
    """The event-time interval ``(start, end)`` the graph held for ``fact`` at system time ``t`` (its
    start by :func:`start_of`), or ``None`` when it held none then (not known yet, or withdrawn)."""
    if not is_known_at(fact, t):
        return None
    end = believed_end(fact, t)
    return start_of(fact, end), end


def matches(fact: Fact, flt: TimeFilter, now: datetime) -> bool:
    """Whether ``fact`` passes ``flt``, exactly as :class:`TimeFilter`'s docstring defines it.

    ``include_retired`` lets every fact through. Otherwise, with ``k = flt.known_at`` and
    ``t = flt.as_of``, a ``None`` for either being read as ``now`` (passed in, never read from a clock,
    so a query evaluates both against the same instant):

    1. ``created_at > k``: not known yet, excluded;
    2. ``expired_at <= k`` with no ``invalidated_by``: withdrawn, excluded;
    3. ``end`` is ``invalidated_by.previous_invalid_at`` when ``invalidated_by`` and ``expired_at`` are
       set and ``k < expired_at`` (the contradiction had not arrived), else ``invalid_at``;
    4. the fact counts iff ``start <= t < end``, ``start`` by :func:`start_of` (``None`` bounds
       unbounded).
    """
    if flt.include_retired:
        return True
    as_of = _utc(now if flt.as_of is None else flt.as_of)
    known_at = now if flt.known_at is None else flt.known_at
    interval = believed_interval(fact, known_at)
    if interval is None:
        return False
    start, end = interval
    return (start is None or start <= as_of) and (end is None or as_of < end)


def latest_start(flt: TimeFilter, now: datetime) -> datetime | None:
    """The latest :func:`start_key` a fact can have and still pass ``flt``: its ``as_of`` (``now`` when
    unset), or ``None`` (any) when retired facts are included. Both stores skip the facts begun later
    before anything else, so a search as of an early time reads only the few that had begun."""
    if flt.include_retired:
        return None
    return _utc(now if flt.as_of is None else flt.as_of)


def latest_creation(flt: TimeFilter, now: datetime) -> datetime | None:
    """The latest ``created_at`` a fact can have and still pass ``flt``: its ``known_at`` (``now`` when
    unset), or ``None`` (any) when retired facts are included. Both stores skip the facts recorded later
    before anything else, so a search of what was known at an early time reads only the few recorded."""
    if flt.include_retired:
        return None
    return _utc(now if flt.known_at is None else flt.known_at)


def episode_bounds(flt: TimeFilter) -> tuple[datetime | None, datetime | None]:
    """The latest ``reference_time`` and the latest ``created_at`` an episode can have and pass ``flt``
    (``None``: no bound), as :class:`TimeFilter` says for episodes; the stores put them in their queries."""
    if flt.include_retired:
        return None, None
    said = None if flt.as_of is None else _utc(flt.as_of)
    stored = None if flt.known_at is None else _utc(flt.known_at)
    return said, stored


def episode_matches(episode: Episode, flt: TimeFilter) -> bool:
    """Whether ``episode`` passes ``flt``: said by its ``as_of`` and stored by its ``known_at`` (see
    :class:`TimeFilter`); the executable definition the stores' queries implement."""
    said, stored = episode_bounds(flt)
    return (said is None or episode.reference_time <= said) and (
        stored is None or episode.created_at <= stored
    )


def is_current(fact: Fact, now: datetime) -> bool:
    """Believed now to hold now: what the default :data:`CURRENT` filter keeps.

    A fact retired by a contradiction is current until its new ``invalid_at`` (which can lie ahead).
    """
    return matches(fact, TimeFilter(), now)


def effective_valid_at(fact_valid_at: datetime | None, episode_reference_time: datetime) -> datetime:
    """When a fact starts to hold: its own ``valid_at``, else the reference time of the episode that
    stated it (a fact said in a conversation is taken to be true from when it was said)."""
    return _utc(episode_reference_time if fact_valid_at is None else fact_valid_at)


def apply_contradiction(older: Fact, newer: Fact, episode_uuid: str, now: datetime) -> Fact:
    """Retire ``older`` because ``newer`` (stated in episode ``episode_uuid``) contradicts it.

    Returns ``older`` with ``invalid_at = newer.valid_at`` (it stopped being true when the new fact
    started), ``expired_at = now`` (the graph retired it now, in system time) and
    ``invalidated_by = Invalidation(newer.uuid, episode_uuid, previous_invalid_at=older.invalid_at)``
    (what :func:`revert_invalidation` needs to undo it).

    Succession is not contradiction: when the intervals do not overlap (``older`` already ended by the
    time ``newer`` starts, or ``newer`` ends before ``older`` starts), ``older`` is returned unchanged.

    Raises ``ValueError`` when ``newer`` has no ``valid_at`` (date it first with
    :func:`effective_valid_at`), when both are the same fact, or when ``newer`` starts before ``older``
    (the late-arriving case: use :func:`resolve_contradiction`, which retires the new fact instead).
    """
    _check_pair(older, newer)
    if not valid_overlap(older, newer):
        return older
    assert newer.valid_at is not None  # checked by _check_pair
    if older.valid_at is not None and newer.valid_at < older.valid_at:
        raise ValueError(
            f"fact {newer.uuid} starts before {older.uuid}: a late-arriving fact retires itself, "
            "use resolve_contradiction"
        )
    return _retire(older, by=newer, end=newer.valid_at, episode_uuid=episode_uuid, now=now)


def resolve_contradiction(existing: Fact, new: Fact, episode_uuid: str, now: datetime) -> tuple[Fact, Fact]:
    """Apply the bi-temporal update for ``new`` contradicting ``existing``; returns ``(existing', new')``.

    - Non-overlapping intervals are succession: both are returned unchanged.
    - ``new.valid_at >= existing.valid_at`` (ties included: a later statement retires an earlier one):
      ``existing`` is retired by :func:`apply_contradiction`; ``new`` is unchanged.
    - ``new.valid_at < existing.valid_at`` (a late-arriving fact about the earlier past): ``new`` is
      stored already retired (``invalid_at = existing.valid_at``, ``expired_at = now``,
      ``invalidated_by`` pointing at ``existing``) and ``existing`` is untouched.

    Either way the two returned facts' event-time intervals do not overlap. ``new.valid_at`` must be
    set (see :func:`effective_valid_at`); ``ValueError`` otherwise.
    """
    _check_pair(existing, new)
    if not valid_overlap(existing, new):
        return existing, new
    assert new.valid_at is not None  # checked by _check_pair
    if existing.valid_at is not None and new.valid_at < existing.valid_at:
        retired_new = _retire(new, by=existing, end=existing.valid_at, episode_uuid=episode_uuid, now=now)
        return existing, retired_new
    return _retire(existing, by=new, end=new.valid_at, episode_uuid=episode_uuid, now=now), new


def revert_invalidation(fact: Fact) -> Fact:
    """Undo the retirement recorded in ``fact.invalidated_by``.

    ``invalid_at`` goes back to ``previous_invalid_at``; ``expired_at`` and ``invalidated_by`` are
    cleared. A fact that is not invalidated is returned unchanged. This is the inverse of
    :func:`apply_contradiction` on a fact that was not retired before.
    """
    if fact.invalidated_by is None:
        return fact
    return fact.model_copy(
        update={
            "invalid_at": fact.invalidated_by.previous_invalid_at,
            "expired_at": None,
            "invalidated_by": None,
        }
    )


def _check_pair(a: Fact, b: Fact) -> None:
    if a.uuid == b.uuid:
        raise ValueError(f"a fact cannot contradict itself ({a.uuid})")
    if b.valid_at is None:
        raise ValueError(f"contradicting fact {b.uuid} has no valid_at: date it first (effective_valid_at)")


def _retire(fact: Fact, *, by: Fact, end: datetime, episode_uuid: str, now: datetime) -> Fact:
    """``fact`` ended at ``end`` in event time and expired ``now`` in system time, because of ``by``."""
    invalidation = Invalidation(
        fact_uuid=by.uuid, episode_uuid=episode_uuid, previous_invalid_at=fact.invalid_at
    )
    return fact.model_copy(
        update={"invalid_at": _utc(end), "expired_at": _utc(now), "invalidated_by": invalidation}
    )
