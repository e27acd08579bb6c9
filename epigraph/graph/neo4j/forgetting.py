"""Forgetting on Neo4j: the one write transaction, the audit records and the retention policies.

:func:`forget_tx` takes the group's lock first (``cypher.LOCK_GROUP``: every writer of the group waits,
and a dump sees the forgetting whole or not at all), reads the group as a dump does, plans the request
over it (``graph.forget_plan``), refuses a plan that is not the preview's, and writes it. Neo4j keeps
no copy a query can reach of a deleted or overwritten property; its transaction logs and store files
keep the old bytes until Neo4j rotates and reuses them (see docs/decisions/2026-12-01-forgetting.md).
The audit records' and the retention policies' reads and writes are here too (``Neo4jStore``'s
``forgettings``, ``retention_policies``, ``set_retention``, ``clear_retention``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import neo4j

from ...errors import ConflictError
from ..forget_plan import plan_forgetting
from ..forget_planner import Kind
from ..forgetting import ForgetOutcome, ForgetRecord, ForgetRequest, ForgetWrite, RetentionPolicy
from ..store import DumpItem
from . import convert, decisions, derived, vault
from . import cypher as q
from . import cypher_decisions as qdec
from . import cypher_derived as qd
from . import cypher_edit as qe
from . import cypher_forget as qf
from . import cypher_vault as qv
from .connection import Connection
from .corrections import create_corrections, records
from .writing import rows_of, write_rows


async def forget_tx(
    tx: neo4j.AsyncManagedTransaction, request: ForgetRequest, items: Sequence[DumpItem]
) -> ForgetOutcome:
    """The forgetting in ``tx``, the group's lock held and its records ``items`` read under it."""
    group_id = request.group_id
    held = vault.held_from(await records(tx, qv.ROWS, {"group_id": group_id}))
    plan = plan_forgetting(items, request, held)
    if request.expect is not None and plan.digest != request.expect:
        raise ConflictError(
            "the group changed since the forgetting was previewed; nothing was written (preview it again)"
        )
    write = plan.with_vectors(await _stored_vectors(tx, group_id, plan.rewritten()), request.vectors)
    await _write(tx, write)
    assert write.record is not None
    return ForgetOutcome(
        record=write.record,
        owed=write.owed,
        conversations=plan.conversations,
        communities_stale=bool(plan.ids["communities_rewritten"]),
    )


async def _stored_vectors(
    tx: neo4j.AsyncManagedTransaction, group_id: str, rewritten: dict[Kind, list[str]]
) -> dict[tuple[Kind, str], list[float] | None]:
    key = {"group_id": group_id}
    found: dict[tuple[Kind, str], list[float] | None] = {}
    for row in await records(tx, qf.GET_EPISODES, {**key, "uuids": rewritten["episode"]}):
        episode = convert.episode_from(row["ep"])
        found["episode", episode.uuid] = episode.content_embedding
    for row in await records(tx, q.GET_ENTITIES, {**key, "uuids": rewritten["entity"]}):
        entity = convert.entity_from(row["e"])
        found["entity", entity.uuid] = entity.name_embedding
    for row in await records(tx, q.GET_FACTS, {**key, "uuids": rewritten["fact"]}):
        fact = convert.fact_from(row["fact"])
        found["fact", fact.uuid] = fact.text_embedding
    for community in derived.communities_from(await records(tx, qd.COMMUNITIES, key)):
        found["community", community.uuid] = community.embedding
    return found


async def _write(tx: neo4j.AsyncManagedTransaction, write: ForgetWrite) -> None:
    group_id = write.group_id
    key = {"group_id": group_id}
    replaced = [*write.delete_corrections, *(c.uuid for c in write.corrections)]
    for statement, params in (
        (qe.DELETE_FACTS, {"uuids": list(write.delete_facts)}),
        (qe.DELETE_ENTITIES, {"uuids": list(write.delete_entities)}),
        (qf.DELETE_EPISODES, {"uuids": list(write.delete_episodes)}),
        (qdec.DELETE_EPISODES_DECISIONS, {"uuids": list(write.delete_episodes)}),
        (qf.DELETE_CORRECTIONS, {"uuids": replaced}),
        (qf.DELETE_CONVERSATIONS, {"keys": list(write.conversations_dropped)}),
    ):
        await records(tx, statement, {**key, **params})
    await create_corrections(tx, group_id, list(write.corrections))
    await write_rows(tx, group_id, rows_of(write.episodes, write.entities, write.facts, []))
    if write.communities is not None:
        await derived.write_communities(tx, group_id, write.communities)
    await decisions.write_records_tx(tx, group_id, list(write.decisions))
    if write.owed:
        await records(tx, q.OWE_SUMMARIES, {**key, "uuids": list(write.owed)})
    await vault.free_values_tx(tx, group_id, write.vault_freed)
    if write.record is not None:
        await create_records(tx, group_id, [write.record])


async def create_records(
    tx: neo4j.AsyncManagedTransaction, group_id: str, found: Sequence[ForgetRecord]
) -> None:
    """Audit records as they are (a forgetting writes its own; a load writes a dump's)."""
    rows = [{"uuid": r.uuid, "at": convert.iso(r.at), "record": r.model_dump_json()} for r in found]
    if rows:
        await records(tx, qf.CREATE_FORGETTINGS, {"group_id": group_id, "rows": rows})


async def set_retention_tx(tx: neo4j.AsyncManagedTransaction, policy: RetentionPolicy) -> None:
    params: dict[str, Any] = {
        "group_id": policy.group_id, "days": policy.days, "updated_at": convert.iso(policy.updated_at),
    }  # fmt: skip
    await records(tx, qf.SET_RETENTION, params)


def record_from(row: Any) -> ForgetRecord:
    return ForgetRecord.model_validate_json(row["record"])


def policy_from(row: Any) -> RetentionPolicy:
    return RetentionPolicy(
        group_id=row["group_id"], days=row["days"], updated_at=convert.from_micros(row["updated_at"])
    )


async def forgettings(conn: Connection, group_id: str, limit: int = 100) -> list[ForgetRecord]:
    if limit <= 0:
        return []
    params = {"group_id": group_id, "limit": limit}
    return [record_from(row) for row in await conn.read(qf.FORGETTINGS_NEWEST, params, what="forgettings")]


async def retention_policies(conn: Connection, group_id: str | None = None) -> list[RetentionPolicy]:
    rows = await conn.read(qf.RETENTION, {"group_id": group_id}, what="retention_policies")
    return [policy_from(row) for row in rows]


async def set_retention(conn: Connection, policy: RetentionPolicy) -> None:
    async def work(tx: neo4j.AsyncManagedTransaction) -> None:
        await set_retention_tx(tx, policy)

    await conn.write(work, what="set_retention")


async def clear_retention(conn: Connection, group_id: str) -> bool:
    rows = await conn.run_write(qf.CLEAR_RETENTION, {"group_id": group_id}, what="clear_retention")
    return bool(rows and rows[0]["cleared"])
