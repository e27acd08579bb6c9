"""Summaries after an episode is removed (``KnowledgeGraph.remove_episode``, real SQLite): the entities it
touched are summarized again, and written only when a summary changed or an owed mark is paid (a
removal that changes no summary writes nothing: before, it re-wrote some episode of the group as it
had read it, which could set back a status another process wrote meanwhile). A removal that leaves the
group without episodes (its entities kept by facts added by hand) does not fail."""

from __future__ import annotations

import logging
from datetime import timedelta

import pytest

from epigraph import KnowledgeGraph
from epigraph.graph.embedded import EmbeddedStore
from epigraph.graph.store import EpisodeWrite
from epigraph.pipeline.options import IngestOptions, SummaryMode, SummaryOptions
from epigraph.testing import HashEmbedder
from tests.support.meetings import FOUR, HELLO, LIVES, MET_BOB, MET_FOUR, PARIS, WORLD, ticking
from tests.support.world import T0


class WritesSeen(EmbeddedStore):
    """The real store, its episode writes also kept in ``writes`` (a fake, not a mock)."""

    def __init__(self) -> None:
        super().__init__(":memory:")
        self.writes: list[EpisodeWrite] = []

    async def write_episode(self, write: EpisodeWrite) -> bool:
        self.writes.append(write)
        return await super().write_episode(write)


def graph(store: EmbeddedStore, summary_mode: SummaryMode = "episode") -> KnowledgeGraph:
    options = IngestOptions(summaries=SummaryOptions(mode=summary_mode), clock=ticking())
    return KnowledgeGraph(
        store=store, llm=WORLD.llm(), embedder=HashEmbedder(dim=64), options=options, group_id="g"
    )


async def alice(store: EmbeddedStore) -> str:
    [found] = (await store.entities_by_names("g", ["Alice"]))["Alice"]
    return found.summary


async def test_a_removal_that_changes_no_summary_writes_nothing() -> None:
    store = WritesSeen()
    async with graph(store) as kg:
        await kg.add_episode(PARIS, reference_time=T0)
        hello = await kg.add_episode(HELLO, reference_time=T0 + timedelta(days=1))
        assert await alice(store) == LIVES
        store.writes.clear()

        removal = await kg.remove_episode(hello.episode.uuid)

        assert store.writes == [], "Alice's summary did not change: nothing to write"
        assert removal.entities == []
        assert await alice(store) == LIVES
        assert [e.content for e in await store.episodes("g")] == [PARIS]


async def test_a_removal_pays_an_owed_summary_even_when_it_reads_the_same() -> None:
    """Alice, met five times, is owed a model summary (``batch`` mode, one episode at a time: no batch
    end pays it); her summary is composed of her newest four facts. Removing the oldest leaves her
    four: composed, her summary reads the same, and she owes nothing any more."""
    store = WritesSeen()
    async with graph(store, summary_mode="batch") as kg:
        bob = await kg.add_episode(MET_BOB, reference_time=T0)
        await kg.add_episode(MET_FOUR, reference_time=T0 + timedelta(days=1))
        [owed] = await store.owed_summaries("g")
        composed = await alice(store)
        assert "Bob" not in composed and all(name in composed for name in FOUR)
        store.writes.clear()

        removal = await kg.remove_episode(bob.episode.uuid)

        assert await store.owed_summaries("g") == []
        assert (await kg.stats()).owed_summaries == 0
        assert [w.paid_summaries for w in store.writes] == [[owed]]
        assert removal.entities == [], "her summary did not change"
        assert await alice(store) == composed


async def test_a_removal_that_leaves_the_group_no_episode_does_not_fail(
    caplog: pytest.LogCaptureFixture,
) -> None:
    store = WritesSeen()
    async with graph(store) as kg:
        paris = await kg.add_episode(PARIS, reference_time=T0)
        await kg.corrections.add_fact("Alice", "KNOWS", "Zoe", create=True, author="tester")
        store.writes.clear()

        with caplog.at_level(logging.WARNING, logger="epigraph.ingest"):
            removal = await kg.remove_episode(paris.episode.uuid)

        assert await store.episodes("g") == []
        [kept] = (await store.entities_by_names("g", ["Alice"]))["Alice"]
        assert removal.deletion.touched_entities == [kept.uuid], "kept by the fact added by hand"
        assert [f.relation for f in (await kg.entity("Alice")).current] == ["KNOWS"]
        assert removal.entities == [] and store.writes == []
        assert "no episode left" in caplog.text
