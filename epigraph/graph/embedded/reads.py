"""Read queries of the embedded store (run on its SQLite thread).

Lists of uuids, groups, labels or relations travel as ONE JSON-array parameter
(``IN (SELECT value FROM json_each(?))``): any length, no SQL built from data. (SQLite's JSON functions
cut a string at a NUL character; identifiers never hold one, but user text can, so normalized names are
bound as plain parameters instead, see :func:`entities_by_names`.)

Temporal filters are :func:`time_clause`, the SQL transcription of ``graph.temporal.matches``, and
:func:`episode_clause`, of ``graph.temporal.episode_matches``; the contract suite checks every read path
against them.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, TypeVar

from ..corrections import Correction
from ..model import Entity, Episode, EpisodeStatus, Fact, Mention, normalize_name
from ..store import EntityFilter, FactFilter, StoreStats
from ..temporal import CURRENT, TimeFilter, episode_bounds
from . import decisions
from .codec import (
    ENTITIES,
    EPISODES,
    FACTS,
    decode_correction,
    decode_entity,
    decode_episode,
    decode_fact,
    decode_mention,
    to_us,
)

T = TypeVar("T")

IN_LIST = "(SELECT value FROM json_each(?))"
_E = ENTITIES.select("e")
_F = FACTS.select("f")
_P = EPISODES.select("p")


def as_json(values: Sequence[Any]) -> str:
    return json.dumps(list(values))


def time_clause(flt: TimeFilter, now: datetime, alias: str = "f") -> tuple[str, list[Any]]:
    """SQL for ``graph.temporal.matches(fact, flt, now)`` on the facts table aliased ``alias``.

    Known at ``k`` (created by then, not withdrawn: an expiry without ``inv_fact``), and valid at ``t``
    within the interval believed at ``k``: it ends at ``inv_previous`` while a recorded contradiction
    had not arrived yet (``k < expired_at``), else at ``invalid_at``; it starts at ``valid_at``, or for
    an unknown start at ``stated_at`` unless that end is no later (``temporal.start_of``). NULL bounds
    are unbounded.
    """
    if flt.include_retired:
        return "1", []
    t = to_us(now if flt.as_of is None else flt.as_of)
    k = to_us(now if flt.known_at is None else flt.known_at)
    a = alias
    end = (
        f"(CASE WHEN {a}.inv_fact IS NOT NULL AND {a}.expired_at IS NOT NULL AND ? < {a}.expired_at"
        f" THEN {a}.inv_previous ELSE {a}.invalid_at END)"
    )
    sql = (
        f"{a}.created_at <= ?"
        f" AND ({a}.expired_at IS NULL OR {a}.inv_fact IS NOT NULL OR ? < {a}.expired_at)"
        f" AND (CASE WHEN {a}.valid_at IS NOT NULL THEN {a}.valid_at <= ?"
        f" WHEN {a}.stated_at IS NULL OR {a}.stated_at <= ? THEN 1"
        f" ELSE coalesce({end} <= {a}.stated_at, 0) END)"
        f" AND coalesce(? < {end}, 1)"
    )
    return sql, [k, k, t, t, k, t, k]


def episode_clause(flt: TimeFilter, alias: str = "p") -> tuple[str, list[Any]]:
    """SQL for ``graph.temporal.episode_matches(episode, flt)`` on the episodes table aliased ``alias``:
    said by ``as_of``, stored by ``known_at`` (an unset bound is none)."""
    said, stored = episode_bounds(flt)
    bounds = [(f"{alias}.reference_time <= ?", said), (f"{alias}.created_at <= ?", stored)]
    chosen = [(sql, to_us(at)) for sql, at in bounds if at is not None]
    return " AND ".join(sql for sql, _ in chosen) or "1", [at for _, at in chosen]


def fact_clause(flt: FactFilter, now: datetime, alias: str = "f") -> tuple[str, list[Any]]:
    sql, params = time_clause(flt.time, now, alias)
    if flt.relations is not None:
        sql += f" AND {alias}.relation IN {IN_LIST}"
        params.append(as_json(flt.relations))
    return sql, params


def label_clause(flt: EntityFilter, alias: str = "e") -> tuple[str, list[Any]]:
    if flt.labels is None:
        return "1", []
    return (
        f"EXISTS (SELECT 1 FROM json_each({alias}.labels) AS l WHERE l.value IN {IN_LIST})",
        [as_json(flt.labels)],
    )


def in_order(items: list[T], uuids: Sequence[str], key: Callable[[T], str]) -> list[T]:
    """``items`` in the order of ``uuids`` (first occurrence), missing ones skipped."""
    by_uuid = {key(item): item for item in items}
    seen: set[str] = set()
    ordered: list[T] = []
    for uuid in uuids:
        if uuid in by_uuid and uuid not in seen:
            seen.add(uuid)
            ordered.append(by_uuid[uuid])
    return ordered


# --- episodes -----------------------------------------------------------------------------------------


def get_episode(conn: sqlite3.Connection, group_id: str, uuid: str) -> Episode | None:
    row = conn.execute(
        f"SELECT {_P} FROM episodes AS p WHERE p.group_id = ? AND p.uuid = ?", (group_id, uuid)
    ).fetchone()
    return None if row is None else decode_episode(row)


def episodes(
    conn: sqlite3.Connection,
    group_id: str,
    since: datetime | None,
    until: datetime | None,
    status: EpisodeStatus | None,
    limit: int,
    newest_first: bool,
) -> list[Episode]:
    where: list[tuple[str, Any]] = [("group_id = ?", group_id)]
    if since is not None:
        where.append(("reference_time >= ?", to_us(since)))
    if until is not None:
        where.append(("reference_time < ?", to_us(until)))
    return select_episodes(conn, where, status, limit, newest_first)


def select_episodes(
    conn: sqlite3.Connection,
    where: Sequence[tuple[str, Any]],
    status: EpisodeStatus | None,
    limit: int,
    newest_first: bool,
) -> list[Episode]:
    """The episodes passing every ``(condition with one ?, value)`` of ``where`` (and of ``status``), in
    the group's episode order (reference_time, created_at, uuid; reversed with ``newest_first``)."""
    conditions = [*where, *([("status = ?", EpisodeStatus(status).value)] if status is not None else [])]
    sql = f"SELECT {_P} FROM episodes AS p WHERE " + " AND ".join(f"p.{c}" for c, _ in conditions)
    direction = "DESC" if newest_first else "ASC"
    sql += f" ORDER BY p.reference_time {direction}, p.created_at {direction}, p.uuid {direction} LIMIT ?"
    params = [value for _, value in conditions] + [max(0, limit)]
    return [decode_episode(row) for row in conn.execute(sql, params)]


