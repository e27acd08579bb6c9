"""What a store filter becomes in a Neo4j statement: the ``$parameters`` of the time (facts and
episodes), relation and label filters (``graph.store.FactFilter``, ``EntityFilter``), and the narrower
fact scans a time filter allows."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ..model import epoch_us, to_utc, utc_now
from ..store import EntityFilter, FactFilter, TimeFilter
from ..temporal import episode_bounds, latest_creation, latest_start
from . import cypher_search as qs


def time_params(flt: TimeFilter, now: datetime) -> dict[str, Any]:
    latest, recorded = latest_start(flt, now), latest_creation(flt, now)
    return {
        "include_retired": flt.include_retired,
        "as_of": now if flt.as_of is None else to_utc(flt.as_of),
        "known_at": now if flt.known_at is None else to_utc(flt.known_at),
        # the bounds the exact fact scans seek (cypher_search.SCAN_FACTS_VECTOR, SCAN_FACTS_KNOWN_VECTOR):
        # facts begun, or recorded, by then; or all of them
        "start_max": qs.KEY_MAX if latest is None else epoch_us(latest),
        "known_from_max": qs.KEY_MAX if recorded is None else epoch_us(recorded),
    }


def narrowings(flt: TimeFilter) -> list[tuple[str, str]]:
    """(count, scan) statements for the fact bounds a search chose (a time, not now; retired facts not
    included): such a filter may pass only a few facts, which the scan then reads (search.vector)."""
    if flt.include_retired:
        return []
    bounds = [
        (flt.as_of, qs.COUNT_FACTS_BEGUN, qs.SCAN_FACTS_VECTOR),
        (flt.known_at, qs.COUNT_FACTS_KNOWN, qs.SCAN_FACTS_KNOWN_VECTOR),
    ]
    return [(count, scan) for chosen, count, scan in bounds if chosen is not None]


def fact_params(flt: FactFilter) -> dict[str, Any]:
    relations = None if flt.relations is None else list(flt.relations)
    return {**time_params(flt.time, utc_now()), "relations": relations}


def entity_params(flt: EntityFilter) -> dict[str, Any]:
    return {"labels": None if flt.labels is None else list(flt.labels)}


def episode_params(flt: TimeFilter) -> dict[str, Any]:
    """The bounds of ``cypher.episode_pred`` (graph.temporal.episode_bounds; null: no bound)."""
    said, stored = episode_bounds(flt)
    return {"said_by": said, "stored_by": stored}
