"""Neo4j backend of the GraphStore Protocol: all Cypher of epigraph lives in this package, once."""

from __future__ import annotations

from .store import Neo4jStore

__all__ = ["Neo4jStore"]
