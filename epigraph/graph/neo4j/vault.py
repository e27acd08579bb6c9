"""The redaction vault in Neo4j (``RedactionVault``): the header MERGEd under its uniqueness
constraint (of two proposals one wins), placeholders numbered inside one write transaction that holds
the group's lock, so two writers never number one digest twice nor give one number to two.
``Neo4jStore``'s ``RedactionVault`` methods delegate here (the connection passed in): the ones named as
the role's methods, each a transaction (``*_tx``) or one read."""

from __future__ import annotations

from collections.abc import Sequence

import neo4j

from ..store import VaultEntry, VaultHeader, holds_value, reserved_digest
from . import cypher as q
from . import cypher_vault as qv
from .connection import Connection
from .corrections import records


def header_of(row: neo4j.Record) -> VaultHeader:
    return VaultHeader(bytes(row["salt"]), bytes(row["key_check"]) if row["key_check"] is not None else None)


async def vault_header_tx(
    tx: neo4j.AsyncManagedTransaction, group_id: str, proposed: VaultHeader
) -> VaultHeader:
    params = {"group_id": group_id, "salt": proposed.salt, "key_check": proposed.key_check}
    return header_of((await records(tx, qv.VAULT_HEADER, params))[0])


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


def held_from(rows: Sequence[neo4j.Record]) -> list[tuple[str, int]]:
    """The ``(kind, number)`` placeholders of ``qv.ROWS``'s rows that hold a value (not reserved)."""
    return sorted((row["kind"], int(row["number"])) for row in rows if holds_value(bytes(row["digest"])))


async def free_values_tx(
    tx: neo4j.AsyncManagedTransaction, group_id: str, refs: Sequence[tuple[str, int]]
) -> None:
    """In a forgetting's transaction: each placeholder's value taken out, its number kept reserved."""
    rows = [{"kind": kind, "number": n, "digest": reserved_digest(kind, n)} for kind, n in refs]
    if rows:
        await records(tx, qv.FREE, {"group_id": group_id, "rows": rows})


def sealed_from(rows: Sequence[neo4j.Record]) -> dict[tuple[str, int], bytes]:
    return {(row["kind"], int(row["number"])): bytes(row["sealed"]) for row in rows}


async def reserve_tx(
    tx: neo4j.AsyncManagedTransaction, group_id: str, refs: Sequence[tuple[str, int]]
) -> list[tuple[str, int]]:
    """Under the group's lock: the refs numbered for a value (a clash), else every ref reserved."""
    await records(tx, q.LOCK_GROUP, {"group_id": group_id})
    wanted = list(dict.fromkeys(refs))
    held = await records(tx, qv.AT, {"group_id": group_id, "refs": [[kind, n] for kind, n in wanted]})
    clashes = [
        (row["kind"], int(row["number"]))
        for row in held
        if bytes(row["digest"]) != reserved_digest(row["kind"], int(row["number"]))
    ]
    if not clashes:
        rows = [{"kind": kind, "number": n, "digest": reserved_digest(kind, n)} for kind, n in wanted]
        await records(tx, qv.RESERVE, {"group_id": group_id, "rows": rows})
    return sorted(clashes, key=wanted.index)


async def vault_header(conn: Connection, group_id: str, proposed: VaultHeader) -> VaultHeader:
    async def work(tx: neo4j.AsyncManagedTransaction) -> VaultHeader:
        return await vault_header_tx(tx, group_id, proposed)

    return await conn.write(work, what="vault_header")


async def placeholders(conn: Connection, group_id: str, entries: Sequence[VaultEntry]) -> list[int]:
    async def work(tx: neo4j.AsyncManagedTransaction) -> list[int]:
        return await placeholders_tx(tx, group_id, entries)

    return await conn.write(work, what="placeholders")


async def sealed_values(
    conn: Connection, group_id: str, refs: Sequence[tuple[str, int]]
) -> dict[tuple[str, int], bytes]:
    params = {"group_id": group_id, "refs": [[kind, number] for kind, number in refs]}
    return sealed_from(await conn.read(qv.SEALED, params, what="sealed_values"))


async def read_vault_header(conn: Connection, group_id: str) -> VaultHeader | None:
    rows = await conn.read(qv.READ_HEADER, {"group_id": group_id}, what="read_vault_header")
    return header_of(rows[0]) if rows else None


async def known_placeholders(conn: Connection, group_id: str, digests: Sequence[bytes]) -> list[int | None]:
    if not digests:
        return []
    params = {"group_id": group_id, "digests": list(digests)}
    rows = await conn.read(qv.KNOWN, params, what="known_placeholders")
    return [None if row["number"] is None else int(row["number"]) for row in rows]


async def held_placeholders(conn: Connection, group_id: str) -> list[tuple[str, int]]:
    return held_from(await conn.read(qv.ROWS, {"group_id": group_id}, what="held_placeholders"))


async def reserve_placeholders(
    conn: Connection, group_id: str, refs: Sequence[tuple[str, int]]
) -> list[tuple[str, int]]:
    async def work(tx: neo4j.AsyncManagedTransaction) -> list[tuple[str, int]]:
        return await reserve_tx(tx, group_id, refs)

    return await conn.write(work, what="reserve_placeholders")
