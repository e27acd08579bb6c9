"""Corrections by hand on Neo4j: check, apply and record one in a single write transaction.

Inside it: take the group's lock (``cypher.LOCK_GROUP``: no episode write, deletion or other correction
of the group runs meanwhile), read what the precondition needs (``graph.corrections.conflict``), refuse a
stale correction before writing anything, then write the ``after`` records and added mentions
(``writing.write_rows``), remove mentions, delete facts, then entities, and create the correction's node.
``Neo4jStore``'s corrections delegate here: :func:`apply_correction` (after ``Correction.check``), the
listing and the read of one.
"""

from __future__ import annotations

from typing import Any

import neo4j

from ...errors import ConflictError
from ..corrections import Correction, Lookups, StoredState, conflict, stored_state
from . import convert
from . import cypher as q
from . import cypher_edit as qe
from .connection import Connection
from .writing import check_record_dims, rows_of, write_rows


async def records(tx: neo4j.AsyncManagedTransaction, statement: str, params: dict[str, Any]) -> list[Any]:
    result = await tx.run(statement, params)
    return [record async for record in result]


async def apply_correction_tx(tx: neo4j.AsyncManagedTransaction, correction: Correction) -> None:
    group_id = correction.group_id
    changes = correction.plan()
    await records(tx, q.LOCK_GROUP, {"group_id": group_id})
    problem = conflict(correction, await _stored_state(tx, group_id, Lookups.of(correction)))
    if problem is not None:
        raise ConflictError(
            f"correction {correction.uuid} ({correction.operation.value}) was not applied: {problem}; "
            "nothing was written (read the graph again and redo it)"
        )
    await write_rows(tx, group_id, rows_of([], changes.entities, changes.facts, changes.add_mentions))
    removed = [convert.mention_row(m) for m in changes.remove_mentions]
    for statement, params in (
        (qe.REMOVE_MENTIONS, {"rows": removed}),
        (qe.DELETE_FACTS, {"uuids": changes.delete_facts}),
        (qe.DELETE_ENTITIES, {"uuids": changes.delete_entities}),
    ):
        await records(tx, statement, {"group_id": group_id, **params})
    await create_corrections(tx, group_id, [correction])


async def create_corrections(
    tx: neo4j.AsyncManagedTransaction, group_id: str, corrections: list[Correction]
) -> None:
    rows = [convert.correction_row(c) for c in corrections]
    if rows:
        await records(tx, qe.CREATE_CORRECTIONS, {"group_id": group_id, "rows": rows})


async def _stored_state(tx: neo4j.AsyncManagedTransaction, group_id: str, lookups: Lookups) -> StoredState:
    key = {"group_id": group_id}
    entities = await records(tx, q.GET_ENTITIES, {**key, "uuids": lookups.entities})
    facts = await records(tx, q.GET_FACTS, {**key, "uuids": lookups.facts})
    mentions = await records(tx, qe.MENTIONS_OF, {**key, "uuids": lookups.mentioned})
    touching = await records(tx, qe.FACTS_TOUCHING, {**key, "uuids": lookups.deleted})
    return stored_state(
        lookups,
        (convert.entity_from(r["e"]) for r in entities),
        (convert.fact_from(r["fact"]) for r in facts),
        (convert.mention_from(group_id, r) for r in mentions),
        ((r["entity_uuid"], r["uuid"]) for r in touching),
    )


async def apply_correction(conn: Connection, correction: Correction, dim: int | None) -> None:
    """The checked ``correction`` applied in one write transaction (``dim``: the graph's embeddings)."""
    check_record_dims([], correction.after.entities, correction.after.facts, dim)

    async def work(tx: neo4j.AsyncManagedTransaction) -> None:
        await apply_correction_tx(tx, correction)

    await conn.write(work, what=f"apply_correction {correction.uuid}")


async def corrections(conn: Connection, group_id: str, subject: str | None, limit: int) -> list[Correction]:
    if limit <= 0:
        return []
    params = {"group_id": group_id, "subject": subject, "limit": limit}
    return [convert.correction_from(r["record"]) for r in await conn.read(qe.CORRECTIONS, params)]


async def get_correction(conn: Connection, group_id: str, uuid: str) -> Correction | None:
    records = await conn.read(qe.GET_CORRECTION, {"group_id": group_id, "uuid": uuid})
    return convert.correction_from(records[0]["record"]) if records else None
