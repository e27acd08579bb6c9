"""The Neo4j backend's search statements: index searches (fulltext and vector, group and filters applied
after the procedure), exact vector scans, and the time keys that let a fact scan seek only the facts a
time filter can pass. The fragments they share with the other statements come from ``cypher``."""

from __future__ import annotations

from .cypher import (
    EPISODE_MAP,
    EPISODE_PRED,
    FACT_MAP,
    FACT_PRED,
    episode_map,
    episode_pred,
    fact_map,
    fact_pred,
    micros,
)


# Index searches: the procedure returns candidates best first by its own score (BM25, or the vector
# index's approximate similarity); the group and filters apply after; the best $limit survivors by that
# score are returned as {item, score}. `fetched` (< the requested number: the index is exhausted) and
# `survivors` drive the over-fetch policy (see search.py).
def _index_search(call: str, column: str, pred: str, item: str) -> str:
    """``pred`` is written over ``h.hit``, ``item`` over ``hit``: the candidate node or relationship (a
    map projection needs a plain variable)."""
    return f"""
CALL {call} YIELD {column}, score
WITH collect({{hit: {column}, score: score}}) AS raw
WITH size(raw) AS fetched, [h IN raw WHERE h.hit.group_id IN $group_ids AND {pred}] AS hits
CALL (hits) {{
  UNWIND hits AS h
  WITH h ORDER BY h.score DESC LIMIT $limit
  WITH h.hit AS hit, h.score AS score
  RETURN collect({{item: {item}, score: score}}) AS items
}}
RETURN fetched, size(hits) AS survivors, items
"""


_FULLTEXT_NODES = "db.index.fulltext.queryNodes($index, $query, {limit: $fetch})"
_FULLTEXT_RELS = "db.index.fulltext.queryRelationships($index, $query, {limit: $fetch})"
_VECTOR_NODES = "db.index.vector.queryNodes($index, $k, $vector)"
_VECTOR_RELS = "db.index.vector.queryRelationships($index, $k, $vector)"
_HIT_FACT = fact_map("hit")
_HIT_EPISODE = episode_map("hit")

SEARCH_FACTS_TEXT = _index_search(_FULLTEXT_RELS, "relationship", fact_pred("h.hit"), _HIT_FACT)
SEARCH_EPISODES_TEXT = _index_search(_FULLTEXT_NODES, "node", episode_pred("h.hit"), _HIT_EPISODE)
# Vector hits are ranked by the index's own similarity: (1 + cos) / 2 of the unquantized vectors in
# float32, the cosine order up to rounding (search.vector asks for a few more and rescores in float64).
SEARCH_FACTS_VECTOR = _index_search(_VECTOR_RELS, "relationship", fact_pred("h.hit"), _HIT_FACT)
SEARCH_EPISODES_VECTOR = _index_search(_VECTOR_NODES, "node", episode_pred("h.hit"), _HIT_EPISODE)


def _vector_scan(match: str, v: str, prop: str, pred: str, item: str) -> str:
    return f"""
MATCH {match}
WHERE {v}.group_id IN $group_ids AND {v}.{prop}_dim = size($vector) AND {pred}
WITH {v} ORDER BY vector.similarity.cosine({v}.{prop}, $vector) DESC LIMIT $limit
RETURN {item} AS item
"""


# Two keys of a fact, in epoch microseconds, each in a (group_id, key) range index, let the exact fact
# scan seek only the facts a time filter can pass (convert.fact_row):
# - `start_us`: graph.temporal.start_key (its valid_at; for an unknown start its stated_at, or
#   START_UNBOUNDED when its start is open). A fact valid at $as_of has start_us <= $start_max (that
#   as_of, or KEY_MAX when retired facts are included).
# - `known_from_us`: its created_at. A fact known at $known_at has known_from_us <= $known_from_max.
# So a search as of an early time, or of what was known at one, reads the few facts begun or recorded by
# then, not the whole group. (`valid_from_us`, the key before start_us, was valid_at or START_UNBOUNDED:
# every undated fact was "begun" at any as_of.)
START_UNBOUNDED, KEY_MAX = -(2**63), 2**63 - 1


def _backfill(key: str, value: str) -> str:
    """Setup's migration of a graph written before ``key``'s index: give every fact its key, a batch at a
    time (``$unbounded`` where ``value`` is null)."""
    return f"""
MATCH ()-[r:RELATES_TO]->() WHERE r.{key} IS NULL
WITH r LIMIT $batch
SET r.{key} = coalesce({value}, $unbounded)
RETURN count(r) AS updated
"""


# Setup's migration to start_us (graph.temporal.start_key): a fact written before it gets its stated_at,
# the earliest reference time of its stored episodes (convert.fact_row writes it since), and its key; the
# key is computed by the store from the decoded fact (schema._backfill_starts), so the rule stays in one
# place. A batch at a time, oldest facts first.
FACTS_WITHOUT_START = f"""
MATCH ()-[r:RELATES_TO]->() WHERE r.start_us IS NULL
WITH r LIMIT $batch
CALL (r) {{
  UNWIND r.episodes AS u
  OPTIONAL MATCH (ep:Episode {{group_id: r.group_id, uuid: u}})
  RETURN min(ep.reference_time) AS first
}}
SET r.stated_at = coalesce(r.stated_at, first)
RETURN {FACT_MAP} AS fact
"""
SET_STARTS = """
UNWIND $rows AS row
MATCH ()-[r:RELATES_TO {group_id: row.group_id, uuid: row.uuid}]->()
USING INDEX SEEK r:RELATES_TO(group_id, uuid)
SET r.start_us = row.start_us
REMOVE r.valid_from_us
"""


def _facts_by(key: str) -> str:
    return f"()-[r:RELATES_TO]->() USING INDEX SEEK r:RELATES_TO(group_id, {key})"


def _scan_facts(key: str, bound: str) -> str:
    pred = f"r.{key} <= ${bound} AND {FACT_PRED}"
    return _vector_scan(_facts_by(key), "r", "text_embedding", pred, FACT_MAP)


def _count_facts(key: str, bound: str) -> str:
    """How many facts of the groups have ``key <= $bound``, counted up to $cap (index entries only): few
    enough, and the exact scan answers at once, without the index queries a filter that selective defeats."""
    return f"""
MATCH {_facts_by(key)}
WHERE r.group_id IN $group_ids AND r.{key} <= ${bound}
WITH r LIMIT $cap
RETURN count(r) AS n
"""


BACKFILL_KNOWN_FROM = _backfill("known_from_us", micros("r.created_at"))
SCAN_FACTS_VECTOR = _scan_facts("start_us", "start_max")  # also the default fact scan
COUNT_FACTS_BEGUN = _count_facts("start_us", "start_max")
SCAN_FACTS_KNOWN_VECTOR = _scan_facts("known_from_us", "known_from_max")
COUNT_FACTS_KNOWN = _count_facts("known_from_us", "known_from_max")
SCAN_EPISODES_VECTOR = _vector_scan("(ep:Episode)", "ep", "content_embedding", EPISODE_PRED, EPISODE_MAP)
