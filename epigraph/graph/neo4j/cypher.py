"""Every Cypher statement of the Neo4j backend's queries, once, as constants (the schema's own
statements, constraints and indexes, are in ``ddl``; the searches and vector scans in ``cypher_search``;
an episode's deletion in ``cypher_deletion``).

Rules: every value is a ``$parameter``; no user string is ever formatted into a statement. The few
fragments below are composed when this module is imported, from trusted literals only.

Graph layout::

    (:Episode {group_id, uuid, ...})-[:MENTIONS]->(:Entity {group_id, uuid, ...})   group: the episode's
    (:Entity)-[:RELATES_TO {group_id, uuid, relation, text, ...}]->(:Entity)      one per Fact

A fact's relation name is a property, never a relationship type. Identity is ``(group_id, uuid)``, as in
the embedded store: a uuid that collides across groups names two independent things.
"""

from __future__ import annotations

# --- index names (also the procedures' $index arguments) ---------------------------------------------
ENTITY_TEXT_INDEX = "epigraph_entity_text"
FACT_TEXT_INDEX = "epigraph_fact_text"
EPISODE_TEXT_INDEX = "epigraph_episode_text"
ENTITY_VECTOR_INDEX = "epigraph_entity_name_vector"
FACT_VECTOR_INDEX = "epigraph_fact_text_vector"
EPISODE_VECTOR_INDEX = "epigraph_episode_content_vector"

# (property, BM25 boost) each fulltext index searches by text, plus group_id (only the zero-boost group
# clause uses it). Entity boosts match the embedded store's bm25 weights: a name match outranks a passing
# mention.
ENTITY_TEXT_FIELDS = (("name", 10.0), ("aliases", 5.0), ("summary", 1.0))
FACT_TEXT_FIELDS = (("text", 1.0),)
EPISODE_TEXT_FIELDS = (("content", 1.0),)
# The exact lookups ride in the same indexes, in fields no text search names (lucene.exact_query): an
# entity's hashed normalized names, and the episodes a fact lists (its provenance). One index per kind
# instead of a second, keyword-analyzed one halves the Lucene documents a write adds and the indexes its
# commit refreshes (tools/neo4j/README.md "Fewer fulltext indexes").
ENTITY_NAME_KEYS_FIELD = "name_keys"
FACT_EPISODES_FIELD = "episodes"
# The analyzer of the three fulltext indexes: Lucene's EnglishAnalyzer (lower-case, English stop words
# dropped, Porter stemming), so "hiking" finds "hikes" as in the embedded store.
TEXT_ANALYZER = "english"


# --- composable predicates (built from literals at import time) ------------------------------------
def fact_pred(r: str) -> str:
    """The TimeFilter + relations predicate over fact variable ``r`` (see graph.temporal.matches).

    Known at ``$known_at`` (created by then, not withdrawn: an expiry without an invalidation), and valid
    at ``$as_of`` within the interval believed at ``$known_at``: it ends at ``previous_invalid_at`` while
    a recorded contradiction had not arrived yet (``$known_at < expired_at``), else at ``invalid_at``; it
    starts at ``valid_at``, or for an unknown start at ``stated_at`` unless that end is no later
    (``temporal.start_of``). A fact is invalidated when both ``invalidated_by_*`` properties are set, as
    in ``convert.fact_from``.
    """
    invalidated = f"({r}.invalidated_by_fact IS NOT NULL AND {r}.invalidated_by_episode IS NOT NULL)"
    end = (
        f"(CASE WHEN {invalidated} AND {r}.expired_at IS NOT NULL AND $known_at < {r}.expired_at"
        f" THEN {r}.previous_invalid_at ELSE {r}.invalid_at END)"
    )
    return (
        f"($include_retired OR ("
        f"{r}.created_at <= $known_at"
        f" AND ({r}.expired_at IS NULL OR {invalidated} OR $known_at < {r}.expired_at)"
        f" AND (CASE WHEN {r}.valid_at IS NOT NULL THEN {r}.valid_at <= $as_of"
        f" WHEN {r}.stated_at IS NULL OR {r}.stated_at <= $as_of THEN true"
        f" ELSE coalesce({end} <= {r}.stated_at, false) END)"
        f" AND coalesce($as_of < {end}, true)))"
        f" AND ($relations IS NULL OR {r}.relation IN $relations)"
    )


def episode_pred(ep: str) -> str:
    """The TimeFilter predicate over episode variable ``ep`` (graph.temporal.episode_matches): said by
    ``$said_by``, stored by ``$stored_by``, a null bound being none (filters.episode_params)."""
    return (
        f"($said_by IS NULL OR {ep}.reference_time <= $said_by)"
        f" AND ($stored_by IS NULL OR {ep}.created_at <= $stored_by)"
    )