# The group's episode order is (reference_time, created_at, uuid); `episodes_by_time` covers the first two,
# so each side is an index range read that stops after `window` rows (uuid only sorts exact ties). Only the
# episodes passing the time filter (`episode_clause`, the `{}` below) count as neighbours.
_BEFORE = (
    "SELECT p.id FROM episodes AS p WHERE p.group_id = ? AND p.reference_time <= ?"
    " AND (p.reference_time < ? OR p.created_at < ? OR (p.created_at = ? AND p.uuid < ?)) AND {}"
    " ORDER BY p.reference_time DESC, p.created_at DESC, p.uuid DESC LIMIT ?"
)
_AFTER = (
    "SELECT p.id FROM episodes AS p WHERE p.group_id = ? AND p.reference_time >= ?"
    " AND (p.reference_time > ? OR p.created_at > ? OR (p.created_at = ? AND p.uuid > ?)) AND {}"
    " ORDER BY p.reference_time, p.created_at, p.uuid LIMIT ?"
)


def episodes_around(
    conn: sqlite3.Connection, group_id: str, uuids: Sequence[str], window: int, time: TimeFilter = CURRENT
) -> list[Episode]:
    if window <= 0:
        return []
    keys = conn.execute(
        f"SELECT id, reference_time, created_at, uuid FROM episodes WHERE group_id = ? AND uuid IN {IN_LIST}",
        (group_id, as_json(uuids)),
    ).fetchall()
    condition, params = episode_clause(time)
    ids: set[int] = set()
    for _, at, created, uuid in keys:
        for sql in (_BEFORE, _AFTER):
            bound = (group_id, at, at, created, created, uuid, *params, window)
            ids.update(r[0] for r in conn.execute(sql.format(condition), bound))
    ids -= {row[0] for row in keys}
    sql = (
        f"SELECT {_P} FROM episodes AS p WHERE p.id IN {IN_LIST}"
        " ORDER BY p.reference_time, p.created_at, p.uuid"
    )
    return [decode_episode(row) for row in conn.execute(sql, (as_json(sorted(ids)),))]


