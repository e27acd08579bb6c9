"""Whole groups on Neo4j: read one out (a dump; :func:`group_items` also reads a group for a forgetting),
write one in (a load), delete one.

Neo4j reads committed data, not a snapshot: a long read could see an episode's write that committed
halfway through it. So a dump first takes its groups' locks (``cypher_edit.LOCK_GROUPS``, in one explicit
transaction held while the caller reads) and every transaction that changes a group's graph takes the
same lock first (``cypher.LOCK_GROUP``): the dump sees each write whole or not at all, and the group's
writers wait until the dump is read (searches do not). Loads and deletions are one write transaction
each, under the group's lock. ``Neo4jStore``'s whole-group methods delegate here (``load_group`` after
``GroupDump.check``).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable, Sequence
from typing import Any

import neo4j

from ...errors import ConflictError, StoreError
from ..store import DumpItem, GroupDump, OwedSummaries, StoreStats
from . import convert, decisions, derived, forgetting
from . import cypher as q
from . import cypher_decisions as qdec
from . import cypher_derived as qd
from . import cypher_edit as qe
from . import cypher_forget as qf
from .connection import Connection
from .corrections import create_corrections, records
from .writing import check_record_dims, rows_of, write_rows


async def dump(conn: Connection, group_ids: Sequence[str], vectors: bool) -> AsyncGenerator[DumpItem, None]:
    """Every record of the groups in dump order, read under their locks."""
    async with conn.transaction(what="dump") as tx:
        await (await tx.run(qe.LOCK_GROUPS, {"group_ids": sorted(set(group_ids))})).consume()
        for group_id in group_ids:
            async for item in group_items(tx, group_id, vectors):
                yield item


async def group_items(
    tx: neo4j.AsyncTransaction | neo4j.AsyncManagedTransaction, group_id: str, vectors: bool
) -> AsyncGenerator[DumpItem, None]:
    """One group's records in dump order, read in ``tx`` (which holds the group's lock)."""
    statements = qe.DUMP_WITH_VECTORS if vectors else qe.DUMP_WITHOUT_VECTORS
    decoders: tuple[Callable[[Any], DumpItem], ...] = (
        convert.episode_from,
        convert.entity_from,
        convert.fact_from,
    )
    key = {"group_id": group_id}
    for statement, decode, name in zip(statements, decoders, ("ep", "e", "fact"), strict=True):
        if name == "e":  # before its entities, the summaries the group owes
            owed = [r["uuid"] async for r in await tx.run(q.OWED_SUMMARIES, key)]
            if owed:
                yield OwedSummaries(group_id, tuple(owed))
        async for record in await tx.run(statement, key):
            yield decode(record[name])
    async for record in await tx.run(qe.DUMP_MENTIONS, key):
        yield convert.mention_from(group_id, record)
    async for record in await tx.run(qe.DUMP_CORRECTIONS, key):
        yield convert.correction_from(record["record"])
    for community in derived.communities_from([r async for r in await tx.run(qd.COMMUNITIES, key)]):
        yield community if vectors else community.model_copy(update={"embedding": None})
    summaries = [r async for r in await tx.run(qd.CONVERSATIONS, {**key, "keys": None})]
    for summary in derived.summaries_from(summaries):
        yield summary
    async for record in await tx.run(qf.FORGETTINGS_ALL, key):
        yield forgetting.record_from(record)
    async for record in await tx.run(qf.RETENTION, key):
        yield forgetting.policy_from(record)
    for decided in decisions.decoded(group_id, [r async for r in await tx.run(qdec.DUMP_DECISIONS, key)]):
        yield decided


async def load_group_tx(tx: neo4j.AsyncManagedTransaction, group: GroupDump, dim: int | None) -> None:
    check_record_dims(group.episodes, group.entities, group.facts, dim)
    for community in group.communities:
        if community.embedding is not None and dim is not None and len(community.embedding) != dim:
            raise StoreError(
                f"embedding of dimension {len(community.embedding)}; this store holds dimension {dim}"
            )
    key = {"group_id": group.group_id}
    await records(tx, q.LOCK_GROUP, key)
    held = (await records(tx, qe.GROUP_RECORDS, key))[0]["held"]
    if held:
        raise ConflictError(
            f"group {group.group_id!r} already holds {held} records: a dump is loaded into an empty group "
            "only (delete the group first, or load it as another group); nothing was written"
        )
    rows = rows_of(group.episodes, group.entities, group.facts, group.mentions)
    await write_rows(tx, group.group_id, rows)
    if group.owed_summaries:
        await records(tx, q.OWE_SUMMARIES, {**key, "uuids": list(group.owed_summaries)})
    await create_corrections(tx, group.group_id, list(group.corrections))
    await derived.write_communities(tx, group.group_id, group.communities)
    for summary in group.conversations:
        await records(tx, qd.LOCK_CONVERSATION, {"group_id": summary.group_id, "key": summary.key})
        await records(tx, qd.SAVE_CONVERSATION, derived.summary_params(summary))
    await forgetting.create_records(tx, group.group_id, list(group.forgettings))
    if group.retention is not None:
        await forgetting.set_retention_tx(tx, group.retention)
    await decisions.write_records_tx(tx, group.group_id, list(group.decisions))


async def delete_group_tx(
    tx: neo4j.AsyncManagedTransaction, group_id: str, stats_params: dict[str, Any]
) -> StoreStats:
    """Everything of the group; returns what it held (``stats_params``: the STATS statement's time
    parameters)."""
    key = {"group_id": group_id}
    await records(tx, q.LOCK_GROUP, key)
    held = (await records(tx, q.STATS, {**stats_params, **key}))[0]
    for statement in qe.DELETE_GROUP:
        await records(tx, statement, key)
    return convert.stats_from(held)


async def group_ids(conn: Connection) -> list[str]:
    return [r["g"] for r in await conn.read(qe.GROUPS, what="groups")]


async def load_group(conn: Connection, dump: GroupDump, dim: int | None) -> None:
    """The checked ``dump`` written in one transaction (``dim``: the graph's embeddings)."""

    async def work(tx: neo4j.AsyncManagedTransaction) -> None:
        await load_group_tx(tx, dump, dim)

    await conn.write(work, what=f"load_group {dump.group_id}")


async def delete_group(conn: Connection, group_id: str, params: dict[str, Any]) -> StoreStats:
    """Every record of the group deleted in one transaction (``params``: ``fact_params(ANY_FACT)``)."""

    async def work(tx: neo4j.AsyncManagedTransaction) -> StoreStats:
        return await delete_group_tx(tx, group_id, params)

    return await conn.write(work, what=f"delete_group {group_id}")