def labels_pred(e: str) -> str:
    return f"($labels IS NULL OR any(label IN {e}.labels WHERE label IN $labels))"


# Reads return datetimes as integer microseconds since the epoch (convert.from_micros): the driver's
# own DATETIME decoding was a third of a hybrid search's client time.
FACT_TIMES = ("valid_at", "invalid_at", "stated_at", "created_at", "expired_at", "previous_invalid_at")
ENTITY_TIMES = ("created_at",)
EPISODE_TIMES = ("reference_time", "created_at")


def micros(value: str) -> str:
    """The epoch microseconds of the datetime expression ``value`` (null stays null)."""
    return f"{value}.epochSeconds * 1000000 + {value}.microsecond"


def _props(v: str, times: tuple[str, ...], without: str | None = None) -> str:
    """All properties of ``v`` with each datetime in ``times`` as epoch microseconds (null stays null);
    the property ``without`` (an embedding) as null."""
    fields = [f"{t}: {micros(f'{v}.{t}')}" for t in times]
    if without is not None:
        fields.append(f"{without}: null")
    return f"{v} {{.*, {', '.join(fields)}}}"


def fact_map(r: str, vectors: bool = True) -> str:
    """A fact as a map: its properties plus its endpoints' uuids (see convert.fact_from); its embedding
    null without ``vectors``."""
    props = _props(r, FACT_TIMES, None if vectors else "text_embedding")
    return f"{{props: {props}, source_uuid: startNode({r}).uuid, target_uuid: endNode({r}).uuid}}"


def entity_map(e: str, vectors: bool = True) -> str:
    return _props(e, ENTITY_TIMES, None if vectors else "name_embedding")


def episode_map(ep: str, vectors: bool = True) -> str:
    return _props(ep, EPISODE_TIMES, None if vectors else "content_embedding")


FACT_PRED = fact_pred("r")
EPISODE_PRED = episode_pred("ep")
FACT_MAP = fact_map("r")
ENTITY_MAP = entity_map("e")
EPISODE_MAP = episode_map("ep")

# --- writes -----------------------------------------------------------------------------------------
# Rows come from convert.*_row: the (group_id, uuid) key, `props` to set, datetimes as ISO strings.
# Every MERGE and MATCH on a key is a seek in the (group_id, uuid) uniqueness constraint's index; the
# MATCHes say so (`USING INDEX SEEK`), because the planner otherwise picks by statistics: on a young
# graph it chose scans of the whole index per row.
# All rows travel in ONE map parameter, `$rows`: Neo4j caches a plan per size class of each list
# parameter (1, 2-10, 11-100, ...), and WRITE_EPISODE is slow to plan; inside a map, one plan.
# With every lookup pinned to a seek, a replan can only reproduce the same plan, so the two statements
# of an episode write skip the replans Neo4j schedules as the graph's counts grow (`replan=skip`).
_FIXED_PLAN = "CYPHER replan=skip"

# A group's lock: one (:GroupLock {group_id}) node (unique), write-locked until the transaction ends by
# every transaction that changes the group's graph (an episode's write or deletion, a correction, a load,
# a group's deletion) before it writes, and by a dump before it reads. Neo4j reads committed data, not a
# snapshot, so this is what keeps a dump of a running server from seeing an episode's write halfway.
LOCK_GROUP = "MERGE (lock:GroupLock {group_id: $group_id}) SET lock._lock = true REMOVE lock._lock"


def _seek(var: str, label: str) -> str:
    """The hint that pins a key lookup of ``var`` to the (group_id, uuid) index."""
    return f"USING INDEX SEEK {var}:{label}(group_id, uuid)"


