"""ask shows the running summaries of the conversations its facts and episodes come from, as background
the answer may use and never cite; a summary covering what the dialog's moment did not know is left out.
The agent finds them with each lookup; the one-call context in a part of its own (``conversations``)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest

from epigraph import AskChunk, KnowledgeGraph
from epigraph.ask import check_dialog
from epigraph.episodes.inputs import EpisodeInput
from epigraph.graph.derived import ConversationSummary
from epigraph.graph.embedded import EmbeddedStore
from epigraph.ingestion.ingestor import Ingestor
from epigraph.testing import HashEmbedder, ScriptedLLM
from tests.support.ask_graph import EPISODES, LISBON, WORLD
from tests.support.ask_scripts import held_on, plan

SUMMARY = "Alice moved from Paris to Berlin and then to Lisbon; Bob works at Acme."
WRITTEN = datetime.now(UTC) + timedelta(days=1)
"""When the summary was written: after everything the graph recorded."""


@pytest.fixture
async def chat(embedder: HashEmbedder) -> AsyncIterator[EmbeddedStore]:
    """The Alice graph, every episode from the source "chat", whose summary is stored."""
    store = EmbeddedStore(":memory:")
    await store.setup(embedder.dim)
    ingestor = Ingestor(store, WORLD.llm(), embedder)
    for content, when in EPISODES:
        await ingestor.add_episode(
            EpisodeInput(content, group_id="g", reference_time=when, source_description="chat")
        )
    first, last = EPISODES[0][1], EPISODES[-1][1]
    await store.save_conversation_summary(ConversationSummary(
        group_id="g", key="chat", summary=SUMMARY, episodes=4, first_at=first, last_at=last,
        covered_until=WRITTEN, version=1, updated_at=WRITTEN,
    ))  # fmt: skip
    yield store


def asking() -> ScriptedLLM:
    looked = plan("search_facts", "Where does Alice live?", query="Alice lives")
    return ScriptedLLM({"ask_plan": [looked, plan()], "ask_answer": held_on(datetime.now(UTC).date())})


async def ask(store: EmbeddedStore, embedder: HashEmbedder, llm: ScriptedLLM, **kw: object) -> list[AskChunk]:
    """The agent's dialog unless ``mode`` says otherwise."""
    kg = KnowledgeGraph(store=store, llm=llm, embedder=embedder, group_id="g")
    kw.setdefault("mode", "agent")
    chunks = [c async for c in kg.ask("Where does Alice live?", **kw)]  # type: ignore[call-overload]
    check_dialog(chunks)
    return chunks


async def test_the_summary_of_the_facts_conversation_is_shown_and_never_cited(
    chat: EmbeddedStore, embedder: HashEmbedder
) -> None:
    llm = asking()
    chunks = await ask(chat, embedder, llm)
    (observation,) = [c for c in chunks if c.chunk_type == "observation"]
    assert observation.data["conversations"] == [{"key": "chat", "summary": SUMMARY}]
    assert "conversation chat (1 March 2020 to 1 February 2024)" in observation.content
    shown = str(llm.calls_for("ask_answer")[0].variables["conversations"])
    assert shown.startswith("\nConversation summaries (background;") and SUMMARY in shown
    user = llm.calls_for("ask_answer")[0].request.messages[-1]["content"]
    assert SUMMARY in user and user.index("Episodes:") < user.index("Conversation summaries") < user.index(
        "Question:"
    )
    answer = "".join(c.content for c in chunks if c.chunk_type == "answer")
    assert answer == f"{LISBON} [F1]" and [c.kind for c in chunks[-1].citations] == ["fact"]


async def test_a_summary_the_dialogs_moment_did_not_know_is_left_out(
    chat: EmbeddedStore, embedder: HashEmbedder
) -> None:
    for moment in ({"as_of": "2023-01-01"}, {"known_at": datetime.now(UTC)}):
        llm = ScriptedLLM({"ask_plan": [plan("search_facts", query="Alice lives"), plan()],
                           "ask_answer": held_on(datetime(2022, 6, 1).date())})  # fmt: skip
        chunks = await ask(chat, embedder, llm, **moment)
        (observation,) = [c for c in chunks if c.chunk_type == "observation"]
        assert "conversations" not in observation.data, moment
        assert llm.calls_for("ask_answer")[0].variables["conversations"] == ""


async def test_the_one_call_context_shows_the_summary_in_a_part_of_its_own_beside_the_entities(
    chat: EmbeddedStore, embedder: HashEmbedder
) -> None:
    """One answering prompt shows both kinds of background: the entity the question names ("About",
    before the facts) and the conversation (after the episodes); the answer cites neither."""
    for mode in ("context", "auto"):
        llm = ScriptedLLM({"ask_answer": held_on(datetime.now(UTC).date())})
        chunks = await ask(chat, embedder, llm, mode=mode)
        actions = [c for c in chunks if c.chunk_type == "action"]
        observations = [c for c in chunks if c.chunk_type == "observation"]
        step = [a.data["tool"] for a in actions].index("conversations_of")
        items = actions[step].data["args"]["items"].split(", ")
        assert items[0] == "E1" and "F1" in items, "the items shown before it: episodes first, then facts"
        assert observations[step].data["conversations"] == [{"key": "chat", "summary": SUMMARY}]
        assert "conversation chat (1 March 2020 to 1 February 2024)" in observations[step].content
        assert not any("conversations" in o.data for i, o in enumerate(observations) if i != step)
        (call,) = llm.calls_for("ask_answer")
        assert str(call.variables["summaries"]).startswith("Alice: ")
        user = call.request.messages[-1]["content"]
        order = ["About:\nAlice: ", "Episodes:", "Facts:", "Conversation summaries (background;", "Question:"]
        assert [user.index(part) for part in order] == sorted(user.index(part) for part in order), mode
        assert user.count(SUMMARY) == 1 and not llm.calls_for("ask_plan")
        assert {c.kind for c in chunks[-1].citations} == {"fact"} and answer_text(chunks) == f"{LISBON} [F1]"


async def test_the_one_call_context_leaves_out_a_summary_its_moment_did_not_know(
    chat: EmbeddedStore, embedder: HashEmbedder
) -> None:
    for moment in ({"as_of": "2023-01-01"}, {"known_at": datetime.now(UTC)}):
        llm = ScriptedLLM({"ask_answer": held_on(datetime(2022, 6, 1).date())})
        chunks = await ask(chat, embedder, llm, mode="context", **moment)
        assert "conversations_of" in [c.data["tool"] for c in chunks if c.chunk_type == "action"]
        assert not any("conversations" in c.data for c in chunks if c.chunk_type == "observation"), moment
        assert llm.calls_for("ask_answer")[0].variables["conversations"] == ""


async def test_without_summaries_the_answering_prompt_is_unchanged(
    store: EmbeddedStore, embedder: HashEmbedder
) -> None:
    for mode in ("agent", "context"):
        llm = asking()
        await ask(store, embedder, llm, mode=mode)
        user = llm.calls_for("ask_answer")[0].request.messages[-1]["content"]
        assert "Conversation summaries" not in user and "\n\nQuestion:" not in user, mode


def answer_text(chunks: list[AskChunk]) -> str:
    return "".join(c.content for c in chunks if c.chunk_type == "answer")
