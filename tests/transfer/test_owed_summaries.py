"""A dump carries the summaries a group owes: an entity exported while its model summary is still due (a
``batch`` episode left it owed, its batch never ended) is loaded owed, not as if it were paid, and the
loaded graph's next batch end pays it. Entity lines say ``summary_owed`` (format version 2); a line
without it (version 1, or written by hand) owes nothing. Real SQLite, through ``kg.transfer``."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

from epigraph import KnowledgeGraph
from epigraph.graph.embedded import EmbeddedStore
from epigraph.pipeline.options import IngestOptions, SummaryOptions
from epigraph.testing import HashEmbedder
from epigraph.transfer import VERSION, read
from tests.support.meetings import FOUR, MET_BOB, MET_FOUR, WORLD, ticking
from tests.support.world import T0


def graph(store: EmbeddedStore, group: str, *, later: bool = False) -> KnowledgeGraph:
    """The graph, its clock a month on with ``later`` (the loaded graph: its facts are all in its past)."""
    clock = (lambda: T0 + timedelta(days=60)) if later else ticking()
    options = IngestOptions(summaries=SummaryOptions(mode="batch"), clock=clock)
    return KnowledgeGraph(
        store=store, llm=WORLD.llm(), embedder=HashEmbedder(dim=64), options=options, group_id=group
    )


def lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


async def test_an_owed_summary_is_exported_and_loaded_owed_then_paid(tmp_path: Path) -> None:
    dump = tmp_path / "g.jsonl"
    async with EmbeddedStore(":memory:") as first:
        kg = graph(first, "g")
        await kg.add_episode(MET_BOB, reference_time=T0)  # one at a time: no batch end pays Alice
        await kg.add_episode(MET_FOUR, reference_time=T0 + timedelta(days=1))
        [alice] = await first.owed_summaries("g")
        await kg.transfer.export(dump)

    written = lines(dump)
    assert written[0]["version"] == VERSION == 4
    assert "summary_owed" in written[0]["schema"]["entity"]  # type: ignore[index]
    owed = {e["name"]: e["summary_owed"] for e in written if e["record"] == "entity"}
    assert owed == {"Alice": True, "Bob": False, **dict.fromkeys(FOUR, False)}

    async with EmbeddedStore(":memory:") as second:
        moved = graph(second, "h", later=True)
        await moved.transfer.load(dump, into="h")
        assert await second.owed_summaries("h") == [alice]
        assert (await moved.stats()).owed_summaries == 1
        composed = (await moved.entity("Alice")).entity.summary
        assert not composed.startswith("Alice: ")

        await moved.retry_failed()  # a batch (of no failed episode) ends: it pays what the group owes
        assert await second.owed_summaries("h") == []
        assert (await moved.entity("Alice")).entity.summary.startswith("Alice: "), "the model's summary"


async def test_an_entity_line_without_the_field_owes_nothing(tmp_path: Path) -> None:
    dump = tmp_path / "g.jsonl"
    async with EmbeddedStore(":memory:") as store:
        kg = graph(store, "g")
        await kg.add_episode(MET_BOB, reference_time=T0)
        await kg.add_episode(MET_FOUR, reference_time=T0 + timedelta(days=1))
        await kg.transfer.export(dump)
    records = lines(dump)
    assert len(read([json.dumps(r) for r in records], "said").groups["g"].owed_summaries) == 1
    unsaid = [{k: v for k, v in r.items() if k != "summary_owed"} for r in records]
    assert read([json.dumps(r) for r in unsaid], "unsaid").groups["g"].owed_summaries == []