_UPSERT_EPISODE_ROWS = """
UNWIND $rows.episodes AS row
MERGE (ep:Episode {group_id: row.group_id, uuid: row.uuid})
SET ep += row.props, ep.reference_time = datetime(row.reference_time),
    ep.created_at = datetime(row.created_at)
"""
_UPSERT_ENTITY_ROWS = """
UNWIND $rows.entities AS row
MERGE (e:Entity {group_id: row.group_id, uuid: row.uuid})
SET e += row.props, e.created_at = datetime(row.created_at)
"""
# Fact ends and mentioned entities are positions in $rows.endpoints (entity uuids), each looked up ONCE per
# statement (writing._statement_rows): `nodes[i][0]` is the entity at position i, or null if it is missing.
_RESOLVE_ENDPOINTS = f"""
UNWIND range(0, size($rows.endpoints) - 1) AS i
OPTIONAL MATCH (e:Entity {{group_id: $group_id, uuid: $rows.endpoints[i]}})
{_seek("e", "Entity")}
WITH i, e ORDER BY i
RETURN collect([e]) AS nodes
"""
# A fact whose uuid already exists between other endpoints is moved (delete + merge). A row whose
# endpoint is missing writes nothing and is absent from `*_written` (the caller then rolls back).
_UPSERT_FACT_ROWS = f"""
UNWIND $rows.facts AS row
WITH row, nodes[row.source][0] AS a, nodes[row.target][0] AS b
WHERE a IS NOT NULL AND b IS NOT NULL
CALL (row, a, b) {{
  OPTIONAL MATCH (x)-[old:RELATES_TO {{group_id: row.group_id, uuid: row.uuid}}]->(y)
  {_seek("old", "RELATES_TO")}
  WHERE x <> a OR y <> b
  DELETE old
}}
MERGE (a)-[r:RELATES_TO {{group_id: row.group_id, uuid: row.uuid}}]->(b)
SET r += row.props, r.valid_at = datetime(row.valid_at), r.invalid_at = datetime(row.invalid_at),
    r.stated_at = datetime(row.stated_at), r.created_at = datetime(row.created_at),
    r.expired_at = datetime(row.expired_at), r.previous_invalid_at = datetime(row.previous_invalid_at)
RETURN collect(r.uuid) AS facts_written
"""
# $rows.mentions: one row per episode, with the (distinct) positions of the entities it mentions. An episode
# without mentions yet (the usual case: a new one) gets them by CREATE, which takes no lock until commit;
# another one by MERGE. Two writes of one episode cannot race here: the episode's SET above locks it.
_UPSERT_MENTION_ROWS = f"""
UNWIND $rows.mentions AS row
MATCH (ep:Episode {{group_id: $group_id, uuid: row.episode_uuid}}) {_seek("ep", "Episode")}
WITH row, ep, EXISTS {{ (ep)-[:MENTIONS]->() }} AS known
UNWIND row.entities AS i
WITH row, ep, known, i, nodes[i][0] AS e
WHERE e IS NOT NULL
CALL (ep, e, known) {{
  WITH * WHERE known
  MERGE (ep)-[:MENTIONS]->(e)
}}
CALL (ep, e, known) {{
  WITH * WHERE NOT known
  CREATE (ep)-[:MENTIONS]->(e)
}}
RETURN collect(row.episode_uuid + ' ' + $rows.endpoints[i]) AS mentions_written
"""
UPSERT_EPISODES = _UPSERT_EPISODE_ROWS
# The rows of $rows.entities already stored as they are: their row_hash (writing._unchanged_entities).
UNCHANGED_ENTITIES = f"""{_FIXED_PLAN}
UNWIND $rows.entities AS row
MATCH (e:Entity {{group_id: $group_id, uuid: row.uuid}}) {_seek("e", "Entity")}
WITH e, row WHERE e.row_hash = row.row_hash
RETURN collect(row.row_hash) AS hashes
"""
# write_episode: all four kinds in ONE statement (one round trip), in this order, so a fact finds the
# entities of the same statement. Bigger writes run it once per chunk of rows (see writing).
# The group's lock node (see LOCK_GROUP), taken before anything is written and held until commit.
WRITE_EPISODE = f"""{_FIXED_PLAN}
CALL () {{ {LOCK_GROUP} }}
CALL () {{{_UPSERT_EPISODE_ROWS}}}
CALL () {{{_UPSERT_ENTITY_ROWS}}}
CALL () {{{_RESOLVE_ENDPOINTS}}}
CALL (nodes) {{{_UPSERT_FACT_ROWS}}}
CALL (nodes) {{{_UPSERT_MENTION_ROWS}}}
RETURN facts_written, mentions_written
"""


