"""The queue's idempotency, failure and retry: an episode stored twice runs once, a failed or interrupted one
is kept and a retry completes it."""

from __future__ import annotations

from datetime import timedelta

import pytest

from epigraph.episodes.inputs import EpisodeInput
from epigraph.errors import EpisodeConflict, LLMUnavailable
from epigraph.graph.embedded import EmbeddedStore
from epigraph.graph.model import EpisodeStatus
from epigraph.ingestion.ingestor import Ingestor
from epigraph.prompts.protocol import ChatRequest
from epigraph.testing import HashEmbedder, ScriptedReply
from tests.support.world import OSLO, OSLO_WORLD, T0, World


async def test_the_same_episode_twice_changes_nothing(store: EmbeddedStore, embedder: HashEmbedder) -> None:
    world = World(dict(OSLO_WORLD))
    llm = world.llm()
    ingestor = Ingestor(store, llm, embedder)
    first = await ingestor.add_episode(EpisodeInput(OSLO, group_id="g", reference_time=T0))
    calls, stats = len(llm.calls), await store.stats("g")
    again = await ingestor.add_episode(EpisodeInput(OSLO, group_id="g", reference_time=T0))

    assert again.skipped and again.episode.uuid == first.episode.uuid
    assert len(llm.calls) == calls
    assert await store.stats("g") == stats


async def test_a_caller_given_id_keys_idempotency(store: EmbeddedStore, embedder: HashEmbedder) -> None:
    """The same id and content: skipped; the same id with other content: refused, never dropped
    (``tests/ingestion/test_conflicts.py``)."""
    world = World({**OSLO_WORLD, "Ann: I live in Oslo with Bo!": OSLO_WORLD[OSLO]})
    ingestor = Ingestor(store, world.llm(), embedder)
    first = await ingestor.add_episode(
        EpisodeInput(OSLO, group_id="g", reference_time=T0, episode_id="msg-1")
    )
    later = T0 + timedelta(days=1)  # the time is not part of a given id's key
    again = EpisodeInput(OSLO, group_id="g", reference_time=later, episode_id="msg-1")
    second = await ingestor.add_episode(again)
    assert second.skipped and second.episode.uuid == first.episode.uuid
    with pytest.raises(EpisodeConflict):
        await ingestor.add_episode(
            EpisodeInput("Ann: I live in Oslo with Bo!", group_id="g", reference_time=T0, episode_id="msg-1")
        )
    assert (await store.stats("g")).episodes == 1


async def test_a_failure_marks_the_episode_failed_leaves_no_graph_and_a_retry_completes(
    store: EmbeddedStore, embedder: HashEmbedder
) -> None:
    broken = {"on": True}

    def facts(request: ChatRequest) -> ScriptedReply:
        if broken["on"]:
            return ScriptedReply(error=LLMUnavailable("upstream 503 after 5 attempts"))
        return ScriptedReply(World(dict(OSLO_WORLD)).extract_facts(request.variables))

    world = World(dict(OSLO_WORLD), overrides={"extract_facts": facts})
    ingestor = Ingestor(store, world.llm(), embedder)
    with pytest.raises(LLMUnavailable):
        await ingestor.add_episode(EpisodeInput(OSLO, group_id="g", reference_time=T0))

    [episode] = await store.episodes("g")
    assert episode.status == EpisodeStatus.FAILED
    assert episode.error is not None and "503" in episode.error
    assert episode.report.llm_calls == 2, "the report of a failed run still says what it spent"
    stats = await store.stats("g")
    assert (stats.entities, stats.facts, stats.mentions) == (0, 0, 0)

    broken["on"] = False
    [retried] = await ingestor.retry_failed("g")
    assert retried.ok and retried.episode.uuid == episode.uuid
    assert retried.episode.created_at == episode.created_at
    stats = await store.stats("g")
    assert (stats.episodes, stats.entities, stats.facts, stats.mentions) == (1, 3, 2, 3)
    assert await ingestor.retry_failed("g") == []


async def test_add_episode_can_return_the_failure_instead_of_raising(
    store: EmbeddedStore, embedder: HashEmbedder
) -> None:
    world = World(
        dict(OSLO_WORLD),
        overrides={"extract_entities": lambda r: ScriptedReply(error=LLMUnavailable("down"))},
    )
    result = await Ingestor(store, world.llm(), embedder).add_episode(
        EpisodeInput(OSLO, group_id="g", reference_time=T0), raise_on_failure=False
    )
    assert not result.ok and result.error == "LLMUnavailable: down"


async def test_an_interrupted_episode_stays_pending_and_a_retry_completes_it(
    store: EmbeddedStore, embedder: HashEmbedder
) -> None:
    world = World(dict(OSLO_WORLD), latency=0.05)
    ingestor = Ingestor(store, world.llm(), embedder)
    events = ingestor.ingest([{"content": OSLO, "reference_time": T0, "group": "g"}])
    async for event in events:
        if type(event).__name__ == "EpisodeSaved":
            break
    await events.aclose()  # type: ignore[attr-defined]

    [episode] = await store.episodes("g")
    assert episode.status == EpisodeStatus.PENDING
    assert (await store.stats("g")).facts == 0
    [result] = await ingestor.retry_failed("g")
    assert result.ok and (await store.stats("g")).facts == 2
