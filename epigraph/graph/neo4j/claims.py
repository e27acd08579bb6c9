"""Episode claims in Neo4j: ``claim_owner`` and ``claim_until`` on the episode node.

Each claim and release is one write transaction that first takes the episode node's write lock
(``cypher.LOCK_EPISODE``, held to the end of the transaction), then reads and sets the claim: a second
claimant waits for the first to commit and then sees its claim. Expiry is judged by the server's clock
(``timestamp()``), the one clock every worker of a shared Neo4j agrees on. Deleting the episode node drops
its claim; the episode upsert (``SET ep += props``) leaves the two properties alone.
"""

from __future__ import annotations

from datetime import UTC, datetime

import neo4j

from ..store import Claim
from . import cypher as q
from .connection import Connection


async def claim_tx(
    tx: neo4j.AsyncManagedTransaction, group_id: str, uuid: str, owner: str, seconds: float
) -> Claim | None:
    key = {"group_id": group_id, "uuid": uuid}
    await (await tx.run(q.LOCK_EPISODE, key)).consume()
    params = {**key, "owner": owner, "ms": max(1, round(seconds * 1000))}
    record = await (await tx.run(q.CLAIM_EPISODE, params)).single()
    if record is None:
        return None
    return Claim(owner=record["owner"], expires_at=datetime.fromtimestamp(record["until"] / 1000, UTC))


async def release_tx(tx: neo4j.AsyncManagedTransaction, group_id: str, uuid: str, owner: str) -> None:
    key = {"group_id": group_id, "uuid": uuid}
    await (await tx.run(q.LOCK_EPISODE, key)).consume()
    await (await tx.run(q.RELEASE_EPISODE, {**key, "owner": owner})).consume()


async def claim(conn: Connection, group_id: str, uuid: str, owner: str, seconds: float) -> Claim | None:
    async def work(tx: neo4j.AsyncManagedTransaction) -> Claim | None:
        return await claim_tx(tx, group_id, uuid, owner, seconds)

    return await conn.write(work, what="claim_episode")


async def release(conn: Connection, group_id: str, uuid: str, owner: str) -> None:
    async def work(tx: neo4j.AsyncManagedTransaction) -> None:
        await release_tx(tx, group_id, uuid, owner)

    await conn.write(work, what="release_episode")
