"""What changed in a window, read from Neo4j (``ChangeReads.changes``): the facts with a time in it, the
corrections and the forgettings made in it, then the entities and episodes they name (``cypher_edit``'s
and ``cypher_forget``'s statements)."""

from __future__ import annotations

from ..changes import ChangeRecords, Window, cited
from ..forgetting import ForgetRecord
from . import convert
from . import cypher as q
from . import cypher_edit as qe
from . import cypher_forget as qf
from .connection import Connection


async def changes(conn: Connection, group_id: str, window: Window, limit: int) -> ChangeRecords:
    params = {"group_id": group_id, "since": window.since, "until": window.until, "limit": max(0, limit) + 1}
    facts = [convert.fact_from(r["fact"]) for r in await conn.read(qe.CHANGED_FACTS, params, what="changes")]
    records = await conn.read(qe.CHANGED_BY_CORRECTIONS, params, what="changes")
    corrections = [convert.correction_from(r["record"]) for r in records]
    rows = await conn.read(qf.FORGETTINGS_BETWEEN, params, what="changes")
    forgot = [ForgetRecord.model_validate_json(r["record"]) for r in rows]
    truncated = len(facts) > limit or len(corrections) > limit or len(forgot) > limit
    facts, corrections, forgot = facts[: max(0, limit)], corrections[: max(0, limit)], forgot[: max(0, limit)]
    entity_uuids, episode_uuids = cited(facts, corrections)
    found = {"group_id": group_id}
    entities = [
        convert.entity_from(r["e"]) for r in await conn.read(q.GET_ENTITIES, {**found, "uuids": entity_uuids})
    ]
    episodes = [
        convert.episode_from(r["ep"])
        for r in await conn.read(qe.GET_EPISODES, {**found, "uuids": episode_uuids})
    ]
    return ChangeRecords(facts, corrections, entities, episodes, truncated, forgettings=forgot)
