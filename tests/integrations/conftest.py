"""The adapter tests' graph: empty, in memory, its model the scripted world of
``tests/support/integrations_world.py`` through the real pipeline, with HashEmbedder."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from epigraph import KnowledgeGraph
from epigraph.config import Settings
from epigraph.testing import HashEmbedder
from tests.support.integrations_world import WORLD


@pytest.fixture
async def kg() -> AsyncIterator[KnowledgeGraph]:
    """An empty graph (in memory) whose model is the scripted world; default group ``default``."""
    settings = Settings(db_path=":memory:")
    async with KnowledgeGraph(settings, llm=WORLD.llm(), embedder=HashEmbedder(dim=64)) as graph:
        yield graph
