"""Fixtures of the GraphStore contract suite: one ``store`` fixture over every backend.

- ``embedded``: a fresh EmbeddedStore on a file in ``tmp_path``.
- ``neo4j``: a Neo4jStore on the server named by ``EPIGRAPH_NEO4J_URI`` (``make test`` starts a real
  one). Without it the neo4j cases are skipped, except in CI (``CI=true``/``1``) where a missing
  server is a failure: the contract must never pass there by silently skipping a backend.

Every test gets its own random ``group_id``, so stores are never wiped between tests. At the end of the
session the suite prints how many Neo4j cases passed, failed and were skipped.
"""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from epigraph.graph.embedded import EmbeddedStore
from epigraph.graph.store import GraphStore

DIM = 384
"""Embedding dimension of the suite (test_store_contract.DIM must be the same)."""

NEO4J_SKIP = "EPIGRAPH_NEO4J_URI not set: run `make test` to start a real Neo4j"


def _in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("true", "1")


def _neo4j_store() -> GraphStore:
    uri = os.environ.get("EPIGRAPH_NEO4J_URI")
    if not uri:
        if _in_ci():
            pytest.fail(f"{NEO4J_SKIP} (CI must run the Neo4j contract, not skip it)")
        pytest.skip(NEO4J_SKIP)
    from epigraph.graph.neo4j import Neo4jStore  # type: ignore[attr-defined, unused-ignore]

    store: GraphStore = Neo4jStore(
        uri=uri,
        user=os.environ.get("EPIGRAPH_NEO4J_USER", "neo4j"),
        password=os.environ.get("EPIGRAPH_NEO4J_PASSWORD") or None,
        database=os.environ.get("EPIGRAPH_NEO4J_DATABASE", "neo4j"),
    )
    return store


@pytest.fixture(params=["embedded", pytest.param("neo4j", marks=pytest.mark.neo4j)])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[GraphStore]:
    """A ready store (``setup(DIM)`` done), closed after the test."""
    backend: GraphStore
    if request.param == "embedded":
        backend = EmbeddedStore(str(tmp_path / "graph.db"))
    else:
        backend = _neo4j_store()
    try:
        await backend.setup(embedding_dim=DIM)
        yield backend
    finally:
        await backend.close()


@pytest.fixture
def group() -> str:
    """A group id no other test uses."""
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
