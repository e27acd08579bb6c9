"""Decision records on Neo4j (``graph.decisions``; the Cypher: ``cypher_decisions``): written inside an
episode's or a load's write transaction, read by episode and by name."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import neo4j

from ..decisions import DecisionRecord, in_order, stored_size
from ..model import normalize_name
from . import cypher_decisions as qd
from .connection import Connection


def _row(record: DecisionRecord) -> dict[str, Any]:
    return {
        "episode_uuid": record.episode_uuid,
        "created_at": record.created_at,
        "version": record.version,
        "record": record.to_json(),
        "names": record.names(),
        "bytes": stored_size(record),
    }


async def write_records_tx(
    tx: neo4j.AsyncManagedTransaction, group_id: str, records: Sequence[DecisionRecord]
) -> None:
    """Store each record with its episode (written before in this transaction), replacing an earlier one."""
    if records:
        params = {"group_id": group_id, "rows": [_row(r) for r in records]}
        await (await tx.run(qd.WRITE_DECISIONS, params)).consume()


async def forget_before_tx(tx: neo4j.AsyncManagedTransaction, group_id: str, before: datetime) -> None:
    """The retention: the group's records made before ``before`` deleted."""
    await (await tx.run(qd.FORGET_DECISIONS, {"group_id": group_id, "before": before})).consume()


def decoded(group_id: str, rows: Sequence[Any]) -> list[DecisionRecord]:
    return [
        DecisionRecord.from_json(
            r["record"], group_id=group_id, episode_uuid=r["episode_uuid"], version=r["version"]
        )
        for r in rows
    ]


async def records_of(conn: Connection, group_id: str, episode_uuids: Sequence[str]) -> list[DecisionRecord]:
    params = {"group_id": group_id, "uuids": list(dict.fromkeys(episode_uuids))}
    found = decoded(group_id, await conn.read(qd.DECISIONS_OF, params, what="decision_records"))
    return in_order(found, episode_uuids)


async def records_naming(conn: Connection, group_id: str, name: str, limit: int) -> list[DecisionRecord]:
    params = {"group_id": group_id, "norm": normalize_name(name), "limit": limit}
    return decoded(group_id, await conn.read(qd.DECISIONS_NAMING, params, what="decisions_naming"))
