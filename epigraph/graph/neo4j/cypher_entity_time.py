"""The Neo4j statements of entities in time (``graph.entity_time``): the existence predicate the entity
searches put in their queries, those searches, and the read of the episodes that mention entities."""

from __future__ import annotations

from .cypher import ENTITY_MAP, _seek, entity_map, episode_pred, labels_pred, micros


def exists_pred(e: str) -> str:
    """``entity_time.entity_exists`` over entity variable ``e`` with ``$said_by`` / ``$stored_by``
    (``filters.episode_params``): recorded by ``$stored_by``, and mentioned by a passing episode, or
    (mentioned by none) recorded by ``$said_by``; no bound, every entity."""
    return (
        f"(($said_by IS NULL AND $stored_by IS NULL) OR (($stored_by IS NULL OR {e}.created_at <= $stored_by)"
        f" AND (EXISTS {{ MATCH (tp:Episode)-[:MENTIONS]->({e}) WHERE {episode_pred('tp')} }}"
        f" OR (NOT EXISTS {{ MATCH (:Episode)-[:MENTIONS]->({e}) }}"
        f" AND ($said_by IS NULL OR {e}.created_at <= $said_by)))))"
    )


def _entity_search(call: str) -> str:
    """An entity index search (see ``cypher_search._index_search``: the same ``fetched``, ``survivors``
    and ``items``), its candidates kept by group, labels and :func:`exists_pred`."""
    return f"""
CALL {call} YIELD node, score
WITH collect({{hit: node, score: score}}) AS raw
WITH size(raw) AS fetched,
  [h IN raw WHERE h.hit.group_id IN $group_ids AND {labels_pred("h.hit")}] AS labelled
CALL (labelled) {{
  UNWIND labelled AS h
  WITH h.hit AS hit, h.score AS score
  WHERE {exists_pred("hit")}
  RETURN collect({{hit: hit, score: score}}) AS hits
}}
CALL (hits) {{
  UNWIND hits AS h
  WITH h ORDER BY h.score DESC LIMIT $limit
  WITH h.hit AS hit, h.score AS score
  RETURN collect({{item: {entity_map("hit")}, score: score}}) AS items
}}
RETURN fetched, size(hits) AS survivors, items
"""


SEARCH_ENTITIES_TEXT = _entity_search("db.index.fulltext.queryNodes($index, $query, {limit: $fetch})")
SEARCH_ENTITIES_VECTOR = _entity_search("db.index.vector.queryNodes($index, $k, $vector)")
SCAN_ENTITIES_VECTOR = f"""
MATCH (e:Entity)
WHERE e.group_id IN $group_ids AND e.name_embedding_dim = size($vector) AND {labels_pred("e")}
  AND {exists_pred("e")}
WITH e ORDER BY vector.similarity.cosine(e.name_embedding, $vector) DESC LIMIT $limit
RETURN {ENTITY_MAP} AS item
"""
MENTIONED = f"""
UNWIND $uuids AS u
MATCH (e:Entity {{group_id: $group_id, uuid: u}}) {_seek("e", "Entity")}
MATCH (ep:Episode)-[:MENTIONS]->(e)
RETURN u AS uuid, {micros("ep.reference_time")} AS said, {micros("ep.created_at")} AS recorded,
  ep.content AS text
"""