# --- episodes -----------------------------------------------------------------------------------------
_EPISODE_KEY = f"(ep:Episode {{group_id: $group_id, uuid: $uuid}}) {_seek('ep', 'Episode')}"
GET_EPISODE = f"MATCH {_EPISODE_KEY} RETURN {EPISODE_MAP} AS ep"
# An episode write ``unless_done`` takes the episode's write lock (held to the end of the transaction) before
# it reads the status, in a statement of its own: a second writer waits here until the first commits. The
# group's lock comes first, in the same statement: every writer of a group takes the group's lock before
# an episode's, so a correction or a deletion (which hold it, then lock episodes) never waits in a cycle.
LOCK_EPISODE = f"{LOCK_GROUP} WITH lock MATCH {_EPISODE_KEY} SET ep._lock = true REMOVE ep._lock"
EPISODE_STATUS = f"MATCH {_EPISODE_KEY} RETURN ep.status AS status"
# An episode's claim (claims.py): two properties of its node, read and set after LOCK_EPISODE in the same
# transaction; the expiry in epoch milliseconds of the server's clock, so every client judges it alike.
CLAIM_EPISODE = f"""
MATCH {_EPISODE_KEY}
WITH ep, timestamp() AS now
WITH ep, now, (ep.claim_owner IS NULL OR ep.claim_owner = $owner OR ep.claim_until <= now) AS free
FOREACH (_ IN CASE WHEN free THEN [1] ELSE [] END |
    SET ep.claim_owner = $owner, ep.claim_until = now + $ms)
RETURN ep.claim_owner AS owner, ep.claim_until AS until
"""
# Entities whose summaries a batch still owes: a ``summary_owed`` property of the entity node (entity
# upserts set ``e += props``, which keeps it), set and removed in the episode's write transaction.
_OWED_KEYS = f"UNWIND $uuids AS u MATCH (e:Entity {{group_id: $group_id, uuid: u}}) {_seek('e', 'Entity')}"
PAY_SUMMARIES = f"{_OWED_KEYS} REMOVE e.summary_owed"
OWE_SUMMARIES = f"{_OWED_KEYS} SET e.summary_owed = true"
OWED_SUMMARIES = (
    "MATCH (e:Entity {group_id: $group_id}) WHERE e.summary_owed RETURN e.uuid AS uuid ORDER BY uuid"
)
RELEASE_EPISODE = f"MATCH {_EPISODE_KEY} WHERE ep.claim_owner = $owner REMOVE ep.claim_owner, ep.claim_until"
_EPISODES = f"""
MATCH (ep:Episode {{group_id: $group_id}})
WHERE ($since IS NULL OR ep.reference_time >= $since) AND ($until IS NULL OR ep.reference_time < $until)
  AND ($status IS NULL OR ep.status = $status)
RETURN {EPISODE_MAP} AS ep
"""
EPISODES_NEWEST = _EPISODES + "ORDER BY ep.reference_time DESC, ep.created_at DESC, ep.uuid DESC LIMIT $limit"
EPISODES_OLDEST = _EPISODES + "ORDER BY ep.reference_time, ep.created_at, ep.uuid LIMIT $limit"


# Up to $window episodes on each side of each given one in the group's episode order (reference_time,
# created_at, uuid), the given ones left out. An ORDER BY over the whole key reads every earlier episode
# of the group (PROFILE: rows read grow with the group, not the hits), so each side first takes the $window
# nearest other reference times in (group_id, reference_time) index order (ordering by both properties
# is what lets the planner read the index in order and stop), then reads the range from the farthest of
# them to the hit's own time (the nearest $window and any ties) in full order. The tie test is a CASE so
# the planner cannot split it into a scan of the uuid index. Only episodes passing the time filter
# (episode_pred) are neighbours.
def _episodes_side(before: bool) -> str:
    """The $window episodes just before (or after) episode ``c``, nearest first."""
    cmp, order = ("<", "DESC") if before else (">", "ASC")
    low, high = ("bound", "at") if before else ("at", "bound")
    return f"""
    WITH c, COLLECT {{
        MATCH (x:Episode {{group_id: $group_id}}) USING INDEX SEEK x:Episode(group_id, reference_time)
        WHERE x.reference_time {cmp} c.reference_time AND {episode_pred("x")}
        RETURN x.reference_time ORDER BY x.group_id {order}, x.reference_time {order} LIMIT $window
    }} AS nearest
    WITH c, c.reference_time AS at, coalesce(nearest[-1], c.reference_time) AS bound
    MATCH (ep:Episode {{group_id: $group_id}}) USING INDEX SEEK ep:Episode(group_id, reference_time)
    WHERE ep.reference_time >= {low} AND ep.reference_time <= {high} AND {EPISODE_PRED}
      AND CASE WHEN ep.reference_time = at
          THEN ep.created_at {cmp} c.created_at OR (ep.created_at = c.created_at AND ep.uuid {cmp} c.uuid)
          ELSE true END
    WITH ep ORDER BY ep.reference_time {order}, ep.created_at {order}, ep.uuid {order} LIMIT $window
    RETURN ep"""


