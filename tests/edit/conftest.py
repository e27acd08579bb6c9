"""Fixtures of the corrections-by-hand tests: the quickstart conversation ingested with its recorded
answers (``quickstart``) into the root conftest's ``store`` (embedded and the real Neo4j)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from epigraph import KnowledgeGraph
from epigraph.config import Settings
from epigraph.graph.store import GraphStore
from epigraph.testing import HashEmbedder
from tests.support.quickstart import ingest_quickstart, quickstart_llm
from tests.support.stores import DIM


@pytest.fixture
async def quickstart(store: GraphStore, group: str) -> AsyncIterator[KnowledgeGraph]:
    """A graph on ``store`` (group ``group``) holding the quickstart conversation; corrections by
    ``person:alice`` unless told otherwise."""
    settings = Settings(db_path=":memory:", author="alice")
    kg = KnowledgeGraph(
        settings, store=store, llm=quickstart_llm(), embedder=HashEmbedder(dim=DIM), group_id=group
    )
    await ingest_quickstart(kg)
    yield kg
    await store.delete_group(group)  # Neo4j is shared by the whole run: leave its indexes as they were
