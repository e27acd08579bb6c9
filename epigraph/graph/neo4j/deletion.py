"""``delete_episode``: provenance cleanup in one write transaction.

In order, inside the transaction (which first takes the group's lock, ``cypher.LOCK_GROUP``):

1. facts whose only supporting episode is this one are deleted;
2. the episode is dropped from the ``episodes`` of every other fact that lists it, whose ``stated_at``
   (if it has one) becomes the earliest reference time of the stored episodes it keeps;
3. entities it mentions that no other episode mentions (and no fact added by hand touches) are deleted
   with all their facts;
4. facts retired by this episode, or by a fact removed above, are restored (``invalid_at`` <-
   ``previous_invalid_at``; ``expired_at`` and the invalidation cleared): a contradiction that is no
   longer in the graph no longer retires anything;
5. the episode (and its MENTIONS) is deleted.

The same semantics as the embedded store: the result lists are sorted; a removed fact is only in
``removed_facts``; a surviving fact can be both updated (lost the episode) and restored.
``touched_entities`` are the surviving entities whose facts or mentions changed.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import neo4j

from ...errors import EpisodeNotFound
from ..store import DeletionResult
from . import cypher as q
from . import cypher_decisions as qdec
from . import cypher_deletion as qdel
from . import lucene
from .connection import Connection


async def _records(tx: neo4j.AsyncManagedTransaction, statement: str, params: dict[str, Any]) -> list[Any]:
    result = await tx.run(statement, params)
    return [record async for record in result]


def _endpoints(rows: Iterable[Any]) -> set[str]:
    return {uuid for row in rows for uuid in (row["source"], row["target"])}


async def delete_episode_tx(tx: neo4j.AsyncManagedTransaction, group_id: str, uuid: str) -> DeletionResult:
    params: dict[str, Any] = {"group_id": group_id, "uuid": uuid}
    await _records(tx, q.LOCK_GROUP, {"group_id": group_id})
    found = await _records(tx, qdel.DELETE_FIND_EPISODE, params)
    if not found:
        raise EpisodeNotFound(uuid, group_id)
    mentioned = set(found[0]["mentioned"])
    provenance = {
        **params,
        "index": q.FACT_TEXT_INDEX,
        "query": lucene.exact_query(q.FACT_EPISODES_FIELD, [uuid], group_id),
    }
    sole = await _records(tx, qdel.DELETE_SOLE_FACTS, provenance)
    detached = await _records(tx, qdel.DETACH_FROM_FACTS, provenance)
    await _records(tx, qdel.RESTATE_FACTS, {"group_id": group_id, "facts": [row["uuid"] for row in detached]})
    orphans = await _records(tx, qdel.DELETE_ORPHAN_ENTITIES, params)
    orphan_facts = [fact for row in orphans for fact in row["facts"]]
    removed = {row["uuid"] for row in sole} | {fact["uuid"] for fact in orphan_facts}
    restored = await _records(tx, qdel.RESTORE_INVALIDATED, {**params, "removed": sorted(removed)})
    await _records(tx, qdel.DELETE_EPISODE, params)
    await _records(tx, qdec.DELETE_EPISODE_DECISIONS, params)

    removed_entities = {row["uuid"] for row in orphans}
    touched = mentioned | _endpoints(sole) | _endpoints(detached) | _endpoints(restored)
    touched |= {fact["other"] for fact in orphan_facts if fact["other"] is not None}
    return DeletionResult(
        removed_facts=sorted(removed),
        restored_facts=sorted({row["uuid"] for row in restored}),
        updated_facts=sorted({row["uuid"] for row in detached} - removed),
        removed_entities=sorted(removed_entities),
        touched_entities=sorted(touched - removed_entities),
    )


async def delete_episode(conn: Connection, group_id: str, uuid: str) -> DeletionResult:
    async def work(tx: neo4j.AsyncManagedTransaction) -> DeletionResult:
        return await delete_episode_tx(tx, group_id, uuid)

    return await conn.write(work, what="delete_episode")
