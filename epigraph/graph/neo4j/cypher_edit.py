"""The Cypher of corrections by hand and of whole groups (dump, load, delete), as constants, under the
rules of ``cypher`` (every value a ``$parameter``; fragments composed at import time from literals).

Graph layout added to ``cypher``'s::

    (:Correction {group_id, uuid, created_at, subjects, record_json})   one per correction (graph.corrections)
    (:GroupLock {group_id})                                              a group's lock (cypher.LOCK_GROUP)

A whole group's records include its derived ones (``cypher_derived``: communities, conversations).

A correction's record is its JSON without embeddings (``Correction.stored``); ``subjects`` lists the
entity and fact uuids it touches (its history is found by them).
"""

from __future__ import annotations

from .cypher import _seek, entity_map, episode_map, fact_map

# Every group of the dump locked in one statement, in sorted order (as every writer locks one group, two
# lockers never wait on each other in a cycle).
LOCK_GROUPS = """
UNWIND $group_ids AS g
MERGE (lock:GroupLock {group_id: g}) SET lock._lock = true REMOVE lock._lock
"""

# --- corrections ---------------------------------------------------------------------------------------
MENTIONS_OF = f"""
UNWIND $uuids AS u
MATCH (e:Entity {{group_id: $group_id, uuid: u}}) {_seek("e", "Entity")}
MATCH (ep:Episode)-[:MENTIONS]->(e)
RETURN ep.uuid AS episode_uuid, e.uuid AS entity_uuid
ORDER BY episode_uuid, entity_uuid
"""
FACTS_TOUCHING = f"""
UNWIND $uuids AS u
MATCH (e:Entity {{group_id: $group_id, uuid: u}}) {_seek("e", "Entity")}
MATCH (e)-[r:RELATES_TO]-()
RETURN DISTINCT u AS entity_uuid, r.uuid AS uuid
"""
REMOVE_MENTIONS = f"""
UNWIND $rows AS row
MATCH (ep:Episode {{group_id: $group_id, uuid: row.episode_uuid}}) {_seek("ep", "Episode")}
MATCH (e:Entity {{group_id: $group_id, uuid: row.entity_uuid}}) {_seek("e", "Entity")}
MATCH (ep)-[m:MENTIONS]->(e)
DELETE m
"""
DELETE_FACTS = f"""
UNWIND $uuids AS u
MATCH ()-[r:RELATES_TO {{group_id: $group_id, uuid: u}}]->() {_seek("r", "RELATES_TO")}
DELETE r
"""
DELETE_ENTITIES = f"""
UNWIND $uuids AS u
MATCH (e:Entity {{group_id: $group_id, uuid: u}}) {_seek("e", "Entity")}
DETACH DELETE e
"""
CREATE_CORRECTIONS = """
UNWIND $rows AS row
CREATE (:Correction {group_id: $group_id, uuid: row.uuid, created_at: datetime(row.created_at),
                     subjects: row.subjects, record_json: row.record})
"""
CORRECTIONS = """
MATCH (c:Correction {group_id: $group_id})
WHERE $subject IS NULL OR $subject IN c.subjects
RETURN c.record_json AS record
ORDER BY c.created_at DESC, c.uuid DESC LIMIT $limit
"""
GET_CORRECTION = f"""
MATCH (c:Correction {{group_id: $group_id, uuid: $uuid}}) {_seek("c", "Correction")}
RETURN c.record_json AS record
"""

# --- whole groups ----------------------------------------------------------------------------------------
GROUPS = """
CALL () {
  MATCH (n:Episode) RETURN DISTINCT n.group_id AS g
  UNION MATCH (n:Entity) RETURN DISTINCT n.group_id AS g
  UNION MATCH (n:Correction) RETURN DISTINCT n.group_id AS g
  UNION MATCH (n:Forgetting) RETURN DISTINCT n.group_id AS g
}
RETURN g ORDER BY g
"""
GROUP_RECORDS = """
CALL () { MATCH (n:Episode {group_id: $group_id}) RETURN count(n) AS episodes }
CALL () { MATCH (n:Entity {group_id: $group_id}) RETURN count(n) AS entities }
CALL () { MATCH ()-[r:RELATES_TO {group_id: $group_id}]->() RETURN count(r) AS facts }
CALL () { MATCH (n:Correction {group_id: $group_id}) RETURN count(n) AS corrections }
CALL () { MATCH (n:Community {group_id: $group_id}) RETURN count(n) AS communities }
CALL () { MATCH (n:Conversation {group_id: $group_id}) RETURN count(n) AS conversations }
CALL () { MATCH (n:Forgetting {group_id: $group_id}) RETURN count(n) AS forgettings }
CALL () { MATCH (n:Retention {group_id: $group_id}) RETURN count(n) AS retention }
RETURN episodes + entities + facts + corrections + communities + conversations + forgettings + retention
    AS held
"""


