"""Decision records in the embedded store (``graph.decisions``, schema v11): written in an episode's
transaction (``writes.write_episode``) or a load's, read by episode and by name, dumped, counted.

A record is one row of ``decision_records`` keyed by its episode's row id (gone with the episode), its
JSON as ``DecisionRecord.to_json`` makes it; ``decision_names`` holds the normalized names its name steps
are about. Writing an episode's record again (a retried run) replaces it.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime

from ..decisions import DecisionRecord, in_order
from ..model import normalize_name
from .codec import to_us

_EPISODE_ID = "SELECT id FROM episodes WHERE group_id = ? AND uuid = ?"
_UPSERT = (
    "INSERT INTO decision_records (episode_id, group_id, created_at, version, record) VALUES (?, ?, ?, ?, ?)"
    " ON CONFLICT (episode_id) DO UPDATE SET created_at = excluded.created_at,"
    " version = excluded.version, record = excluded.record"
)
_FORGET = "DELETE FROM decision_records WHERE group_id = ? AND created_at < ?"
_COLUMNS = "d.record, d.group_id, p.uuid, d.version"
_BY_EPISODES = (
    f"SELECT {_COLUMNS} FROM decision_records d JOIN episodes p ON p.id = d.episode_id"
    " WHERE p.group_id = ? AND p.uuid IN (SELECT value FROM json_each(?)) ORDER BY d.created_at, p.uuid"
)
_NAMING = (
    f"SELECT {_COLUMNS} FROM decision_names n JOIN decision_records d ON d.episode_id = n.episode_id"
    " JOIN episodes p ON p.id = d.episode_id WHERE n.group_id = ? AND n.norm = ?"
    " ORDER BY d.created_at DESC LIMIT ?"
)
_OF_GROUP = (
    f"SELECT {_COLUMNS} FROM decision_records d JOIN episodes p ON p.id = d.episode_id"
    " WHERE d.group_id = ? ORDER BY d.created_at, p.uuid"
)
_COUNT = "SELECT COUNT(*), COALESCE(SUM(LENGTH(CAST(record AS BLOB))), 0) FROM decision_records"


def write_records(conn: sqlite3.Connection, records: Sequence[DecisionRecord]) -> None:
    """Store each record with its episode (already written in this transaction): replaced if it had one."""
    for record in records:
        row = conn.execute(_EPISODE_ID, (record.group_id, record.episode_uuid)).fetchone()
        if row is None:
            continue  # not this store's episode: a record is kept only with its episode
        episode_id = row[0]
        conn.execute(
            _UPSERT, (episode_id, record.group_id, to_us(record.created_at), record.version, record.to_json())
        )
        conn.execute("DELETE FROM decision_names WHERE episode_id = ?", (episode_id,))
        conn.executemany(
            "INSERT INTO decision_names (group_id, norm, episode_id) VALUES (?, ?, ?)",
            [(record.group_id, norm, episode_id) for norm in record.names()],
        )


def forget_before(conn: sqlite3.Connection, group_id: str, before: datetime) -> None:
    """The retention: the group's records made before ``before`` deleted (their names with them)."""
    conn.execute(_FORGET, (group_id, to_us(before)))


def _decoded(rows: Iterable[tuple[str, str, str, int]]) -> list[DecisionRecord]:
    return [
        DecisionRecord.from_json(record, group_id=group_id, episode_uuid=uuid, version=version)
        for record, group_id, uuid, version in rows
    ]


def records_of(conn: sqlite3.Connection, group_id: str, episode_uuids: Sequence[str]) -> list[DecisionRecord]:
    found = _decoded(conn.execute(_BY_EPISODES, (group_id, json.dumps(list(episode_uuids)))))
    return in_order(found, episode_uuids)


def records_naming(conn: sqlite3.Connection, group_id: str, name: str, limit: int) -> list[DecisionRecord]:
    return _decoded(conn.execute(_NAMING, (group_id, normalize_name(name), limit)))


def group_records(conn: sqlite3.Connection, group_id: str) -> Iterator[DecisionRecord]:
    """The group's records in the order they were made (a dump's)."""
    yield from _decoded(conn.execute(_OF_GROUP, (group_id,)))


def counts(conn: sqlite3.Connection, group_id: str | None) -> tuple[int, int]:
    """(records, their bytes as stored) of the group, or of every group."""
    if group_id is None:
        row = conn.execute(_COUNT).fetchone()
    else:
        row = conn.execute(_COUNT + " WHERE group_id = ?", (group_id,)).fetchone()
    return int(row[0]), int(row[1])
