"""A process that ran the server exits quietly: the server freezes what start-up built out of the
collector's sight (``gc.freeze``) and gives it back when it stops, else nanobind's modules (triton's,
imported with the embedding model) print ~100 lines of "leaked function" warnings at exit."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest

SCRIPT = """
import asyncio
import triton  # a nanobind module, as the embedding model's libraries import it

from epigraph.client import KnowledgeGraph
from epigraph.config import Settings
from epigraph.serve import create_app
from epigraph.serve.service import running


async def main():
    app = create_app(KnowledgeGraph(Settings(db_path=":memory:", embedder="hash")))
    async with running(app.state.server):
        pass


asyncio.run(main())
print("stopped")
"""


@pytest.mark.skipif(importlib.util.find_spec("triton") is None, reason="no triton (a nanobind module)")
def test_a_stopped_server_leaves_nothing_frozen_for_nanobind_to_report() -> None:
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.strip() == "stopped", done.stderr[-3000:]
    assert "nanobind" not in done.stderr and "leaked" not in done.stderr, done.stderr[-3000:]
