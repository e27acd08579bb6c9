"""The schema statements of the Neo4j backend (constraints, indexes, and what ``schema`` inspects them
with), as constants: the DDL beside ``cypher``'s queries, under the same rules (every value a
``$parameter``, fragments composed at import time from trusted literals only).

Index names, the fields a fulltext index covers and the analyzers live in ``cypher``: queries name them too.
"""

from __future__ import annotations

from .cypher import TEXT_ANALYZER

# setup migrates older graphs when it creates these two (schema.MIGRATIONS)
FACT_START_INDEX = "epigraph_fact_start"
FACT_KNOWN_FROM_INDEX = "epigraph_fact_known_from"
CONSTRAINTS = (
    "CREATE CONSTRAINT epigraph_episode_key IF NOT EXISTS "
    "FOR (n:Episode) REQUIRE (n.group_id, n.uuid) IS UNIQUE",
    "CREATE CONSTRAINT epigraph_entity_key IF NOT EXISTS "
    "FOR (n:Entity) REQUIRE (n.group_id, n.uuid) IS UNIQUE",
    "CREATE CONSTRAINT epigraph_fact_key IF NOT EXISTS "
    "FOR ()-[r:RELATES_TO]-() REQUIRE (r.group_id, r.uuid) IS UNIQUE",
    # derived records (cypher_derived)
    "CREATE CONSTRAINT epigraph_community_key IF NOT EXISTS "
    "FOR (n:Community) REQUIRE (n.group_id, n.uuid) IS UNIQUE",
    "CREATE CONSTRAINT epigraph_conversation_key IF NOT EXISTS "
    "FOR (n:Conversation) REQUIRE (n.group_id, n.key) IS UNIQUE",
    # corrections by hand and the groups' locks (cypher_edit)
    "CREATE CONSTRAINT epigraph_correction_key IF NOT EXISTS "
    "FOR (n:Correction) REQUIRE (n.group_id, n.uuid) IS UNIQUE",
    "CREATE CONSTRAINT epigraph_group_lock_key IF NOT EXISTS FOR (n:GroupLock) REQUIRE n.group_id IS UNIQUE",
    # forgetting's audit records and the retention policies (cypher_forget)
    "CREATE CONSTRAINT epigraph_forgetting_key IF NOT EXISTS "
    "FOR (n:Forgetting) REQUIRE (n.group_id, n.uuid) IS UNIQUE",
    "CREATE CONSTRAINT epigraph_retention_key IF NOT EXISTS FOR (n:Retention) REQUIRE n.group_id IS UNIQUE",
    # the redaction vault (cypher_vault)
    "CREATE CONSTRAINT epigraph_redaction_vault_key IF NOT EXISTS "
    "FOR (n:RedactionVault) REQUIRE n.group_id IS UNIQUE",
    "CREATE CONSTRAINT epigraph_redaction_key IF NOT EXISTS "
    "FOR (n:Redaction) REQUIRE (n.group_id, n.digest) IS UNIQUE",
    "CREATE CONSTRAINT epigraph_redaction_number IF NOT EXISTS "
    "FOR (n:Redaction) REQUIRE (n.group_id, n.kind, n.number) IS UNIQUE",
    # decision records (cypher_decisions)
    "CREATE CONSTRAINT epigraph_decision_record_key IF NOT EXISTS "
    "FOR (n:DecisionRecord) REQUIRE (n.group_id, n.episode_uuid) IS UNIQUE",
)
RANGE_INDEXES = (
    "CREATE INDEX epigraph_episode_group IF NOT EXISTS FOR (n:Episode) ON (n.group_id)",
    "CREATE INDEX epigraph_episode_group_time IF NOT EXISTS "
    "FOR (n:Episode) ON (n.group_id, n.reference_time)",
    "CREATE INDEX epigraph_entity_group IF NOT EXISTS FOR (n:Entity) ON (n.group_id)",
    # a chain's episodes in order (cypher_derived.CHAIN_EPISODES_*)
    "CREATE INDEX epigraph_episode_chain IF NOT EXISTS "
    "FOR (n:Episode) ON (n.group_id, n.source_description, n.reference_time)",
    "CREATE INDEX epigraph_correction_group_time IF NOT EXISTS "
    "FOR (n:Correction) ON (n.group_id, n.created_at)",
    "CREATE INDEX epigraph_forgetting_group_time IF NOT EXISTS FOR (n:Forgetting) ON (n.group_id, n.at)",
    "CREATE INDEX epigraph_decision_record_group_time IF NOT EXISTS "
    "FOR (n:DecisionRecord) ON (n.group_id, n.created_at)",
    # The exact vector scan's way in: a group's facts that can be valid at $as_of (start_us <= it).
    f"CREATE INDEX {FACT_START_INDEX} IF NOT EXISTS FOR ()-[r:RELATES_TO]-() ON (r.group_id, r.start_us)",
    # ... and the facts that can be known at $known_at (known_from_us, their created_at, <= it).
    f"CREATE INDEX {FACT_KNOWN_FROM_INDEX} IF NOT EXISTS "
    "FOR ()-[r:RELATES_TO]-() ON (r.group_id, r.known_from_us)",
    "CREATE INDEX epigraph_fact_invalidated_by IF NOT EXISTS "
    "FOR ()-[r:RELATES_TO]-() ON (r.group_id, r.invalidated_by_episode)",
    "CREATE INDEX epigraph_fact_invalidated_by_fact IF NOT EXISTS "
    "FOR ()-[r:RELATES_TO]-() ON (r.group_id, r.invalidated_by_fact)",
)
# Indexes earlier versions created and no statement uses (every fact and mention paid an entry in each;
# a time filter applies after a fact is reached through an entity or an index search): setup drops them.
OBSOLETE_INDEXES = (
    "epigraph_fact_valid_at",
    "epigraph_fact_invalid_at",
    "epigraph_fact_created_at",
    "epigraph_fact_expired_at",
    "epigraph_mention_group",
    "epigraph_fact_group",  # replaced by epigraph_fact_valid_from (group_id first: it serves group scans too)
    "epigraph_fact_valid_from",  # on valid_from_us, replaced by epigraph_fact_start (start_us)
    # keyword-analyzed twins of the entity and fact text indexes, whose fields those now cover
    "epigraph_entity_names",
    "epigraph_fact_episodes",
)
_TEXT_OPTIONS = "OPTIONS {indexConfig: {`fulltext.analyzer`: '" + TEXT_ANALYZER + "'}}"
# Each covers its text fields, an exact-lookup field where the kind has one (cypher: name_keys, episodes)
# and group_id. setup recreates an index of ours found over other fields or with another analyzer.
FULLTEXT_INDEXES = (
    "CREATE FULLTEXT INDEX epigraph_entity_text IF NOT EXISTS FOR (n:Entity) "
    "ON EACH [n.name, n.aliases, n.summary, n.name_keys, n.group_id] " + _TEXT_OPTIONS,
    "CREATE FULLTEXT INDEX epigraph_fact_text IF NOT EXISTS "
    "FOR ()-[r:RELATES_TO]-() ON EACH [r.text, r.episodes, r.group_id] " + _TEXT_OPTIONS,
    "CREATE FULLTEXT INDEX epigraph_episode_text IF NOT EXISTS "
    "FOR (n:Episode) ON EACH [n.content, n.group_id] " + _TEXT_OPTIONS,
)
# Quantization is off: the contract (and users) expect exact cosine order among the candidates.
# HNSW build beam 32 instead of Neo4j's 100 (M stays 16): inserting into the graph on commit is most of
# a write's cost, and a narrower beam writes much faster for a little less recall, which searches win
# back by over-fetching and rescoring (figures: docs/decisions/2026-11-22-neo4j-store.md).
_VECTOR_OPTIONS = (
    "OPTIONS {indexConfig: {`vector.dimensions`: $dim, `vector.similarity_function`: 'cosine', "
    "`vector.quantization.enabled`: false, `vector.hnsw.m`: 16, `vector.hnsw.ef_construction`: 32}}"
)
VECTOR_INDEXES = (
    "CREATE VECTOR INDEX epigraph_entity_name_vector IF NOT EXISTS FOR (n:Entity) ON (n.name_embedding) "
    + _VECTOR_OPTIONS,
    "CREATE VECTOR INDEX epigraph_fact_text_vector IF NOT EXISTS "
    "FOR ()-[r:RELATES_TO]-() ON (r.text_embedding) " + _VECTOR_OPTIONS,
    "CREATE VECTOR INDEX epigraph_episode_content_vector IF NOT EXISTS "
    "FOR (n:Episode) ON (n.content_embedding) " + _VECTOR_OPTIONS,
)
DROP_INDEX = "DROP INDEX $name IF EXISTS"
HAS_VECTORS = """
RETURN EXISTS { MATCH (e:Entity) WHERE e.name_embedding IS NOT NULL }
    OR EXISTS { MATCH ()-[r:RELATES_TO]->() WHERE r.text_embedding IS NOT NULL }
    OR EXISTS { MATCH (ep:Episode) WHERE ep.content_embedding IS NOT NULL } AS has_vectors
"""
SHOW_INDEXES = (
    "SHOW INDEXES YIELD name, type, entityType, labelsOrTypes, properties, options, state "
    "WHERE name IN $names RETURN name, type, entityType, labelsOrTypes, properties, options, state"
)
AWAIT_INDEXES = "CALL db.awaitIndexes($timeout)"
