"""Search filters: what the caller asked for, and the pure predicates the engine applies after retrieval.

Time travel (``as_of`` / ``known_at``). The graph retires a fact by *shrinking* it in place
(``graph.temporal.apply_contradiction``): it gets ``invalid_at`` (event time), ``expired_at`` (system time)
and ``invalidated_by`` (with the ``invalid_at`` it had before). So after a retirement the graph still
believes the fact held over ``[valid_at, invalid_at)``; what ``expired_at`` records is *when that belief
about its interval changed*. :func:`believed_valid` reads the record that way:

- the fact is unknown before ``created_at``;
- before ``expired_at`` the graph believed the old interval ``[valid_at, previous_invalid_at)``;
- from ``expired_at`` on it believes ``[valid_at, invalid_at)``; an expiry with no ``invalidated_by``
  is a retraction (no longer believed at all).

That makes ``as_of=2020`` alone return what was true in 2020 (per today's knowledge) even when the fact
was retired later, and ``known_at=T`` return what the graph believed at ``T``. ``graph.temporal.matches``
(the stores' ``TimeFilter``) drops every expired fact when ``known_at`` is now, which is right for the
default "current" view (the engine passes that to the store) but would hide all history from an
``as_of`` query, so for time travel the engine asks the store for every fact and applies this predicate.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from ...errors import UsageError
from ..model import Entity, Episode, Fact, check_group_id, check_label, check_relation, to_utc
from ..store import EntityFilter, FactFilter, TimeFilter
from ..temporal import overlaps


def believed_interval(fact: Fact, known_at: datetime) -> tuple[datetime | None, datetime | None] | None:
    """The event-time interval the graph held for ``fact`` at ``known_at``, or ``None`` if it held none."""
    known_at = to_utc(known_at)
    if fact.created_at > known_at:
        return None
    if fact.expired_at is None:
        return fact.valid_at, fact.invalid_at
    if known_at < fact.expired_at:
        before = fact.invalidated_by.previous_invalid_at if fact.invalidated_by else fact.invalid_at
        return fact.valid_at, before
    if fact.invalidated_by is None:
        return None  # expired without a successor: retracted
    return fact.valid_at, fact.invalid_at


def believed_valid(fact: Fact, as_of: datetime, known_at: datetime) -> bool:
    """Whether, as the graph believed at ``known_at``, ``fact`` held at ``as_of`` (see the module doc)."""
    interval = believed_interval(fact, known_at)
    if interval is None:
        return False
    start, end = interval
    t = to_utc(as_of)
    return (start is None or start <= t) and (end is None or t < end)


def valid_during(fact: Fact, start: datetime | None, end: datetime | None) -> bool:
    """Whether the fact's event-time interval overlaps ``[start, end)``."""
    return overlaps(fact.valid_at, fact.invalid_at, start, end)


@dataclass(frozen=True, slots=True)
class Filters:
    """Everything a search is restricted to. Build it with :func:`make_filters` (validates and normalizes)."""

    group_ids: tuple[str, ...]
    as_of: datetime | None = None
    known_at: datetime | None = None
    include_retired: bool = False
    labels: tuple[str, ...] | None = None
    relations: tuple[str, ...] | None = None
    during: tuple[datetime | None, datetime | None] | None = None

    @property
    def time_travel(self) -> bool:
        """True when the engine must filter time itself (see the module docstring)."""
        return not self.include_retired and (self.as_of is not None or self.known_at is not None)

    @property
    def post_filters(self) -> bool:
        """True when hits are dropped after retrieval (so retrievers should fetch more)."""
        return self.time_travel or self.during is not None or self.labels is not None

    def store_time(self) -> TimeFilter:
        if self.include_retired or self.time_travel:
            return TimeFilter(include_retired=True)
        return TimeFilter()

    def fact_filter(self) -> FactFilter:
        return FactFilter(time=self.store_time(), relations=self.relations)

    def entity_filter(self) -> EntityFilter:
        return EntityFilter(labels=self.labels)

    def keep_fact(self, fact: Fact, now: datetime, endpoints: Sequence[Entity | None] = ()) -> bool:
        if self.time_travel:
            as_of = self.as_of if self.as_of is not None else now
            known_at = self.known_at if self.known_at is not None else now
            if not believed_valid(fact, as_of, known_at):
                return False
        if self.during is not None and not valid_during(fact, *self.during):
            return False
        if self.labels is not None and endpoints:
            wanted = set(self.labels)
            if not any(e is not None and not wanted.isdisjoint(e.labels) for e in endpoints):
                return False
        return True

    def keep_episode(self, episode: Episode) -> bool:
        if self.during is None:
            return True
        start, end = self.during
        t = episode.reference_time
        return (start is None or start <= t) and (end is None or t < end)

    def keep_entity(self, entity: Entity) -> bool:
        return self.labels is None or not set(self.labels).isdisjoint(entity.labels)


def _tuple(values: str | Iterable[str] | None, check: object, what: str) -> tuple[str, ...] | None:
    if values is None:
        return None
    items = (values,) if isinstance(values, str) else tuple(values)
    try:
        return tuple(check(v) for v in items)  # type: ignore[operator]
    except ValueError as exc:
        raise UsageError(f"bad {what}: {exc}") from exc


def make_filters(
    group_ids: str | Iterable[str],
    *,
    as_of: datetime | str | None = None,
    known_at: datetime | str | None = None,
    include_retired: bool = False,
    labels: str | Iterable[str] | None = None,
    relations: str | Iterable[str] | None = None,
    during: tuple[datetime | str | None, datetime | str | None] | None = None,
) -> Filters:
    """Validate and normalize (datetimes to UTC; a naive one is read as UTC; ISO strings accepted)."""
    groups = _tuple(group_ids, check_group_id, "group_id") or ()
    if not groups:
        raise UsageError("search needs at least one group_id")
    return Filters(
        group_ids=tuple(dict.fromkeys(groups)),
        as_of=_time(as_of),
        known_at=_time(known_at),
        include_retired=include_retired,
        labels=_tuple(labels, check_label, "label"),
        relations=_tuple(relations, check_relation, "relation"),
        during=None if during is None else (_time(during[0]), _time(during[1])),
    )


def _time(value: datetime | str | None) -> datetime | None:
    if value is None:
        return None
    try:
        result = to_utc(value)
    except ValueError as exc:
        raise UsageError(f"bad time {value!r}: {exc}") from exc
    if not isinstance(result, datetime):
        raise UsageError(f"expected a datetime or an ISO string, got {value!r}")
    return result
