"""The ask tests' ``store``: the Alice graph of ``tests/support/ask_graph.py`` in a fresh in-memory store."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from epigraph.graph.embedded import EmbeddedStore
from epigraph.testing import HashEmbedder
from tests.support.ask_graph import ingest


@pytest.fixture
async def store(embedder: HashEmbedder) -> AsyncIterator[EmbeddedStore]:
    """The Alice graph (closed by the test's KnowledgeGraph or here)."""
    s = EmbeddedStore(":memory:")
    await s.setup(embedder.dim)
    await ingest(s, embedder)
    yield s
    await s.close()
