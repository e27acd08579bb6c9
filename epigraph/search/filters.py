"""Search filters: what the caller asked for, and the pure predicates the engine applies after retrieval.

Time travel (``as_of`` / ``known_at``) is the stores' job: :meth:`Filters.store_time` hands them a
:class:`~epigraph.graph.temporal.TimeFilter`, whose docstring (and ``graph.temporal.matches``, its executable
definition) says what a retired fact means at a point in event time and in system time. Both stores apply
it inside their queries, so a time-travelling search ranks exactly the facts valid then and needs no
over-fetch. What is left to the engine: ``during`` (validity overlapping a window) and entity labels of a
fact's endpoints.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from ..errors import UsageError
from ..graph.model import Entity, Episode, Fact, check_group_id, check_label, check_relation, to_utc
from ..graph.store import EntityFilter, FactFilter
from ..graph.temporal import TimeFilter, interval, overlaps


def valid_during(fact: Fact, start: datetime | None, end: datetime | None) -> bool:
    """Whether the fact's event-time interval (``graph.temporal.interval``: an unknown start is when it
    was first stated) overlaps ``[start, end)``."""
    return overlaps(*interval(fact), start, end)


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
    def post_filters(self) -> bool:
        """True when hits are dropped after retrieval (so retrievers should fetch more)."""
        return self.during is not None or self.labels is not None

    def store_time(self) -> TimeFilter:
        """The time filter every store query applies (see the module docstring)."""
        if self.include_retired:
            return TimeFilter(include_retired=True)
        return TimeFilter(as_of=self.as_of, known_at=self.known_at)

    def fact_filter(self) -> FactFilter:
        return FactFilter(time=self.store_time(), relations=self.relations)

    def entity_filter(self) -> EntityFilter:
        return EntityFilter(labels=self.labels, time=self.store_time())

    def keep_fact(self, fact: Fact, endpoints: Sequence[Entity | None] = ()) -> bool:
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
