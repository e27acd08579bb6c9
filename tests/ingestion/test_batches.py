"""Batches through the queue: groups run concurrently and each in order, typed progress events, batch-mode
summaries charged and announced at the end."""

from __future__ import annotations

from datetime import timedelta

from epigraph.episodes.events import (
    EntityExtracted,
    EntityResolved,
    EpisodeDone,
    EpisodeFailed,
    EpisodeSaved,
    EpisodeUpdated,
    FactExtracted,
    FactInvalidated,
    SummaryUpdated,
)
from epigraph.episodes.inputs import EpisodeInput
from epigraph.graph.embedded import EmbeddedStore
from epigraph.ingestion.ingestor import Ingestor
from epigraph.pipeline.context import context_block
from epigraph.pipeline.options import IngestOptions
from epigraph.testing import HashEmbedder
from tests.support.world import T0, F, Turn, World, episode_of, hobbies


def _turns(group: str, n: int) -> dict[str, Turn]:
    return {
        f"{group}{i}: I work at Acme Corp.": Turn(
            [f"{group}{i}", "Acme Corp"],
            [F(f"{group}{i}", "Acme Corp", "WORKS_AT", f"{group}{i} works at Acme Corp.")],
        )
        for i in range(n)
    }


async def test_bulk_runs_groups_concurrently_and_each_group_in_order(embedder: HashEmbedder) -> None:
    turns = {**_turns("Ann", 4), **_turns("Bob", 4)}
    world = World(turns, latency=0.02)
    llm = world.llm()
    items = []
    for i in range(4):
        for group in ("Ann", "Bob"):
            content = f"{group}{i}: I work at Acme Corp."
            items.append(EpisodeInput(content=content, reference_time=T0, group_id=group.lower()))
    async with EmbeddedStore(":memory:") as store:
        await store.setup(embedder.dim)
        events = [e async for e in Ingestor(store, llm, embedder).ingest(items)]
        results = [e.result for e in events if isinstance(e, EpisodeDone) and e.result is not None]
        results.sort(key=lambda r: items.index(next(i for i in items if i.content == r.episode.content)))
        for group in ("ann", "bob"):
            stats = await store.stats(group)
            assert (stats.episodes, stats.entities, stats.facts) == (4, 5, 4), (
                "Acme Corp merged within the batch"
            )

    assert [r.episode.content for r in results] == [i.content for i in items]
    assert all(r.ok for r in results)
    assert llm.max_concurrent >= 2, "two groups ran at the same time"
    for group in ("Ann", "Bob"):
        committed = [
            e.result.episode.content
            for e in events
            if isinstance(e, EpisodeDone) and e.result is not None and e.group_id == group.lower()
        ]
        assert committed == [f"{group}{i}: I work at Acme Corp." for i in range(4)]
        extracted = [episode_of(c.variables) for c in llm.calls_for("extract_entities")]
        assert sorted(e for e in extracted if e.startswith(group)) == committed, "each extracted once"


async def test_ingest_streams_typed_events_ending_each_episode(
    store: EmbeddedStore, embedder: HashEmbedder
) -> None:
    turns = {
        "Ann: I live in Oslo.": Turn(["Ann", "Oslo"], [F("Ann", "Oslo", "LIVES_IN", "Ann lives in Oslo.")]),
        "Ann: I live in Rome now.": Turn(
            ["Ann", "Rome"], [F("Ann", "Rome", "LIVES_IN", "Ann lives in Rome.")]
        ),
    }
    world = World(turns, contradicts={"Ann lives in Rome.": ["Ann lives in Oslo."]})
    items = [
        {"content": c, "reference_time": T0 + timedelta(days=i), "group": "g"} for i, c in enumerate(turns)
    ]
    events = [e async for e in Ingestor(store, world.llm(), embedder).ingest(items)]

    kinds = [type(e) for e in events]
    assert kinds[0] is EpisodeSaved
    assert {EntityExtracted, EntityResolved, FactExtracted, FactInvalidated, SummaryUpdated} <= set(kinds)
    for index in (0, 1):
        mine = [e for e in events if e.index == index]
        assert isinstance(mine[0], EpisodeSaved) and isinstance(mine[-1], EpisodeDone)
    assert not any(isinstance(e, EpisodeFailed) for e in events)
    invalidated = next(e for e in events if isinstance(e, FactInvalidated))
    assert invalidated.index == 1


async def test_batch_mode_summarizes_once_per_group_at_the_end(
    store: EmbeddedStore, embedder: HashEmbedder
) -> None:
    turns = {
        **hobbies(6),
        "Ann: and tennis": Turn(["Ann", "tennis"], [F("Ann", "tennis", "ENJOYS", "Ann enjoys tennis.")]),
    }
    world = World(turns)
    llm = world.llm()
    items = [
        EpisodeInput(content=c, reference_time=T0 + timedelta(minutes=i), group_id="g")
        for i, c in enumerate(turns)
    ]
    results = await Ingestor(store, llm, embedder).add_episodes(items)

    [call] = llm.calls_for("summarize_entities")
    assert sorted(e["name"] for e in call.variables["entities"]) == ["Ann", "Bo"]
    assert results[-1].report.per_prompt["summarize_entities"].calls == 1, (
        "charged to the group's last episode"
    )
    assert sum(r.report.llm_calls for r in results) == len(llm.calls)
    ann = (await store.entities_by_names("g", ["Ann"]))["Ann"][0]
    assert ann.summary.startswith("Ann: ") and "tennis" in ann.summary
    assert (await store.get_episode("g", results[-1].episode.uuid)).report == results[-1].report  # type: ignore[union-attr]


async def test_turns_of_one_session_see_the_earlier_turns_in_order(
    store: EmbeddedStore, embedder: HashEmbedder
) -> None:
    turns = {f"Ann: turn {i}": Turn() for i in range(3)}
    world = World(turns)
    llm = world.llm()
    frozen = IngestOptions(clock=lambda: T0)  # even with a frozen clock, the given order is kept
    items = [EpisodeInput(content=c, reference_time=T0, group_id="g") for c in turns]
    await Ingestor(store, llm, embedder, frozen).add_episodes(items)
    previous = sorted(
        (episode_of(c.variables), c.variables["context"]) for c in llm.calls_for("extract_entities")
    )
    assert [context for _, context in previous] == [
        "",
        context_block("Ann: turn 0"),
        context_block("Ann: turn 0\nAnn: turn 1"),
    ], "one extraction each (run ahead, its reply used at commit), each shown the turns before it"


async def test_a_batch_refresh_is_announced_as_an_update_of_the_last_episode(
    store: EmbeddedStore, embedder: HashEmbedder
) -> None:
    turns = {**hobbies(6), "Ann: Bye!": Turn()}
    items = [EpisodeInput(content=c, reference_time=T0, group_id="g") for c in turns]
    events = [e async for e in Ingestor(store, World(turns).llm(), embedder).ingest(items)]
    ends = [(type(e).__name__, e.index) for e in events if isinstance(e, EpisodeDone | EpisodeUpdated)]
    assert ends == [("EpisodeDone", 0), ("EpisodeDone", 1), ("EpisodeUpdated", 1)]
    update = events[-1]
    assert isinstance(update, EpisodeUpdated) and update.result is not None
    assert update.result.report.per_prompt["summarize_entities"].calls == 1
