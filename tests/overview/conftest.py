"""Fixtures of the overview tests: a fresh embedded store on a file."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from epigraph.graph.embedded import EmbeddedStore
from epigraph.testing import HashEmbedder


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[EmbeddedStore]:
    async with EmbeddedStore(str(tmp_path / "graph.db")) as backend:
        await backend.setup(HashEmbedder().dim)
        yield backend
