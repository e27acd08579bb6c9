"""The redaction vault in Neo4j (``RedactionVault``): the header MERGEd under its uniqueness
constraint (of two proposals one wins), placeholders numbered inside one write transaction that holds
the group's lock, so two writers never number one digest twice nor give one number to two."""

from __future__ import annotations

from collections.abc import Sequence

import neo4j

from ..store import VaultEntry, VaultHeader
from . import cypher as q
from . import cypher_vault as qv
from .corrections import records


async def vault_header_tx(
    tx: neo4j.AsyncManagedTransaction, group_id: str, proposed: VaultHeader
) -> VaultHeader:
    params = {"group_id": group_id, "salt": proposed.salt, "key_check": proposed.key_check}
    row = (await records(tx, qv.VAULT_HEADER, params))[0]
    return VaultHeader(bytes(row["salt"]), bytes(row["key_check"]) if row["key_check"] is not None else None)


async def placeholders_tx(
    tx: neo4j.AsyncManagedTransaction, group_id: str, entries: Sequence[VaultEntry]
) -> list[int]:
    await records(tx, q.LOCK_GROUP, {"group_id": group_id})
    numbers = []
    for entry in entries:
        key = {"group_id": group_id, "digest": entry.digest}
        found = await records(tx, qv.NUMBER_OF, key)
        if not found:
            found = await records(tx, qv.ADD_PLACEHOLDER, {**key, "kind": entry.kind, "sealed": entry.sealed})
        numbers.append(int(found[0]["number"]))
    return numbers


def sealed_from(rows: Sequence[neo4j.Record]) -> dict[tuple[str, int], bytes]:
    return {(row["kind"], int(row["number"])): bytes(row["sealed"]) for row in rows}