def episodes_mentioning(
    conn: sqlite3.Connection, group_id: str, entity_uuid: str, limit: int, time: TimeFilter = CURRENT
) -> list[Episode]:
    condition, params = episode_clause(time)
    sql = (
        f"SELECT {_P} FROM entities e JOIN mentions m ON m.entity_id = e.id"
        " JOIN episodes p ON p.id = m.episode_id"
        f" WHERE e.group_id = ? AND e.uuid = ? AND {condition}"
        " ORDER BY p.reference_time DESC, p.created_at DESC, p.uuid DESC LIMIT ?"
    )
    bound = (group_id, entity_uuid, *params, max(0, limit))
    return [decode_episode(row) for row in conn.execute(sql, bound)]


# --- entities and facts by key ------------------------------------------------------------------------


def get_entities(conn: sqlite3.Connection, group_id: str, uuids: Sequence[str]) -> list[Entity]:
    sql = f"SELECT {_E} FROM entities AS e WHERE e.group_id = ? AND e.uuid IN {IN_LIST}"
    found = [decode_entity(row) for row in conn.execute(sql, (group_id, as_json(uuids)))]
    return in_order(found, uuids, lambda e: e.uuid)


def get_facts(conn: sqlite3.Connection, group_id: str, uuids: Sequence[str]) -> list[Fact]:
    sql = f"SELECT {_F} FROM facts AS f WHERE f.group_id = ? AND f.uuid IN {IN_LIST}"
    found = [decode_fact(row) for row in conn.execute(sql, (group_id, as_json(uuids)))]
    return in_order(found, uuids, lambda f: f.uuid)


def entities_by_names(
    conn: sqlite3.Connection, group_id: str, names: Sequence[str]
) -> dict[str, list[Entity]]:
    """Entities whose normalized name or alias equals each name's normalized form.

    Normalized names are user text (they may hold a NUL, which SQLite's JSON functions cut), so they
    are bound as plain parameters, a chunk at a time, instead of through ``json_each``.
    """
    norms = {name: normalize_name(name) for name in names}
    distinct = sorted(set(norms.values()))
    by_norm: dict[str, list[Entity]] = {}
    for start in range(0, len(distinct), _CHUNK):
        chunk = distinct[start : start + _CHUNK]
        sql = (
            f"SELECT n.norm, {_E} FROM entity_names n JOIN entities e ON e.id = n.entity_id"
            f" WHERE n.group_id = ? AND n.norm IN ({', '.join('?' * len(chunk))})"
            " ORDER BY e.created_at, e.uuid"
        )
        for row in conn.execute(sql, (group_id, *chunk)):
            by_norm.setdefault(row[0], []).append(decode_entity(row[1:]))
    return {name: list(by_norm.get(norm, [])) for name, norm in norms.items()}


_CHUNK = 500


# --- graph neighbourhood ------------------------------------------------------------------------------

_IDS = f"(SELECT id FROM entities WHERE group_id = ? AND uuid IN {IN_LIST})"
TOUCHES = f"(f.source_id IN {_IDS} OR f.target_id IN {_IDS})"
"""Facts with an endpoint among the group's entities with the given uuids; params: group, uuids, twice."""
_ID = "(SELECT id FROM entities WHERE group_id = ? AND uuid = ?)"


def facts_between(
    conn: sqlite3.Connection, group_id: str, a: str, b: str, flt: FactFilter, now: datetime
) -> list[Fact]:
    clause, params = fact_clause(flt, now)
    sql = (
        f"SELECT {_F} FROM facts f WHERE ((f.source_id = {_ID} AND f.target_id = {_ID})"
        f" OR (f.source_id = {_ID} AND f.target_id = {_ID})) AND {clause} ORDER BY f.created_at DESC, f.uuid"
    )
    g = group_id
    return [decode_fact(row) for row in conn.execute(sql, (g, a, g, b, g, b, g, a, *params))]


def facts_around(
    conn: sqlite3.Connection, group_id: str, uuids: Sequence[str], flt: FactFilter, limit: int, now: datetime
) -> list[Fact]:
    clause, params = fact_clause(flt, now)
    sql = f"SELECT {_F} FROM facts f WHERE {TOUCHES} AND {clause} ORDER BY f.created_at DESC, f.uuid LIMIT ?"
    ids = as_json(uuids)
    return [
        decode_fact(row) for row in conn.execute(sql, (group_id, ids, group_id, ids, *params, max(0, limit)))
    ]


