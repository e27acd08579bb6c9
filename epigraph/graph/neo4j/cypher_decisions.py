"""The Cypher of decision records (``graph.decisions``), as constants under the rules of ``cypher`` (every
value a ``$parameter``). A record is a ``:DecisionRecord`` node keyed by (group_id, episode_uuid), not
linked to its episode: its JSON (``record``), its schema ``version``, ``created_at``, the normalized names
its name steps are about (``names``) and its size in bytes (``bytes``, for ``stats``). It is written in its
episode's transaction (``writing``) and deleted with its episode (``deletion``; a forgetting's deleted
episodes) or group.
"""

from __future__ import annotations

WRITE_DECISIONS = """
UNWIND $rows AS row
MATCH (:Episode {group_id: $group_id, uuid: row.episode_uuid})
MERGE (d:DecisionRecord {group_id: $group_id, episode_uuid: row.episode_uuid})
SET d.created_at = row.created_at, d.version = row.version, d.record = row.record, d.names = row.names,
    d.bytes = row.bytes
"""
FORGET_DECISIONS = "MATCH (d:DecisionRecord {group_id: $group_id}) WHERE d.created_at < $before DELETE d"
_RECORD = "d.record AS record, d.episode_uuid AS episode_uuid, d.version AS version"
DECISIONS_OF = f"""
UNWIND $uuids AS u
MATCH (d:DecisionRecord {{group_id: $group_id, episode_uuid: u}})
RETURN {_RECORD} ORDER BY d.created_at, d.episode_uuid
"""
DECISIONS_NAMING = f"""
MATCH (d:DecisionRecord {{group_id: $group_id}}) WHERE $norm IN d.names
RETURN {_RECORD} ORDER BY d.created_at DESC LIMIT $limit
"""
DUMP_DECISIONS = f"""
MATCH (d:DecisionRecord {{group_id: $group_id}}) RETURN {_RECORD} ORDER BY d.created_at, d.episode_uuid
"""
DELETE_EPISODE_DECISIONS = "MATCH (d:DecisionRecord {group_id: $group_id, episode_uuid: $uuid}) DELETE d"
DELETE_EPISODES_DECISIONS = """
UNWIND $uuids AS u
MATCH (d:DecisionRecord {group_id: $group_id, episode_uuid: u})
DELETE d
"""
DELETE_GROUP_DECISIONS = "MATCH (d:DecisionRecord {group_id: $group_id}) DELETE d"
