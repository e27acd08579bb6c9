"""Derived records on Neo4j: communities (one write transaction per replacement), chains, and
conversation summaries (a compare-and-set on ``version`` under the summary node's write lock).
Statements: ``cypher_derived``. Their writes take the group's lock first (``cypher.LOCK_GROUP``), so a
dump (``groups``) reads them whole."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

import neo4j

from ...errors import StoreError
from ..derived import Community, ConversationSummary, chain_key, stored_summary
from ..model import Episode, EpisodeStatus, to_utc
from ..store import Chain, ChainRead, check_communities, unknown_member
from . import convert
from . import cypher as q
from . import cypher_derived as qd
from .connection import Connection


async def fact_endpoints(conn: Connection, group_id: str, params: dict[str, Any]) -> list[tuple[str, str]]:
    records = await conn.read(qd.FACT_ENDPOINTS, {"group_id": group_id, **params}, what="fact_endpoints")
    return [(r["source"], r["target"]) for r in records]


async def communities(conn: Connection, group_id: str) -> list[Community]:
    return communities_from(await conn.read(qd.COMMUNITIES, {"group_id": group_id}, what="communities"))


def communities_from(records: Iterable[Any]) -> list[Community]:
    """The communities of ``qd.COMMUNITIES``' records (those left without members skipped), ordered."""
    found = []
    for record in records:
        members = sorted(record["members"])
        if not members:
            continue
        c = record["c"]
        found.append(
            Community.model_construct(
                uuid=c["uuid"],
                group_id=c["group_id"],
                name=c["name"],
                summary=c.get("summary", ""),
                members=members,
                embedding=None if c.get("embedding") is None else [float(x) for x in c["embedding"]],
                summarized=c.get("summarized", ""),
                created_at=convert.from_micros(c["created_at"]),
                updated_at=convert.from_micros(c["updated_at"]),
            )
        )
    return sorted(found, key=lambda x: (-len(x.members), x.name, x.uuid))


def _community_row(c: Community) -> dict[str, Any]:
    props = {
        "name": c.name,
        "summary": c.summary,
        "summarized": c.summarized,
        "embedding": None if c.embedding is None else convert.Vector(c.embedding),
    }
    return {"uuid": c.uuid, "members": list(c.members), "props": props,
            "created_at": convert.iso(c.created_at), "updated_at": convert.iso(c.updated_at)}  # fmt: skip


async def replace_communities(
    conn: Connection, group_id: str, items: Sequence[Community], dim: int | None
) -> None:
    check_communities(group_id, items)
    for c in items:
        if c.embedding is not None and dim is not None and len(c.embedding) != dim:
            raise StoreError(f"embedding of dimension {len(c.embedding)}; this store holds dimension {dim}")

    async def work(tx: neo4j.AsyncManagedTransaction) -> None:
        await (await tx.run(q.LOCK_GROUP, {"group_id": group_id})).consume()
        await write_communities(tx, group_id, items)

    await conn.write(work, what="replace_communities")


async def write_communities(
    tx: neo4j.AsyncManagedTransaction, group_id: str, items: Sequence[Community]
) -> None:
    """Inside a write: make ``items`` the group's communities (a load writes them this way too)."""
    rows = [_community_row(c) for c in items]
    members = sorted({m for c in items for m in c.members})
    params = {"group_id": group_id, "uuids": [c.uuid for c in items]}
    result = await tx.run(qd.MISSING_MEMBERS, {"group_id": group_id, "uuids": members})
    missing = (await result.single(strict=True))["missing"]
    if missing:
        raise unknown_member(group_id, missing[0])
    await (await tx.run(qd.DELETE_OTHER_COMMUNITIES, params)).consume()
    await (await tx.run(qd.DROP_MEMBERSHIPS, params)).consume()
    await (await tx.run(qd.UPSERT_COMMUNITIES, {"group_id": group_id, "rows": rows})).consume()


async def chains(conn: Connection, group_id: str) -> list[Chain]:
    records = await conn.read(qd.CHAINS, {"group_id": group_id}, what="chains")
    found = [
        Chain(r["key"], int(r["episodes"]), *map(convert.from_micros, (r["first_at"], r["last_at"])))
        for r in records
        if chain_key(r["key"]) is not None
    ]
    return sorted(found, key=lambda c: c.key)


async def chain_episodes(conn: Connection, group_id: str, key: str, read: ChainRead) -> list[Episode]:
    if read.limit <= 0:
        return []
    params = {
        "group_id": group_id,
        "key": key,
        "recorded_after": None if read.recorded_after is None else to_utc(read.recorded_after),
        "status": None if read.status is None else EpisodeStatus(read.status).value,
        "limit": read.limit,
    }
    statement = qd.CHAIN_EPISODES_NEWEST if read.newest_first else qd.CHAIN_EPISODES_OLDEST
    return [convert.episode_from(r["ep"]) for r in await conn.read(statement, params, what="chain_episodes")]


async def conversation_summaries(
    conn: Connection, group_id: str, keys: Sequence[str] | None
) -> list[ConversationSummary]:
    params = {"group_id": group_id, "keys": None if keys is None else sorted(set(keys))}
    return summaries_from(await conn.read(qd.CONVERSATIONS, params, what="conversation_summaries"))


def summaries_from(records: Iterable[Any]) -> list[ConversationSummary]:
    """The summaries of ``qd.CONVERSATIONS``' records, by key."""
    # a lock taken by a writer that rolled back never commits; nothing else has version 0
    found = [stored_summary(r["s"], _micros) for r in records if r["s"].get("version")]
    return sorted(found, key=lambda x: x.key)


def _micros(value: int | None) -> datetime | None:
    return None if value is None else convert.from_micros(value)


class _Conflict(Exception):
    """Another writer stored this version first: the transaction is rolled back."""


def summary_params(summary: ConversationSummary) -> dict[str, Any]:
    """``qd.SAVE_CONVERSATION``'s parameters."""
    return {
        "group_id": summary.group_id,
        "key": summary.key,
        "props": {"summary": summary.summary, "episodes": summary.episodes, "version": summary.version},
        "first_at": convert.iso(summary.first_at),
        "last_at": convert.iso(summary.last_at),
        "covered_until": convert.iso(summary.covered_until),
        "updated_at": convert.iso(summary.updated_at),
    }


async def save_conversation_summary(conn: Connection, summary: ConversationSummary) -> bool:
    key = {"group_id": summary.group_id, "key": summary.key}
    params = summary_params(summary)

    async def work(tx: neo4j.AsyncManagedTransaction) -> None:
        await (await tx.run(q.LOCK_GROUP, key)).consume()
        stored = (await (await tx.run(qd.LOCK_CONVERSATION, key)).single(strict=True))["version"]
        if int(stored or 0) != summary.version - 1:
            raise _Conflict
        await (await tx.run(qd.SAVE_CONVERSATION, params)).consume()

    try:
        await conn.write(work, what="save_conversation_summary")
    except _Conflict:
        return False
    return True


async def owed_summaries(conn: Connection, group_id: str) -> list[str]:
    found = await conn.read(q.OWED_SUMMARIES, {"group_id": group_id}, what="owed_summaries")
    return [str(record["uuid"]) for record in found]
