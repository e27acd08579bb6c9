"""The Cypher of the derived records (``graph.derived``): communities, chains, conversation summaries.

The same rules as ``cypher``: every value a ``$parameter``, fragments composed at import time from
trusted literals only. Layout::

    (:Community {group_id, uuid, name, summary, embedding, summarized, created_at, updated_at})
        -[:HAS_MEMBER]->(:Entity)                 an entity is a member of at most one community
    (:Conversation {group_id, key, summary, episodes, first_at, last_at, covered_until, version, updated_at})

A chain is not stored: its episodes are those of the group with one ``source_description``, read in
order through the ``(group_id, source_description, reference_time)`` index (``ddl``). Deleting an entity
(``DETACH DELETE``) drops its membership.
"""

from __future__ import annotations

from .cypher import EPISODE_MAP, FACT_PRED, _props, _seek, micros

COMMUNITY_TIMES = ("created_at", "updated_at")
CONVERSATION_TIMES = ("first_at", "last_at", "covered_until", "updated_at")

FACT_ENDPOINTS = f"""
MATCH (a:Entity {{group_id: $group_id}})-[r:RELATES_TO]->(b:Entity)
WHERE r.group_id = $group_id AND {FACT_PRED}
RETURN a.uuid AS source, b.uuid AS target
"""

# --- communities ------------------------------------------------------------------------------------
COMMUNITIES = f"""
MATCH (c:Community {{group_id: $group_id}})
RETURN {_props("c", COMMUNITY_TIMES)} AS c,
       COLLECT {{ MATCH (c)-[:HAS_MEMBER]->(e:Entity) RETURN e.uuid }} AS members
"""
# The member uuids of $uuids that are no entity of the group (replace_communities refuses the write).
MISSING_MEMBERS = f"""
UNWIND $uuids AS u
OPTIONAL MATCH (e:Entity {{group_id: $group_id, uuid: u}}) {_seek("e", "Entity")}
WITH u, e WHERE e IS NULL
RETURN collect(u) AS missing
"""
DELETE_OTHER_COMMUNITIES = """
MATCH (c:Community {group_id: $group_id}) WHERE NOT c.uuid IN $uuids
DETACH DELETE c
"""
DROP_MEMBERSHIPS = """
MATCH (c:Community {group_id: $group_id})-[m:HAS_MEMBER]->()
DELETE m
"""
UPSERT_COMMUNITIES = f"""
UNWIND $rows AS row
MERGE (c:Community {{group_id: $group_id, uuid: row.uuid}})
SET c += row.props, c.created_at = datetime(row.created_at), c.updated_at = datetime(row.updated_at)
WITH c, row
CALL (c, row) {{
  UNWIND row.members AS u
  MATCH (e:Entity {{group_id: $group_id, uuid: u}}) {_seek("e", "Entity")}
  CREATE (c)-[:HAS_MEMBER]->(e)
}}
"""

# --- chains -----------------------------------------------------------------------------------------
CHAINS = f"""
MATCH (ep:Episode {{group_id: $group_id}})
WHERE ep.source_description IS NOT NULL AND ep.source_description <> ''
WITH ep.source_description AS key, count(ep) AS episodes,
     min(ep.reference_time) AS first, max(ep.reference_time) AS last
RETURN key, episodes, {micros("first")} AS first_at, {micros("last")} AS last_at
"""
_CHAIN_EPISODES = f"""
MATCH (ep:Episode {{group_id: $group_id, source_description: $key}})
WHERE ($recorded_after IS NULL OR ep.created_at > $recorded_after)
  AND ($status IS NULL OR ep.status = $status)
RETURN {EPISODE_MAP} AS ep
"""
CHAIN_EPISODES_OLDEST = _CHAIN_EPISODES + "ORDER BY ep.reference_time, ep.created_at, ep.uuid LIMIT $limit"
CHAIN_EPISODES_NEWEST = (
    _CHAIN_EPISODES + "ORDER BY ep.reference_time DESC, ep.created_at DESC, ep.uuid DESC LIMIT $limit"
)

# --- conversation summaries -------------------------------------------------------------------------
CONVERSATIONS = f"""
MATCH (s:Conversation {{group_id: $group_id}})
WHERE $keys IS NULL OR s.key IN $keys
RETURN {_props("s", CONVERSATION_TIMES)} AS s
"""
# Takes the summary's write lock (creating it at version 0 when absent) and returns its version: of two
# writers of one version, the second waits here until the first commits, then sees the new version.
LOCK_CONVERSATION = """
MERGE (s:Conversation {group_id: $group_id, key: $key})
ON CREATE SET s.version = 0
SET s._lock = true REMOVE s._lock
RETURN s.version AS version
"""
SAVE_CONVERSATION = """
MATCH (s:Conversation {group_id: $group_id, key: $key})
SET s += $props, s.first_at = datetime($first_at), s.last_at = datetime($last_at),
    s.covered_until = datetime($covered_until), s.updated_at = datetime($updated_at)
"""
