from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime

import pytest

from epigraph.graph.embedded import EmbeddedStore
from epigraph.testing import HashEmbedder

T0 = datetime(2024, 3, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
def embedder() -> HashEmbedder:
    return HashEmbedder(dim=64)


@pytest.fixture
async def store(embedder: HashEmbedder) -> AsyncIterator[EmbeddedStore]:
    async with EmbeddedStore(":memory:") as s:
        await s.setup(embedder.dim)
        yield s
