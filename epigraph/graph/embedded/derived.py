"""Derived records in the embedded store: communities, conversation chains and their summaries.

Run on the store's SQLite thread like ``reads`` and ``writes``. Communities are few (tens to hundreds per
group), so a community's embedding lives in its own row and is read with it; a community search ranks
them in memory (``search.communities``).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from ..derived import Community, ConversationSummary, chain_key, stored_summary
from ..model import Episode
from ..store import Chain, ChainRead, FactFilter, check_communities, unknown_member
from .codec import EPISODES, from_blob, from_us, to_blob, to_us, to_us_or_none
from .db import Db
from .reads import IN_LIST, as_json, fact_clause, select_episodes

_P = EPISODES.select("p")


def fact_endpoints(
    conn: sqlite3.Connection, group_id: str, flt: FactFilter, now: datetime
) -> list[tuple[str, str]]:
    clause, params = fact_clause(flt, now)
    sql = f"SELECT f.source_uuid, f.target_uuid FROM facts f WHERE f.group_id = ? AND {clause}"
    return [(s, t) for s, t in conn.execute(sql, (group_id, *params))]


# --- communities --------------------------------------------------------------------------------------

_COMMUNITY_COLUMNS = ("uuid", "group_id", "name", "summary", "embedding", "summarized", "created_at",
                      "updated_at")  # fmt: skip
_MEMBERS = (
    "SELECT json_group_array(e.uuid) FROM community_members m JOIN entities e ON e.id = m.entity_id"
    " WHERE m.community_id = c.id"
)


def communities(conn: sqlite3.Connection, group_id: str) -> list[Community]:
    cols = ", ".join(f"c.{c}" for c in _COMMUNITY_COLUMNS)
    rows = conn.execute(f"SELECT {cols}, ({_MEMBERS}) FROM communities c WHERE c.group_id = ?", (group_id,))
    found = []
    for row in rows:
        r = dict(zip((*_COMMUNITY_COLUMNS, "members"), row, strict=True))
        members = sorted(json.loads(r["members"]))
        if not members:
            continue
        found.append(
            Community.model_construct(
                uuid=r["uuid"],
                group_id=r["group_id"],
                name=r["name"],
                summary=r["summary"],
                members=members,
                embedding=from_blob(r["embedding"]),
                summarized=r["summarized"],
                created_at=from_us(r["created_at"]),
                updated_at=from_us(r["updated_at"]),
            )
        )
    return sorted(found, key=lambda c: (-len(c.members), c.name, c.uuid))


_UPSERT_COMMUNITY = (
    "INSERT INTO communities (uuid, group_id, name, summary, embedding, summarized, created_at, updated_at)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (group_id, uuid) DO UPDATE SET name = excluded.name,"
    " summary = excluded.summary, embedding = excluded.embedding, summarized = excluded.summarized,"
    " created_at = excluded.created_at, updated_at = excluded.updated_at RETURNING id"
)
_INSERT_MEMBERS = (
    "INSERT INTO community_members (community_id, entity_id)"
    f" SELECT ?, e.id FROM entities e WHERE e.group_id = ? AND e.uuid IN {IN_LIST}"
)


def replace_communities(db: Db, group_id: str, items: Sequence[Community]) -> None:
    check_communities(group_id, items)
    with db.write() as conn:
        write_communities(db, conn, group_id, items)


def write_communities(db: Db, conn: sqlite3.Connection, group_id: str, items: Sequence[Community]) -> None:
    """Inside a write: make ``items`` the group's communities (a load writes them this way too)."""
    db.check_vectors([c.embedding for c in items])
    members = sorted({m for c in items for m in c.members})
    known = {
        row[0]
        for row in conn.execute(
            f"SELECT uuid FROM entities WHERE group_id = ? AND uuid IN {IN_LIST}",
            (group_id, as_json(members)),
        )
    }
    missing = [m for m in members if m not in known]
    if missing:
        raise unknown_member(group_id, missing[0])
    conn.execute(
        f"DELETE FROM communities WHERE group_id = ? AND uuid NOT IN {IN_LIST}",
        (group_id, as_json([c.uuid for c in items])),
    )
    conn.execute(
        "DELETE FROM community_members WHERE community_id IN (SELECT id FROM communities WHERE group_id = ?)",
        (group_id,),
    )
    for c in items:
        row: Any = conn.execute(_UPSERT_COMMUNITY, _community_row(c)).fetchone()
        conn.execute(_INSERT_MEMBERS, (row[0], group_id, as_json(c.members)))


