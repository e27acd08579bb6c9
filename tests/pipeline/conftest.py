"""The pipeline's tests ask for an in-memory store by ``store`` (the root conftest's ``memory_store``)."""

from __future__ import annotations

import pytest

from epigraph.graph.embedded import EmbeddedStore


@pytest.fixture
def store(memory_store: EmbeddedStore) -> EmbeddedStore:
    return memory_store