def dump_statements(vectors: bool) -> tuple[str, str, str]:
    """The episodes, entities and facts of ``$group_id`` in dump order (``WholeGroups.dump``)."""
    return (
        f"MATCH (ep:Episode {{group_id: $group_id}}) RETURN {episode_map('ep', vectors)} AS ep"
        " ORDER BY ep.reference_time, ep.created_at, ep.uuid",
        f"MATCH (e:Entity {{group_id: $group_id}}) RETURN {entity_map('e', vectors)} AS e"
        " ORDER BY e.created_at, e.uuid",
        f"MATCH ()-[r:RELATES_TO {{group_id: $group_id}}]->() RETURN {fact_map('r', vectors)} AS fact"
        " ORDER BY r.created_at, r.uuid",
    )


DUMP_WITH_VECTORS = dump_statements(vectors=True)
DUMP_WITHOUT_VECTORS = dump_statements(vectors=False)
DUMP_MENTIONS = """
MATCH (ep:Episode {group_id: $group_id})-[:MENTIONS]->(e:Entity)
RETURN ep.uuid AS episode_uuid, e.uuid AS entity_uuid ORDER BY episode_uuid, entity_uuid
"""
DUMP_CORRECTIONS = """
MATCH (c:Correction {group_id: $group_id}) RETURN c.record_json AS record ORDER BY c.created_at, c.uuid
"""
DELETE_GROUP = (
    "MATCH ()-[r:RELATES_TO {group_id: $group_id}]->() DELETE r",
    "MATCH (n:Episode {group_id: $group_id}) DETACH DELETE n",
    "MATCH (n:Entity {group_id: $group_id}) DETACH DELETE n",
    "MATCH (n:Correction {group_id: $group_id}) DELETE n",
    "MATCH (n:Community {group_id: $group_id}) DETACH DELETE n",
    "MATCH (n:Conversation {group_id: $group_id}) DELETE n",
    "MATCH (n:Forgetting {group_id: $group_id}) DELETE n",
    "MATCH (n:Retention {group_id: $group_id}) DELETE n",
    "MATCH (n:Redaction {group_id: $group_id}) DELETE n",
    "MATCH (n:RedactionVault {group_id: $group_id}) DELETE n",
    "MATCH (n:DecisionRecord {group_id: $group_id}) DELETE n",
    "MATCH (n:GroupLock {group_id: $group_id}) DELETE n",
)

# --- what changed in a window (graph.changes) ----------------------------------------------------------
# $since / $until: datetimes, or null for an open side. A group's facts are scanned (the (group_id,
# start_us) index serves a group scan); no index serves a time on five properties, and a window's read is
# a report, not a hot path.
_IN_WINDOW = "t IS NOT NULL AND ($since IS NULL OR t >= $since) AND ($until IS NULL OR t < $until)"
CHANGED_FACTS = f"""
MATCH ()-[r:RELATES_TO]->() WHERE r.group_id = $group_id
  AND any(t IN [r.valid_at, r.stated_at, r.invalid_at, r.created_at, r.expired_at] WHERE {_IN_WINDOW})
RETURN {fact_map("r")} AS fact ORDER BY r.created_at, r.uuid LIMIT $limit
"""
CHANGED_BY_CORRECTIONS = """
MATCH (c:Correction {group_id: $group_id})
WHERE ($since IS NULL OR c.created_at >= $since) AND ($until IS NULL OR c.created_at < $until)
RETURN c.record_json AS record ORDER BY c.created_at, c.uuid LIMIT $limit
"""
GET_EPISODES = f"""
UNWIND $uuids AS u
MATCH (ep:Episode {{group_id: $group_id, uuid: u}}) {_seek("ep", "Episode")}
RETURN {episode_map("ep")} AS ep
"""
