"""The Cypher of forgetting (``forgetting``), as constants under the rules of ``cypher`` (every value a
``$parameter``; fragments composed at import time from literals).

Graph layout added to ``cypher``'s::

    (:Forgetting {group_id, uuid, at, record_json})   one audit record per forgetting (graph.forgetting)
    (:Retention {group_id, days, updated_at})          a group's retention policy

A forgetting's deletions of facts and entities are ``cypher_edit``'s (DELETE_FACTS, DELETE_ENTITIES); its
rewritten records go through ``cypher.WRITE_EPISODE`` (``writing.write_rows``) and its communities
through ``cypher_derived``.
"""

from __future__ import annotations

from .cypher import EPISODE_MAP, _seek, micros

GET_EPISODES = f"""
UNWIND $uuids AS u
MATCH (ep:Episode {{group_id: $group_id, uuid: u}}) {_seek("ep", "Episode")}
RETURN {EPISODE_MAP} AS ep
"""
DELETE_EPISODES = f"""
UNWIND $uuids AS u
MATCH (ep:Episode {{group_id: $group_id, uuid: u}}) {_seek("ep", "Episode")}
DETACH DELETE ep
"""
DELETE_CORRECTIONS = f"""
UNWIND $uuids AS u
MATCH (c:Correction {{group_id: $group_id, uuid: u}}) {_seek("c", "Correction")}
DELETE c
"""
DELETE_CONVERSATIONS = """
UNWIND $keys AS k
MATCH (c:Conversation {group_id: $group_id, key: k})
DELETE c
"""
CREATE_FORGETTINGS = """
UNWIND $rows AS row
CREATE (:Forgetting {group_id: $group_id, uuid: row.uuid, at: datetime(row.at), record_json: row.record})
"""
FORGETTINGS_NEWEST = """
MATCH (f:Forgetting {group_id: $group_id})
RETURN f.record_json AS record ORDER BY f.at DESC, f.uuid DESC LIMIT $limit
"""
FORGETTINGS_BETWEEN = """
MATCH (f:Forgetting {group_id: $group_id})
WHERE ($since IS NULL OR f.at >= $since) AND ($until IS NULL OR f.at < $until)
RETURN f.record_json AS record ORDER BY f.at, f.uuid LIMIT $limit
"""
FORGETTINGS_ALL = """
MATCH (f:Forgetting {group_id: $group_id}) RETURN f.record_json AS record ORDER BY f.at, f.uuid
"""
RETENTION = f"""
MATCH (r:Retention) WHERE $group_id IS NULL OR r.group_id = $group_id
RETURN r.group_id AS group_id, r.days AS days, {micros("r.updated_at")} AS updated_at ORDER BY group_id
"""
SET_RETENTION = """
MERGE (r:Retention {group_id: $group_id}) SET r.days = $days, r.updated_at = datetime($updated_at)
"""
CLEAR_RETENTION = "MATCH (r:Retention {group_id: $group_id}) DELETE r RETURN count(*) AS cleared"
