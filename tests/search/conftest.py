"""Fixtures of the search tests: ``graph`` = the small temporal graph of ``tests/support/search_graph.py``."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from epigraph.graph.embedded import EmbeddedStore
from epigraph.testing import HashEmbedder
from tests.support.search_graph import DIM, Graph, build


@pytest.fixture
async def graph() -> AsyncIterator[Graph]:
    store = EmbeddedStore(":memory:")
    await store.setup(embedding_dim=DIM)
    g = Graph(store=store, embedder=HashEmbedder(dim=DIM))
    try:
        await build(g)
        g.embedder.requests = 0  # count only what the tests do
        yield g
    finally:
        await store.close()
