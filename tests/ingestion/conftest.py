"""The queue's tests ask for an in-memory store by ``store``, as the pipeline's do (the root conftest's
``memory_store``); their scripted world is ``tests/support/world.py``."""

from __future__ import annotations

import pytest

from epigraph.graph.embedded import EmbeddedStore


@pytest.fixture
def store(memory_store: EmbeddedStore) -> EmbeddedStore:
    return memory_store
