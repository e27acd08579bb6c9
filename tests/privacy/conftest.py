"""The redaction tests' graph: the scene (``scene.py``) over a fresh SQLite file and test LLM server."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.support.privacy_scene import Setup, scene_at


@pytest.fixture
async def setup(tmp_path: Path) -> AsyncIterator[Setup]:
    async with scene_at(tmp_path / "graph.db") as scene:
        yield scene
