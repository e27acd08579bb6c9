"""A third store with only the core (``graph.store.GraphStore``, 25 methods) behind ``KnowledgeGraph``:
ingestion, search, the entity view and ``ask`` work on it; the features that need an optional role
(corrections, the overview, export and load, stats) raise ``StoreRoleMissing`` naming the feature, the
role and the methods the store has not got.

The store is a real part: ``tests.support.core_store.CoreOnly``, whose every method is one of the core's,
delegating to an ``EmbeddedStore`` (it has no other public attribute, so it implements no optional role).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from epigraph import KnowledgeGraph
from epigraph.config import Settings
from epigraph.errors import StoreRoleMissing
from epigraph.graph.embedded import EmbeddedStore
from epigraph.testing import HashEmbedder, ScriptedLLM, ScriptedReply
from tests.support.core_store import CORE, CoreOnly
from tests.support.world import F, Turn, World

PARIS, LISBON = "Alice lives in Paris.", "Alice lives in Lisbon."
WORLD = World(
    {
        "Alice: I live in Paris.": Turn(
            ["Alice", "Paris"], [F("Alice", "Paris", "LIVES_IN", PARIS, "2020-03-01T00:00:00Z")]
        ),
        "Alice: I moved to Lisbon.": Turn(
            ["Alice", "Lisbon"], [F("Alice", "Lisbon", "LIVES_IN", LISBON, "2024-02-01T00:00:00Z")]
        ),
    },
    contradicts={LISBON: [PARIS]},
)


@pytest.fixture
async def kg(caplog: pytest.LogCaptureFixture) -> AsyncIterator[KnowledgeGraph]:
    """Alice's two moves, ingested in one batch through the core-only store."""
    graph = KnowledgeGraph(
        Settings(db_path=":memory:"),
        store=CoreOnly(EmbeddedStore(":memory:")),  # type: ignore[arg-type]  # the core, structurally
        llm=WORLD.llm(),
        embedder=HashEmbedder(dim=64),
        group_id="g",
    )
    async with graph:
        with caplog.at_level(logging.INFO, logger="epigraph.ingest"):
            results = await graph.add_episodes(
                [
                    {
                        "content": "Alice: I live in Paris.",
                        "reference_time": datetime(2020, 3, 1, tzinfo=UTC),
                    },
                    {
                        "content": "Alice: I moved to Lisbon.",
                        "reference_time": datetime(2024, 2, 1, tzinfo=UTC),
                    },
                ]
            )
        assert [r.ok for r in results] == [True, True]
        yield graph


async def test_ingestion_skips_the_overview_upkeep_and_says_so(
    kg: KnowledgeGraph, caplog: pytest.LogCaptureFixture
) -> None:
    said = [r.getMessage() for r in caplog.get_records("setup") if r.name == "epigraph.ingest"]
    assert [m for m in said if "no derived-view roles" in m and m.startswith("CoreOnly")]
    episodes = await kg.episodes()
    assert {e.content for e in episodes} == {"Alice: I live in Paris.", "Alice: I moved to Lisbon."}


async def test_search_and_the_entity_view_work_without_the_optional_roles(kg: KnowledgeGraph) -> None:
    found = await kg.search("Where does Alice live?")
    assert LISBON in [r.fact.text for r in found.facts]
    assert found.communities == ()
    view = await kg.entity("Alice")
    assert [f.text for f in view.current] == [LISBON]
    assert PARIS in [r.fact.text for r in view.history]
    assert view.corrections == ()


async def test_ask_answers_from_the_core(kg: KnowledgeGraph) -> None:
    def answer(request: Any) -> ScriptedReply:
        cited = [line for line in str(request.variables["facts"]).splitlines() if LISBON in line]
        return ScriptedReply(f"{LISBON} [{cited[0].split(':')[0]}]" if cited else "Nothing known.")

    kg.llm = ScriptedLLM(
        {
            "ask_plan": [
                '{"thought": "", "action": "search_facts", "query": "Alice lives"}',
                '{"thought": "", "action": "answer"}',
            ],
            "ask_answer": answer,
        }
    )
    result = await kg.ask("Where does Alice live?", streaming=False, mode="agent")
    assert LISBON in result.text
    assert result.citations


@pytest.mark.parametrize(
    ("feature", "role", "call"),
    [
        ("corrections", "CorrectionHistoryStore", lambda kg, tmp: kg.corrections.history()),
        ("corrections", "EditStore", lambda kg, tmp: kg.corrections.retire_fact("x", at=None, reason="")),
        ("communities", "OverviewStore", lambda kg, tmp: kg.overview.communities()),
        ("conversations", "OverviewStore", lambda kg, tmp: kg.overview.conversations()),
        ("export", "WholeGroups", lambda kg, tmp: kg.transfer.export(tmp / "g.jsonl")),
        ("stats", "WholeGroups", lambda kg, tmp: kg.stats()),
        ("delete_group", "WholeGroups", lambda kg, tmp: kg.delete_group()),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
async def test_a_feature_needing_an_optional_role_names_it(
    kg: KnowledgeGraph, tmp_path: Path, feature: str, role: str, call: Any
) -> None:
    with pytest.raises(StoreRoleMissing) as raised:
        await call(kg, tmp_path)
    error = raised.value
    assert (error.feature, error.role, error.store) == (feature, role, "CoreOnly")
    assert error.methods and not set(error.methods) & set(CORE)
    assert feature in str(error) and role in str(error) and error.methods[0] in str(error)
    assert not (tmp_path / "g.jsonl").exists()
