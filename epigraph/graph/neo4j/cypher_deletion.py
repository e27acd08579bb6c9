"""The Cypher of deleting an episode, as constants under the rules of ``cypher`` (every value a
``$parameter``; fragments composed at import time from literals). ``deletion.py`` runs them all in one
write transaction, in this order: find the episode and what it mentions; delete the facts only it
states; detach it from the facts others state too, and move their stated start; delete the entities
only it mentioned; restore what it (or a fact deleted with it) retired; delete the episode.
"""

from __future__ import annotations

from .cypher import _EPISODE_KEY, _seek

DELETE_FIND_EPISODE = f"""
MATCH {_EPISODE_KEY}
OPTIONAL MATCH (ep)-[:MENTIONS]->(e:Entity)
RETURN ep.uuid AS uuid, collect(e.uuid) AS mentioned
"""
# The facts that list the episode, found through the fact index's provenance field ($query: lucene.exact_query
# over episodes), not by reading every fact of the group; the list test keeps the result exact.
_FACTS_OF_EPISODE = """
CALL db.index.fulltext.queryRelationships($index, $query) YIELD relationship AS r
WITH r WHERE r.group_id = $group_id AND $uuid IN r.episodes"""
DELETE_SOLE_FACTS = f"""{_FACTS_OF_EPISODE}
  AND all(x IN r.episodes WHERE x = $uuid)
WITH r, r.uuid AS uuid, startNode(r).uuid AS source, endNode(r).uuid AS target
DELETE r
RETURN uuid, source, target
"""
DETACH_FROM_FACTS = f"""{_FACTS_OF_EPISODE}
SET r.episodes = [x IN r.episodes WHERE x <> $uuid]
RETURN r.uuid AS uuid, startNode(r).uuid AS source, endNode(r).uuid AS target
"""
# ... and an undated fact's start moves with its earliest statement (graph.temporal.first_stated): the
# stated_at of each detached fact becomes the earliest reference time of the episodes it keeps (none
# stored: it stays; none before: none after). Its start_us may now lie before that start: still a valid
# lower bound for the seek.
RESTATE_FACTS = f"""
UNWIND $facts AS f
MATCH ()-[r:RELATES_TO {{group_id: $group_id, uuid: f}}]->() {_seek("r", "RELATES_TO")}
WITH r WHERE r.stated_at IS NOT NULL
CALL (r) {{
  UNWIND r.episodes AS u
  OPTIONAL MATCH (ep:Episode {{group_id: $group_id, uuid: u}}) {_seek("ep", "Episode")}
  RETURN min(ep.reference_time) AS first
}}
SET r.stated_at = coalesce(first, r.stated_at)
"""
# Unless a fact added by hand (one that cites no episode: graph.corrections) touches it: a person's
# correction is never removed by an episode's deletion.
DELETE_ORPHAN_ENTITIES = f"""
MATCH (ep:Episode {{group_id: $group_id, uuid: $uuid}})-[:MENTIONS]->(e:Entity) {_seek("ep", "Episode")}
WHERE NOT EXISTS {{ MATCH (other:Episode)-[:MENTIONS]->(e) WHERE other <> ep }}
  AND NOT EXISTS {{ MATCH (e)-[h:RELATES_TO]-() WHERE size(h.episodes) = 0 }}
OPTIONAL MATCH (e)-[r:RELATES_TO]-(o:Entity)
WITH e, e.uuid AS uuid, [f IN collect({{uuid: r.uuid, other: o.uuid}}) WHERE f.uuid IS NOT NULL] AS facts
DETACH DELETE e
RETURN uuid, facts
"""
# Retired by this episode, or by a fact removed above: a contradiction no longer in the graph retires nothing.
RESTORE_INVALIDATED = """
CALL () {
  MATCH ()-[r:RELATES_TO {group_id: $group_id, invalidated_by_episode: $uuid}]->() RETURN r
  UNION
  UNWIND $removed AS f
  MATCH ()-[r:RELATES_TO {group_id: $group_id, invalidated_by_fact: f}]->() RETURN r
}
SET r.invalid_at = r.previous_invalid_at, r.expired_at = null, r.invalidated_by_fact = null,
    r.invalidated_by_episode = null, r.previous_invalid_at = null
RETURN r.uuid AS uuid, startNode(r).uuid AS source, endNode(r).uuid AS target
"""
DELETE_EPISODE = f"MATCH {_EPISODE_KEY} DETACH DELETE ep"
