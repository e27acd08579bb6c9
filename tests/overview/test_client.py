"""KnowledgeGraph's overview: what bulk ingestion keeps up to date (and what it leaves alone), what a
removal and a retry do to a conversation's summary, and the reads (scripted pipeline world)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta

import pytest

from epigraph import KnowledgeGraph
from epigraph.config import Settings
from epigraph.errors import ConversationNotFound, LLMUnavailable
from epigraph.graph.embedded import EmbeddedStore
from epigraph.overview import OverviewUpdated
from epigraph.prompts.extraction import ExtractionInput
from epigraph.prompts.protocol import ChatRequest
from epigraph.testing import HashEmbedder, ScriptedLLM, ScriptedReply
from epigraph.testing.overview import OVERVIEW_SCRIPT
from tests.support.records import T0
from tests.support.world import F, Turn, World

G = "g"
CHAT = "chat:ann-bob"
FAMILY = {"Ann": "Bob", "Bob": "Cy", "Cy": "Ann"}


def world() -> World:
    turns = {f"{a}: hi {b}": Turn([a, b], [F(a, b, "KNOWS", f"{a} knows {b}.")]) for a, b in FAMILY.items()}
    turns["Eve: hi Ann"] = Turn(["Eve", "Ann"], [F("Eve", "Ann", "KNOWS", "Eve knows Ann.")])
    built = World(turns=turns)
    built.overrides.update(OVERVIEW_SCRIPT)
    return built


def turn(text: str, minute: int, source: str = CHAT) -> dict[str, object]:
    return {"content": text, "reference_time": T0 + timedelta(minutes=minute), "source": source, "group": G}


def family() -> list[dict[str, object]]:
    return [turn(f"{a}: hi {b}", i) for i, (a, b) in enumerate(FAMILY.items())]


@pytest.fixture
async def kg() -> AsyncIterator[tuple[KnowledgeGraph, ScriptedLLM]]:
    llm = world().llm()
    store = EmbeddedStore(":memory:")
    graph = KnowledgeGraph(Settings(), store=store, llm=llm, embedder=HashEmbedder(dim=64), group_id=G)
    async with graph:
        yield graph, llm


async def test_bulk_ingestion_folds_each_conversation_and_leaves_communities_alone(
    kg: tuple[KnowledgeGraph, ScriptedLLM],
) -> None:
    graph, llm = kg
    results = await graph.add_episodes(family())
    assert all(r.ok for r in results)
    assert len(llm.calls_for("summarize_conversation")) == 1  # one call for the batch's one conversation
    assert llm.calls_for("summarize_communities") == []  # never built: nobody pays for them unasked
    (view,) = await graph.overview.conversations()
    assert view.key == CHAT and view.unsummarized == 0 and view.summary is not None
    conversation = await graph.overview.conversation(CHAT)
    assert [e.content for e in conversation.episodes] == [f"{a}: hi {b}" for a, b in FAMILY.items()]
    with pytest.raises(ConversationNotFound):
        await graph.overview.conversation("nothing")

    built = await graph.overview.build_communities()
    assert built.rebuilt and len(built.communities) == 1 and len(llm.calls_for("summarize_communities")) == 1
    await graph.add_episodes([turn("Eve: hi Ann", 9)])  # now they exist: the batch updates them
    assert len(llm.calls_for("summarize_communities")) == 2
    assert len(llm.calls_for("summarize_conversation")) == 2
    (community,) = await graph.overview.communities()
    assert community.size == 4 and community.community.uuid == built.communities[0].uuid


async def test_removing_an_episode_resets_its_conversation(kg: tuple[KnowledgeGraph, ScriptedLLM]) -> None:
    graph, llm = kg
    results = await graph.add_episodes(family())
    await graph.remove_episode(results[0].episode.uuid)
    (view,) = await graph.overview.conversations()
    assert view.summary is not None and view.summary.episodes == 0 and view.unsummarized == 2
    (update,) = await graph.overview.update_conversations()
    assert update.folded == 2 and "Ann: hi Bob" not in str(llm.calls[-1].variables["episodes"])


async def test_a_retried_episode_is_folded_in_although_it_was_recorded_first() -> None:
    built = world()
    down = [True]  # the model fails Bob's turn for the whole first batch (however often it is asked: an
    # episode extracted ahead, IngestOptions.in_flight, is asked again in its turn), then comes back

    def flaky(request: ChatRequest) -> str | ScriptedReply:
        if down[0] and ExtractionInput.model_validate(request.variables).content().startswith("Bob: hi Cy"):
            return ScriptedReply(error=LLMUnavailable("down"))
        return ScriptedReply(built.extract_entities(request.variables))

    built.overrides["extract_entities"] = flaky
    llm = built.llm()
    async with KnowledgeGraph(
        Settings(), store=EmbeddedStore(":memory:"), llm=llm, embedder=HashEmbedder(dim=64), group_id=G
    ) as graph:
        results = await graph.add_episodes(family())
        assert [r.ok for r in results] == [True, False, True]
        (view,) = await graph.overview.conversations()
        assert view.summary is not None and view.summary.episodes == 2
        down[0] = False
        retried = await graph.retry_failed()
        assert [r.ok for r in retried] == [True]
        (view,) = await graph.overview.conversations()
        assert view.summary is not None and view.summary.episodes == 3 and view.unsummarized == 0
        assert llm.calls_for("summarize_conversation")[-1].variables["summary"] == "(none yet)"


async def test_the_batch_ends_the_stream_and_a_lone_episode_ends_no_batch(
    kg: tuple[KnowledgeGraph, ScriptedLLM],
) -> None:
    graph, llm = kg
    events = [e async for e in graph.ingest(family())]
    assert isinstance(events[-1], OverviewUpdated) and [u.folded for u in events[-1].conversations] == [3]
    assert sum(isinstance(e, OverviewUpdated) for e in events) == 1  # one group, one batch
    await graph.add_episode("Eve: hi Ann", reference_time=T0 + timedelta(minutes=9), source_description=CHAT)
    assert len(llm.calls_for("summarize_conversation")) == 1  # add_episode alone folds nothing
    (view,) = await graph.overview.conversations()
    assert view.unsummarized == 1
    await graph.add_episodes([turn("Ann: hi Bob", 10)])  # the next batch of the chain catches it up
    (view,) = await graph.overview.conversations()
    assert view.unsummarized == 0 and len(llm.calls_for("summarize_conversation")) == 2
