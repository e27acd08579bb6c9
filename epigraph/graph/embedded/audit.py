"""The embedded store's rows of forgetting: the audit records (``forgettings``: a ``ForgetRecord``'s JSON)
and the groups' retention policies (``retention``), read and written (v9)."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from datetime import datetime

from ..forgetting import ForgetRecord, RetentionPolicy
from .codec import from_us, to_us
from .db import Db


def insert_records(conn: sqlite3.Connection, records: Sequence[ForgetRecord]) -> None:
    """Audit records, as they are (a forgetting writes its own; a load writes a dump's)."""
    conn.executemany(
        "INSERT INTO forgettings (group_id, uuid, at, record) VALUES (?, ?, ?, ?)",
        [(r.group_id, r.uuid, to_us(r.at), r.model_dump_json()) for r in records],
    )


def forgettings(conn: sqlite3.Connection, group_id: str, limit: int | None = None) -> list[ForgetRecord]:
    """The group's audit records: the newest ``limit``, newest first; every one, oldest first, without
    a limit (a dump's order)."""
    params: tuple[object, ...] = (group_id,)
    if limit is None:
        sql = "SELECT record FROM forgettings WHERE group_id = ? ORDER BY at, uuid"
    else:
        sql = "SELECT record FROM forgettings WHERE group_id = ? ORDER BY at DESC, uuid DESC LIMIT ?"
        params = (group_id, max(0, limit))
    return [ForgetRecord.model_validate_json(row[0]) for row in conn.execute(sql, params)]


def forgettings_between(
    conn: sqlite3.Connection, group_id: str, since_us: int, until_us: int, limit: int
) -> list[ForgetRecord]:
    """The group's audit records made in ``[since_us, until_us)`` (microseconds), oldest first, at most
    ``limit`` (``forgettings_by_time``): what changed in a window (``reads.changes``)."""
    sql = "SELECT record FROM forgettings WHERE group_id = ? AND at >= ? AND at < ? ORDER BY at, uuid LIMIT ?"
    rows = conn.execute(sql, (group_id, since_us, until_us, limit))
    return [ForgetRecord.model_validate_json(row[0]) for row in rows]


def retention_policies(conn: sqlite3.Connection, group_id: str | None) -> list[RetentionPolicy]:
    sql, params = "SELECT group_id, days, updated_at FROM retention", ()
    if group_id is not None:
        sql, params = sql + " WHERE group_id = ?", (group_id,)  # type: ignore[assignment]
    rows = conn.execute(sql + " ORDER BY group_id", params)
    return [RetentionPolicy(group_id=g, days=d, updated_at=_when(u)) for g, d, u in rows]


def _when(us: int) -> datetime:
    found = from_us(us)
    assert found is not None
    return found


def write_retention(conn: sqlite3.Connection, policy: RetentionPolicy) -> None:
    conn.execute(
        "INSERT OR REPLACE INTO retention (group_id, days, updated_at) VALUES (?, ?, ?)",
        (policy.group_id, policy.days, to_us(policy.updated_at)),
    )


def set_retention(db: Db, policy: RetentionPolicy) -> None:
    with db.write() as conn:
        write_retention(conn, policy)


def clear_retention(db: Db, group_id: str) -> bool:
    with db.write() as conn:
        return conn.execute("DELETE FROM retention WHERE group_id = ?", (group_id,)).rowcount > 0
