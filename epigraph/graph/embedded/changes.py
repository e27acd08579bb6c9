"""What changed in a window, read from the embedded store (``ChangeReads.changes``): the facts with a
time in it, the corrections and the forgettings made in it, then the entities and episodes they name
(``graph.changes`` decides which changes these are)."""

from __future__ import annotations

import sqlite3

from ..changes import ChangeRecords, Window, cited
from . import audit
from .codec import decode_correction, decode_episode, decode_fact, to_us
from .reads import _F, _P, IN_LIST, as_json, get_entities

_FACT_TIMES = ("valid_at", "stated_at", "invalid_at", "created_at", "expired_at")
_BEFORE_ALL, _AFTER_ALL = -(2**63), 2**63 - 1


def changes(conn: sqlite3.Connection, group_id: str, window: Window, limit: int) -> ChangeRecords:
    """``ChangeReads.changes`` in one read transaction: a scan of the group's facts for a time in the
    window (no index serves five columns; a window read is a report, not a hot path), its corrections
    by ``corrections_by_time``, its forgettings' audit records by ``forgettings_by_time``, then the
    entities and episodes they name."""
    since = _BEFORE_ALL if window.since is None else to_us(window.since)
    until = _AFTER_ALL if window.until is None else to_us(window.until)
    in_window = " OR ".join(f"(f.{t} >= ? AND f.{t} < ?)" for t in _FACT_TIMES)
    sql = (
        f"SELECT {_F} FROM facts AS f WHERE f.group_id = ? AND ({in_window})"
        " ORDER BY f.created_at, f.uuid LIMIT ?"
    )
    params = [group_id, *[since, until] * len(_FACT_TIMES), max(0, limit) + 1]
    facts = [decode_fact(row) for row in conn.execute(sql, params)]
    sql = (
        "SELECT c.record FROM corrections c WHERE c.group_id = ? AND c.created_at >= ? AND c.created_at < ?"
        " ORDER BY c.created_at, c.uuid LIMIT ?"
    )
    found = [
        decode_correction(row[0]) for row in conn.execute(sql, (group_id, since, until, max(0, limit) + 1))
    ]
    forgot = audit.forgettings_between(conn, group_id, since, until, max(0, limit) + 1)
    truncated = len(facts) > limit or len(found) > limit or len(forgot) > limit
    facts, found, forgot = facts[:limit], found[:limit], forgot[:limit]
    entity_uuids, episode_uuids = cited(facts, found)
    sql = f"SELECT {_P} FROM episodes AS p WHERE p.group_id = ? AND p.uuid IN {IN_LIST}"
    episodes = [decode_episode(row) for row in conn.execute(sql, (group_id, as_json(episode_uuids)))]
    entities = get_entities(conn, group_id, entity_uuids)
    return ChangeRecords(facts, found, entities, episodes, truncated, forgettings=forgot)
