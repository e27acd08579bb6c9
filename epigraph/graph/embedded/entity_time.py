"""Entities in time in the embedded store: ``graph.entity_time``'s rules over SQLite.

:func:`entity_clause` is :func:`~epigraph.graph.entity_time.entity_exists` in SQL (the entity searches
put it in their queries, beside the labels); the other reads fetch their entities as stored, read the
episodes that mention them (:func:`mentioned`, only when the filter has a bound) and apply
``entity_time.entity_as_of`` and ``mentions_passing``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from ..entity_time import (
    Mentioned,
    bounded,
    by_group,
    entities_as_of,
    hits_then,
    mentions_passing,
    named_then,
)
from ..model import Entity
from ..store import EntityFilter, FactFilter, Hit
from ..temporal import TimeFilter, episode_bounds
from . import reads
from .codec import from_us, to_us
from .reads import IN_LIST, as_json, episode_clause, label_clause


def exists_clause(time: TimeFilter, alias: str = "e") -> tuple[str, list[Any]]:
    """SQL for ``entity_time.entity_exists`` on the entities table aliased ``alias``: recorded by
    ``known_at``, and mentioned by a passing episode, or (mentioned by none) recorded by ``as_of``."""
    said, stored = episode_bounds(time)
    if said is None and stored is None:
        return "1", []
    passing, params = episode_clause(time, "tp")
    unmentioned = f"NOT EXISTS (SELECT 1 FROM mentions tm WHERE tm.entity_id = {alias}.id)"
    if said is not None:
        unmentioned += f" AND {alias}.created_at <= ?"
        params.append(to_us(said))
    sql = (
        f"(EXISTS (SELECT 1 FROM mentions tm JOIN episodes tp ON tp.id = tm.episode_id"
        f" WHERE tm.entity_id = {alias}.id AND {passing}) OR ({unmentioned}))"
    )
    if stored is not None:
        sql += f" AND {alias}.created_at <= ?"
        params.append(to_us(stored))
    return sql, params


def entity_clause(flt: EntityFilter, alias: str = "e") -> tuple[str, list[Any]]:
    """The labels and the time of ``flt`` on the entities table aliased ``alias``."""
    labels, params = label_clause(flt, alias)
    time, more = exists_clause(flt.time, alias)
    return f"{labels} AND {time}", [*params, *more]


def mentioned(conn: sqlite3.Connection, group_id: str, uuids: Sequence[str]) -> dict[str, list[Mentioned]]:
    """The episodes mentioning each of the group's entities ``uuids``, by entity uuid."""
    sql = (
        "SELECT e.uuid, p.reference_time, p.created_at, p.content FROM entities e"
        " JOIN mentions m ON m.entity_id = e.id JOIN episodes p ON p.id = m.episode_id"
        f" WHERE e.group_id = ? AND e.uuid IN {IN_LIST}"
    )
    found: dict[str, list[Mentioned]] = {}
    for uuid, said, recorded, text in conn.execute(sql, (group_id, as_json(sorted(set(uuids))))):
        found.setdefault(uuid, []).append(Mentioned(from_us(said), from_us(recorded), text))  # type: ignore[arg-type]
    return found


def as_of(conn: sqlite3.Connection, group_id: str, entities: list[Entity], time: TimeFilter) -> list[Entity]:
    """``entity_time.entities_as_of`` over the group's ``entities`` (unchanged without a bound)."""
    if not bounded(time) or not entities:
        return entities
    return entities_as_of(entities, mentioned(conn, group_id, [e.uuid for e in entities]), time)


def hits_as_of(conn: sqlite3.Connection, hits: list[Hit[Entity]], time: TimeFilter) -> list[Hit[Entity]]:
    """Entity hits (of any groups) as they were under ``time``."""
    if not bounded(time):
        return hits
    groups = by_group(h.item for h in hits).items()
    then = {(e.group_id, e.uuid): e for g, mine in groups for e in as_of(conn, g, mine, time)}
    return hits_then(hits, then)


def get_entities(
    conn: sqlite3.Connection, group_id: str, uuids: Sequence[str], time: TimeFilter
) -> list[Entity]:
    return as_of(conn, group_id, reads.get_entities(conn, group_id, uuids), time)


def entities_by_names(
    conn: sqlite3.Connection, group_id: str, names: Sequence[str], time: TimeFilter
) -> dict[str, list[Entity]]:
    found = reads.entities_by_names(conn, group_id, names)
    if not bounded(time):
        return found
    unique = list({e.uuid: e for es in found.values() for e in es}.values())
    return named_then(found, {e.uuid: e for e in as_of(conn, group_id, unique, time)})


def neighbours(
    conn: sqlite3.Connection, group_id: str, starts: Sequence[str], depth: int, flt: FactFilter, now: datetime
) -> dict[str, int]:
    """``reads.neighbours``, reaching only the entities that exist under ``flt.time``."""
    if not bounded(flt.time):
        return reads.neighbours(conn, group_id, starts, depth, flt, now)

    def existing(uuids: list[str]) -> set[str]:
        return {e.uuid for e in get_entities(conn, group_id, uuids, flt.time)}

    return reads.neighbours(conn, group_id, starts, depth, flt, now, keep=existing)


def mention_counts(
    conn: sqlite3.Connection, group_id: str, uuids: Sequence[str], time: TimeFilter
) -> dict[str, int]:
    if not bounded(time):
        return reads.mention_counts(conn, group_id, uuids)
    found = mentioned(conn, group_id, uuids)
    return {uuid: mentions_passing(found.get(uuid, ()), time) for uuid in uuids}
