"""The embedded backend: SQLite (WAL, FTS5) plus numpy vectors. Zero setup; the default store."""

from __future__ import annotations

from .schema import SCHEMA_VERSION
from .store import EmbeddedStore

__all__ = ["SCHEMA_VERSION", "EmbeddedStore"]