def _community_row(c: Community) -> tuple[Any, ...]:
    return (c.uuid, c.group_id, c.name, c.summary, to_blob(c.embedding), c.summarized,
            to_us(c.created_at), to_us(c.updated_at))  # fmt: skip


# --- chains -------------------------------------------------------------------------------------------


def chains(conn: sqlite3.Connection, group_id: str) -> list[Chain]:
    sql = (
        "SELECT source_description, count(*), min(reference_time), max(reference_time) FROM episodes"
        " WHERE group_id = ? AND source_description <> '' GROUP BY source_description"
    )
    found = [
        Chain(key, int(n), _time(first), _time(last))
        for key, n, first, last in conn.execute(sql, (group_id,))
        if chain_key(key) is not None
    ]
    return sorted(found, key=lambda c: c.key)


def _time(value: int) -> datetime:
    found = from_us(value)
    assert found is not None
    return found


def chain_episodes(conn: sqlite3.Connection, group_id: str, key: str, read: ChainRead) -> list[Episode]:
    where: list[tuple[str, Any]] = [("group_id = ?", group_id), ("source_description = ?", key)]
    if read.recorded_after is not None:
        where.append(("created_at > ?", to_us(read.recorded_after)))
    return select_episodes(conn, where, read.status, read.limit, read.newest_first)


# --- conversation summaries ---------------------------------------------------------------------------

_SUMMARY_COLUMNS = ("group_id", "key", "summary", "episodes", "first_at", "last_at", "covered_until",
                    "version", "updated_at")  # fmt: skip


def conversation_summaries(
    conn: sqlite3.Connection, group_id: str, keys: Sequence[str] | None
) -> list[ConversationSummary]:
    sql = f"SELECT {', '.join(_SUMMARY_COLUMNS)} FROM conversation_summaries WHERE group_id = ?"
    params: list[Any] = [group_id]
    if keys is not None:
        # keys are user text: bound one by one, not through json_each (which cuts a string at a NUL)
        wanted = sorted(set(keys))
        if not wanted:
            return []
        sql += f" AND key IN ({', '.join('?' * len(wanted))})"
        params += wanted
    rows = (dict(zip(_SUMMARY_COLUMNS, row, strict=True)) for row in conn.execute(sql, params))
    found = [stored_summary(row, from_us) for row in rows]
    return sorted(found, key=lambda s: s.key)


def save_conversation_summary(db: Db, summary: ConversationSummary) -> bool:
    with db.write() as conn:
        row = conn.execute(
            "SELECT version FROM conversation_summaries WHERE group_id = ? AND key = ?",
            (summary.group_id, summary.key),
        ).fetchone()
        if (0 if row is None else int(row[0])) != summary.version - 1:
            return False
        write_summary(conn, summary)
    return True


def write_summary(conn: sqlite3.Connection, s: ConversationSummary) -> None:
    """Inside a write: store the summary as it is (a load writes them this way too)."""
    times = (to_us_or_none(s.first_at), to_us_or_none(s.last_at), to_us_or_none(s.covered_until))
    values = (s.group_id, s.key, s.summary, s.episodes, *times, s.version, to_us(s.updated_at))
    conn.execute(
        f"INSERT OR REPLACE INTO conversation_summaries ({', '.join(_SUMMARY_COLUMNS)})"
        f" VALUES ({', '.join('?' * len(_SUMMARY_COLUMNS))})",
        values,
    )


def owed_summaries(conn: sqlite3.Connection, group_id: str) -> list[str]:
    sql = (
        "SELECT e.uuid FROM owed_summaries AS o JOIN entities AS e ON e.id = o.entity_id"
        " WHERE e.group_id = ? ORDER BY e.uuid"
    )
    return [row[0] for row in conn.execute(sql, (group_id,))]