EPISODES_AROUND = f"""
UNWIND $uuids AS u
MATCH (c:Episode {{group_id: $group_id, uuid: u}}) {_seek("c", "Episode")}
CALL (c) {{{_episodes_side(before=True)}
  UNION{_episodes_side(before=False)}
}}
WITH DISTINCT ep
WHERE NOT ep.uuid IN $uuids
RETURN {EPISODE_MAP} AS ep
"""
EPISODES_MENTIONING = f"""
MATCH (e:Entity {{group_id: $group_id, uuid: $entity_uuid}})<-[:MENTIONS]-(ep:Episode {{group_id: $group_id}})
{_seek("e", "Entity")}
WHERE {EPISODE_PRED}
RETURN {EPISODE_MAP} AS ep
ORDER BY ep.reference_time DESC, ep.created_at DESC, ep.uuid DESC LIMIT $limit
"""

# --- lookups ------------------------------------------------------------------------------------------
GET_ENTITIES = f"""
UNWIND $uuids AS u
MATCH (e:Entity {{group_id: $group_id, uuid: u}}) {_seek("e", "Entity")}
RETURN {ENTITY_MAP} AS e
"""
GET_FACTS = f"""
UNWIND $uuids AS u
MATCH ()-[r:RELATES_TO {{group_id: $group_id, uuid: u}}]->() {_seek("r", "RELATES_TO")}
RETURN {FACT_MAP} AS fact
"""
# $query (lucene.exact_query over name_keys) finds the candidates by hashed name; the exact check is on
# norm_names.
ENTITIES_BY_NAMES = f"""
CALL db.index.fulltext.queryNodes($index, $query) YIELD node AS e
WHERE e.group_id = $group_id AND any(n IN e.norm_names WHERE n IN $names)
RETURN {ENTITY_MAP} AS e
"""
FACTS_BETWEEN = f"""
MATCH (x:Entity {{group_id: $group_id, uuid: $a}})-[r:RELATES_TO]-(y:Entity {{group_id: $group_id, uuid: $b}})
{_seek("x", "Entity")} {_seek("y", "Entity")}
WHERE {FACT_PRED}
WITH DISTINCT r
RETURN {FACT_MAP} AS fact
ORDER BY r.created_at DESC, r.uuid
"""
FACTS_AROUND = f"""
MATCH (x:Entity {{group_id: $group_id}}) {_seek("x", "Entity")} WHERE x.uuid IN $uuids
MATCH (x)-[r:RELATES_TO]-()
WHERE {FACT_PRED}
WITH DISTINCT r
RETURN {FACT_MAP} AS fact
ORDER BY r.created_at DESC, r.uuid LIMIT $limit
"""
NEIGHBOURS_STEP = f"""
MATCH (x:Entity {{group_id: $group_id}}) {_seek("x", "Entity")} WHERE x.uuid IN $frontier
MATCH (x)-[r:RELATES_TO]-(n:Entity)
WHERE {FACT_PRED} AND NOT n.uuid IN $seen
RETURN DISTINCT n.uuid AS uuid
"""
MENTION_COUNTS = f"""
UNWIND $uuids AS u
MATCH (e:Entity {{group_id: $group_id, uuid: u}}) {_seek("e", "Entity")}
RETURN u AS uuid, COUNT {{ (ep:Episode)-[:MENTIONS]->(e) }} AS n
"""


# --- stats ----------------------------------------------------------------------------------------------
STATS = f"""
CALL () {{
  MATCH (ep:Episode) WHERE $group_id IS NULL OR ep.group_id = $group_id RETURN count(ep) AS episodes
}}
CALL () {{
  MATCH (e:Entity) WHERE $group_id IS NULL OR e.group_id = $group_id
  RETURN count(e) AS entities, count(CASE WHEN e.summary_owed THEN 1 END) AS owed_summaries
}}
CALL () {{
  MATCH ()-[r:RELATES_TO]->() WHERE $group_id IS NULL OR r.group_id = $group_id
  RETURN count(r) AS facts, count(CASE WHEN {FACT_PRED} THEN 1 END) AS current_facts
}}
CALL () {{
  MATCH (ep:Episode)-[m:MENTIONS]->() WHERE $group_id IS NULL OR ep.group_id = $group_id
  RETURN count(m) AS mentions
}}
CALL () {{
  MATCH (d:DecisionRecord) WHERE $group_id IS NULL OR d.group_id = $group_id
  RETURN count(d) AS decision_records, coalesce(sum(d.bytes), 0) AS decision_bytes
}}
RETURN episodes, entities, facts, current_facts, mentions, owed_summaries, decision_records, decision_bytes
"""
