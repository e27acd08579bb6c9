"""The lookups of the Neo4j store that take more than one statement: entities by key as of a time
(``entity_time``), entities by exact name (through the hashed names in the entity index, chunked under
Lucene's clause limit) and the neighbourhood of entities (one statement per hop)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from ..entity_time import bounded
from ..model import Entity
from ..store import FactFilter, TimeFilter
from . import convert, entity_time, lucene
from . import cypher as q
from .connection import Connection
from .filters import fact_params

NAMES_PER_QUERY = 400  # Lucene allows 1024 clauses per query


async def entities_by_names(conn: Connection, group_id: str, names: Sequence[str]) -> dict[str, list[Entity]]:
    """Exact lookup through the hashed normalized names in the entity index (no scan of the group)."""
    keys = convert.normalized(names)
    wanted = sorted(set(keys.values()))
    found: dict[str, Entity] = {}
    for i in range(0, len(wanted), NAMES_PER_QUERY):
        chunk = wanted[i : i + NAMES_PER_QUERY]
        query = lucene.exact_query(q.ENTITY_NAME_KEYS_FIELD, [convert.name_key(n) for n in chunk], group_id)
        params = {"index": q.ENTITY_TEXT_INDEX, "query": query, "group_id": group_id, "names": chunk}
        for record in await conn.read(q.ENTITIES_BY_NAMES, params, what="entities_by_names"):
            entity = convert.entity_from(record["e"])
            found[entity.uuid] = entity
    entities = sorted(found.values(), key=_created_order)
    return {name: [e for e in entities if key in e.normalized_names] for name, key in keys.items()}


async def get_entities(
    conn: Connection, group_id: str, uuids: Sequence[str], time: TimeFilter
) -> list[Entity]:
    """The entities ``uuids``, in that order, as they were under ``time`` (``entity_time.as_of``)."""
    if not uuids:
        return []
    unique = list(dict.fromkeys(uuids))
    records = await conn.read(q.GET_ENTITIES, {"group_id": group_id, "uuids": unique})
    by_uuid = {e.uuid: e for e in (convert.entity_from(r["e"]) for r in records)}
    return await entity_time.as_of(conn, group_id, [by_uuid[u] for u in unique if u in by_uuid], time)


async def neighbours(
    conn: Connection, group_id: str, entity_uuids: Sequence[str], depth: int, flt: FactFilter
) -> dict[str, int]:
    """Level-by-level BFS (one query per hop), so a dense graph costs O(edges), not O(paths), over the
    facts passing ``flt``, reaching only the entities that exist under its time (``entity_time``)."""
    params = fact_params(flt)
    bounded_ = bounded(flt.time)
    frontier = list(dict.fromkeys(entity_uuids))
    seen = set(frontier)
    distances: dict[str, int] = {}
    for hop in range(1, depth + 1):
        if not frontier:
            break
        args = {"group_id": group_id, **params, "frontier": frontier, "seen": sorted(seen)}
        records = await conn.read(q.NEIGHBOURS_STEP, args, what="neighbours")
        frontier = [r["uuid"] for r in records if r["uuid"] not in seen]
        seen.update(frontier)
        if bounded_ and frontier:
            kept = {e.uuid for e in await get_entities(conn, group_id, frontier, flt.time)}
            frontier = [u for u in frontier if u in kept]
        distances.update((uuid, hop) for uuid in frontier)
    return distances


def _created_order(entity: Entity) -> tuple[datetime, str]:
    return entity.created_at, entity.uuid
