"""Fixtures that several folders use; a folder's own ``conftest.py`` may give a name another meaning
(its fixture wins there).

- ``any_store``: a ready store (``setup(DIM)`` done) of every backend, closed after the test: a fresh
  EmbeddedStore on a file in ``tmp_path``, and a Neo4jStore on the server ``EPIGRAPH_NEO4J_URI`` names
  (``make test`` starts a real one; without it those cases skip, except in CI, where they fail).
- ``store``: the same, under the name the store contract (``tests/graph/``), corrections and transfer
  use; ``pipeline/`` and ``ingestion/`` mean an in-memory store by it (``memory_store``), ``ask/`` and
  ``overview/`` a store of their own.
- ``embedder`` (``HashEmbedder``, 64 dimensions) and ``memory_store``: a fresh in-memory embedded
  store for it.
- ``group``, ``other_group``: group ids no other test uses, so stores are never wiped between tests.

At the end of the session the suite prints how many Neo4j cases passed, failed and were skipped.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from epigraph.graph.embedded import EmbeddedStore
from epigraph.graph.store import GraphStore
from epigraph.testing import HashEmbedder
from tests.support.stores import DIM, NEO4J_SKIP, neo4j_store


@pytest.fixture(params=["embedded", pytest.param("neo4j", marks=pytest.mark.neo4j)])
async def any_store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[GraphStore]:
    backend = EmbeddedStore(str(tmp_path / "graph.db")) if request.param == "embedded" else neo4j_store()
    try:
        await backend.setup(embedding_dim=DIM)
        yield backend
    finally:
        await backend.close()


@pytest.fixture
def store(any_store: GraphStore) -> GraphStore:
    return any_store


@pytest.fixture
def embedder() -> HashEmbedder:
    return HashEmbedder(dim=64)


@pytest.fixture
async def memory_store(embedder: HashEmbedder) -> AsyncIterator[EmbeddedStore]:
    async with EmbeddedStore(":memory:") as s:
        await s.setup(embedder.dim)
        yield s


@pytest.fixture
def group() -> str:
    return f"t-{uuid.uuid4().hex}"


@pytest.fixture
def other_group() -> str:
    return f"u-{uuid.uuid4().hex}"


# --- the Neo4j tally --------------------------------------------------------------------------------

_NEO4J_ID = re.compile(r"\[(?:.*-)?neo4j(?:-.*)?\]$")


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Print how many Neo4j-backed tests ran, so a skipped backend is visible in every run."""
    tally: dict[str, set[str]] = {}
    for outcome in ("passed", "failed", "error", "skipped"):
        for report in terminalreporter.stats.get(outcome, []):
            nodeid = getattr(report, "nodeid", "")
            if _NEO4J_ID.search(nodeid) or "neo4j" in getattr(report, "keywords", {}):  # marker
                tally.setdefault(outcome, set()).add(nodeid)
    if not tally:
        return
    counts = ", ".join(f"{len(tally.get(o, ()))} {o}" for o in ("passed", "failed", "error", "skipped"))
    terminalreporter.write_sep("-", "Neo4j store contract")
    terminalreporter.write_line(f"Neo4j tests: {counts}")
    if tally.get("skipped") and not (tally.get("passed") or tally.get("failed")):
        terminalreporter.write_line(f"Neo4j tests did not run: {NEO4J_SKIP}")
