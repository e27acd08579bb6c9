"""The stores the tests open: the suite's embedding dimension, the real Neo4j that ``EPIGRAPH_NEO4J_URI``
names (``make test`` starts one), and a second handle on a store's data."""

from __future__ import annotations

import os

from epigraph.graph.embedded import EmbeddedStore
from epigraph.graph.store import GraphStore
from tests.support.ci import skip_or_fail

DIM = 384
"""Embedding dimension of the store contract (``any_store`` is set up with it; ``records.vec`` makes it)."""

NEO4J_SKIP = "EPIGRAPH_NEO4J_URI not set: run `make test` to start a real Neo4j"


def neo4j_store() -> GraphStore:
    """A Neo4jStore on the suite's server (not set up); skips the test without one (fails in CI)."""
    uri = os.environ.get("EPIGRAPH_NEO4J_URI")
    if not uri:
        skip_or_fail(NEO4J_SKIP, "the Neo4j contract")
    from epigraph.graph.neo4j import Neo4jStore  # type: ignore[attr-defined, unused-ignore]

    store: GraphStore = Neo4jStore(
        uri=uri,
        user=os.environ.get("EPIGRAPH_NEO4J_USER", "neo4j"),
        password=os.environ.get("EPIGRAPH_NEO4J_PASSWORD") or None,
        database=os.environ.get("EPIGRAPH_NEO4J_DATABASE", "neo4j"),
    )
    return store


def second_store(store: GraphStore) -> GraphStore:
    """Another store on the same data: its own connection (SQLite) or driver (Neo4j)."""
    if isinstance(store, EmbeddedStore):
        return EmbeddedStore(store.path)
    return neo4j_store()