def neighbours(
    conn: sqlite3.Connection, group_id: str, starts: Sequence[str], depth: int, flt: FactFilter,
    now: datetime, keep: Callable[[list[str]], set[str]] | None = None,
) -> dict[str, int]:  # fmt: skip
    """Breadth-first over facts passing ``flt``, one query per hop; start entities are not listed;
    ``keep``: of each hop's entities, those reached (``entity_time.neighbours``: the ones that exist)."""
    clause, params = fact_clause(flt, now)
    sql = f"SELECT f.source_uuid, f.target_uuid FROM facts f WHERE {TOUCHES} AND {clause}"
    seen = set(starts)
    frontier = list(seen)
    distances: dict[str, int] = {}
    for hop in range(1, depth + 1):
        if not frontier:
            break
        ids = as_json(frontier)
        reached: list[str] = []
        for source, target in conn.execute(sql, (group_id, ids, group_id, ids, *params)):
            for uuid in (source, target):
                if uuid not in seen:
                    seen.add(uuid)
                    distances[uuid] = hop
                    reached.append(uuid)
        if keep is not None and reached:
            kept = keep(reached)
            for uuid in reached:
                if uuid not in kept:
                    del distances[uuid]
            reached = [u for u in reached if u in kept]
        frontier = reached
    return distances


def mention_counts(conn: sqlite3.Connection, group_id: str, uuids: Sequence[str]) -> dict[str, int]:
    """Mentions per entity; every requested uuid is a key (0 when never mentioned)."""
    sql = (
        "SELECT e.uuid, COUNT(*) FROM entities e JOIN mentions m ON m.entity_id = e.id"
        f" WHERE e.group_id = ? AND e.uuid IN {IN_LIST} GROUP BY e.uuid"
    )
    counts = dict.fromkeys(uuids, 0)
    counts.update({uuid: int(n) for uuid, n in conn.execute(sql, (group_id, as_json(uuids)))})
    return counts


def mentions(conn: sqlite3.Connection, group_id: str, uuids: Sequence[str]) -> list[Mention]:
    """The mentions of the group's entities ``uuids``, by episode uuid then entity uuid."""
    sql = (
        "SELECT p.uuid, e.uuid FROM entities e JOIN mentions m ON m.entity_id = e.id"
        f" JOIN episodes p ON p.id = m.episode_id WHERE e.group_id = ? AND e.uuid IN {IN_LIST}"
        " ORDER BY p.uuid, e.uuid"
    )
    return [decode_mention(group_id, ep, en) for ep, en in conn.execute(sql, (group_id, as_json(uuids)))]


# --- corrections and groups -----------------------------------------------------------------------------


def corrections(conn: sqlite3.Connection, group_id: str, subject: str | None, limit: int) -> list[Correction]:
    sql, params = "SELECT c.record FROM corrections c WHERE c.group_id = ?", [group_id]
    if subject is not None:
        sql += " AND c.id IN (SELECT correction_id FROM correction_subjects WHERE subject = ?)"
        params.append(subject)
    sql += " ORDER BY c.created_at DESC, c.uuid DESC LIMIT ?"
    return [decode_correction(row[0]) for row in conn.execute(sql, (*params, max(0, limit)))]


def get_correction(conn: sqlite3.Connection, group_id: str, uuid: str) -> Correction | None:
    sql = "SELECT record FROM corrections WHERE group_id = ? AND uuid = ?"
    row = conn.execute(sql, (group_id, uuid)).fetchone()
    return None if row is None else decode_correction(row[0])


def groups(conn: sqlite3.Connection) -> list[str]:
    sql = (
        "SELECT group_id FROM episodes UNION SELECT group_id FROM entities"
        " UNION SELECT group_id FROM corrections UNION SELECT group_id FROM forgettings ORDER BY 1"
    )
    return [row[0] for row in conn.execute(sql)]


# --- stats --------------------------------------------------------------------------------------------


def stats(conn: sqlite3.Connection, group_id: str | None, now: datetime) -> StoreStats:
    current, current_params = time_clause(TimeFilter(), now)
    scope, scope_params = ("f.group_id = ?", [group_id]) if group_id is not None else ("1", [])

    def count(source: str, condition: str = "1", params: Sequence[Any] = ()) -> int:
        sql = f"SELECT COUNT(*) FROM {source} WHERE {condition} AND {scope}"
        return int(conn.execute(sql, [*params, *scope_params]).fetchone()[0])

    records, size = decisions.counts(conn, group_id)
    return StoreStats(
        episodes=count("episodes AS f"),
        entities=count("entities AS f"),
        facts=count("facts AS f"),
        current_facts=count("facts AS f", current, current_params),
        mentions=count("mentions AS m JOIN episodes AS f ON f.id = m.episode_id"),
        owed_summaries=count("owed_summaries AS o JOIN entities AS f ON f.id = o.entity_id"),
        decision_records=records,
        decision_bytes=size,
    )
