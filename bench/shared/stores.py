"""Open a store for a benchmark: the embedded one on a file, or the Neo4j that EPIGRAPH_NEO4J_* name."""

from __future__ import annotations

from epigraph.client import store_from_settings
from epigraph.config import Settings
from epigraph.graph.store import GraphStore


async def open_store(kind: str, db_path: str, dim: int) -> GraphStore:
    """``kind`` is "embedded" (SQLite at ``db_path``) or "neo4j" (settings read from the environment)."""
    settings = Settings(db_path=db_path) if kind == "embedded" else Settings.from_env()
    if kind == "neo4j" and not settings.neo4j_uri:
        raise SystemExit("neo4j: set EPIGRAPH_NEO4J_URI (make bench starts a server)")
    store = store_from_settings(settings)
    await store.setup(embedding_dim=dim)
    return store
