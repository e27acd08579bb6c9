"""KnowledgeGraph.ask over a real embedded store ingested with ScriptedLLM: time, citations, chunk
invariants, errors, bounds, non-streaming and models that cannot stream."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime

import pytest

from epigraph import Answer, AskChunk, KnowledgeGraph
from epigraph.ask import NOTHING, AskOptions, Lookup, Lookups, check_dialog
from epigraph.errors import ConfigError, LLMUnavailable, UsageError
from epigraph.graph.embedded import EmbeddedStore
from epigraph.prompts.protocol import ChatRequest, Completion
from epigraph.testing import HashEmbedder, ScriptedLLM, ScriptedReply
from tests.support.ask_graph import BERLIN, LISBON, PARIS
from tests.support.ask_scripts import fact_lines, held_on, plan


def graph(store: EmbeddedStore, embedder: HashEmbedder, llm: object) -> KnowledgeGraph:
    return KnowledgeGraph(store=store, llm=llm, embedder=embedder, group_id="g")  # type: ignore[arg-type]


async def dialog(kg: KnowledgeGraph, question: str, **kw: object) -> list[AskChunk]:
    """The agent's dialog (``mode="agent"``: these tests are about its steps)."""
    chunks = [c async for c in kg.ask(question, **{"mode": "agent", **kw})]  # type: ignore[call-overload]
    check_dialog(chunks)
    return chunks


def messages(chunks: list[AskChunk]) -> list[str]:
    return [c.chunk_type for c in chunks if c.end_of_message]


def observed_uuids(chunks: list[AskChunk]) -> set[str]:
    return {item["uuid"] for c in chunks if c.chunk_type == "observation" for item in c.data["items"]}


async def test_a_question_about_the_past_is_answered_from_the_fact_valid_then(
    store: EmbeddedStore, embedder: HashEmbedder
) -> None:
    llm = ScriptedLLM(
        {
            "ask_plan": [
                plan(
                    "search_facts",
                    "Look up where Alice lived in mid-2022.",
                    query="Alice lives",
                    as_of="2022-06-01",
                ),
                plan("answer", "Found it."),
            ],
            "ask_answer": held_on(date(2022, 6, 1)),
        }
    )
    async with graph(store, embedder, llm) as kg:
        chunks = await dialog(kg, "Where did Alice live in June 2022?")
    assert messages(chunks) == ["thought", "action", "observation", "thought", "answer"]
    action = next(c for c in chunks if c.chunk_type == "action")
    args = {"query": "Alice lives", "as_of": "2022-06-01", "during": "2022"}  # during: the question's year
    assert action.data == {"tool": "search_facts", "args": args}
    shown = [text for _, text, *_ in fact_lines(llm.calls_for("ask_answer")[0].request)]
    assert BERLIN in shown and PARIS not in shown and LISBON not in shown, "as_of keeps what held then"
    last = chunks[-1]
    text = "".join(c.content for c in chunks if c.chunk_type == "answer")
    assert text == f"{BERLIN} [F1]"
    (citation,) = last.citations
    assert (citation.id, citation.kind, citation.text) == ("F1", "fact", BERLIN)
    assert citation.valid_at == datetime(2022, 1, 10, tzinfo=UTC)
    assert citation.invalid_at == datetime(2024, 2, 1, tzinfo=UTC), "Lisbon ended it"
    assert citation.retired, "it no longer holds now"
    assert citation.episode_uuids and citation.uuid in observed_uuids(chunks)


async def test_history_is_shown_with_windows_and_only_what_holds_now_is_current(
    store: EmbeddedStore, embedder: HashEmbedder
) -> None:
    llm = ScriptedLLM(
        {
            "ask_plan": [plan("search_facts", query="Alice lives"), plan("answer")],
            "ask_answer": held_on(date(2022, 6, 1)),
        }
    )
    async with graph(store, embedder, llm) as kg:
        past = await kg.ask("Where has Alice lived over the years?", streaming=False, mode="agent")
        llm2 = ScriptedLLM(
            {
                "ask_plan": [plan("search_facts", query="Alice lives"), plan("answer")],
                "ask_answer": held_on(datetime.now(UTC).date()),
            }
        )
        kg.llm = llm2
        now = await kg.ask("Where does Alice live?", streaming=False, mode="agent")
    lines = {
        text: (start, end, status)
        for _, text, start, end, status in fact_lines(llm.calls_for("ask_answer")[0].request)
    }
    assert lines[PARIS] == (date(2020, 3, 1), date(2022, 1, 10), "ended")
    assert lines[BERLIN] == (date(2022, 1, 10), date(2024, 2, 1), "ended")
    assert lines[LISBON] == (date(2024, 2, 1), None, "current")
    assert past.ok and BERLIN in past.text and [c.text for c in past.citations] == [BERLIN]
    assert past.citations[0].retired
    assert now.ok and LISBON in now.text and [c.text for c in now.citations] == [LISBON]
    assert not now.citations[0].retired and now.citations[0].invalid_at is None


async def test_as_of_is_the_dialogs_now(store: EmbeddedStore, embedder: HashEmbedder) -> None:
    """Asked as of 2023: Lisbon (2024) is not seen at all, Berlin is what is current then."""
    llm = ScriptedLLM(
        {
            "ask_plan": [plan("search_facts", query="Alice lives"), plan("answer")],
            "ask_answer": held_on(date(2023, 1, 1)),
        }
    )
    async with graph(store, embedder, llm) as kg:
        answer = await kg.ask("Where does Alice live?", as_of="2023-01-01", streaming=False, mode="agent")
    lines = {text: status for _, text, _, _, status in fact_lines(llm.calls_for("ask_answer")[0].request)}
    assert LISBON not in lines and (lines[PARIS], lines[BERLIN]) == ("ended", "current")
    assert answer.citations[0].text == BERLIN and not answer.citations[0].retired
    assert llm.calls_for("ask_answer")[0].variables["now"] == "1 January 2023"
    facts = str(llm.calls_for("ask_answer")[0].variables["facts"])
    assert "; current as of 1 January 2023)" in facts and "; ended as of 1 January 2023)" in facts


async def test_a_plan_that_copies_now_into_as_of_still_sees_the_past(
    store: EmbeddedStore, embedder: HashEmbedder
) -> None:
    """The local 1.5B model planned search_facts(as_of=<Now>) for "where did Bob teach in 2020?": the
    facts true now hid the answer. A date that is not before the dialog's now counts as none."""

    def planner(request: ChatRequest) -> str:
        if request.variables["observations"] == "(nothing yet)":
            return plan("search_facts", query="Alice lives", as_of=str(request.variables["now"]))
        return plan("answer")

    llm = ScriptedLLM({"ask_plan": planner, "ask_answer": held_on(date(2022, 6, 1))})
    async with graph(store, embedder, llm) as kg:
        chunks = await dialog(kg, "Where did Alice live in June 2022?")
    lines = {text: status for _, text, _, _, status in fact_lines(llm.calls_for("ask_answer")[0].request)}
    assert lines.get(BERLIN) == "ended" and LISBON not in lines, "what held at some time in 2022"
    observation = next(c for c in chunks if c.chunk_type == "observation")
    assert "is not before now" in observation.data["note"]
    action = next(c for c in chunks if c.chunk_type == "action")
    assert action.data["args"]["during"] == "2022"
    assert [c.text for c in chunks[-1].citations] == [BERLIN]


async def test_every_citation_names_something_observed_and_others_are_dropped(
    store: EmbeddedStore, embedder: HashEmbedder
) -> None:
    llm = ScriptedLLM(
        {
            "ask_plan": [plan("entity", entity="Alice"), plan("answer")],
            "ask_answer": ScriptedReply("Lisbon [F1, F9], earlier Berlin [F2][E7] and [sic].", chunk_size=3),
        }
    )
    async with graph(store, embedder, llm) as kg:
        chunks = await dialog(kg, "Where does Alice live?")
    text = "".join(c.content for c in chunks if c.chunk_type == "answer")
    last = chunks[-1]
    assert "F9" not in text and "E7" not in text and "[sic]" in text
    assert set(last.dropped) == {"F9", "E7"}
    assert [c.id for c in last.citations] == ["F1", "F2"]
    assert {c.uuid for c in last.citations} <= observed_uuids(chunks)
    observed = {
        item["id"]: item["text"] for c in chunks if c.chunk_type == "observation" for item in c.data["items"]
    }
    assert all(observed[c.id] == c.text for c in last.citations)
    grammar = llm.calls_for("ask_answer")[0].request.grammar or ""
    allowed = set(re.findall(r'"([FE]\d+)"', grammar))
    assert allowed == set(observed), "a grammar-capable model may cite exactly what was observed"


async def test_an_empty_graph_says_so_without_asking_the_model_to_answer(embedder: HashEmbedder) -> None:
    llm = ScriptedLLM({"ask_plan": [plan("search_facts", query="Alice"), plan("answer")]})
    async with EmbeddedStore(":memory:") as empty, graph(empty, embedder, llm) as kg:
        answer = await kg.ask("Where does Alice live?", streaming=False, mode="agent")
    assert answer.ok and answer.text == NOTHING and answer.citations == ()
    assert not llm.calls_for("ask_answer") and answer.usage.calls == 2 and answer.usage.lookups == 1


async def test_streamed_and_not_streamed_say_the_same(store: EmbeddedStore, embedder: HashEmbedder) -> None:
    def script() -> ScriptedLLM:
        return ScriptedLLM(
            {
                "ask_plan": [plan("search_facts", "Search.", query="Alice lives"), plan("answer")],
                "ask_answer": ScriptedReply("Lisbon now [F1].", chunk_size=2),
            }
        )

    llm = script()
    async with graph(store, embedder, llm) as kg:
        streamed = await dialog(kg, "Where does Alice live?")
        kg.llm = script()
        whole = await kg.ask("Where does Alice live?", streaming=False, mode="agent")
        assert not any(c.streamed for c in kg.llm.calls)  # type: ignore[attr-defined]
    assert isinstance(whole, Answer)
    assert len([c for c in streamed if c.chunk_type == "answer"]) > 2, "the answer arrived in pieces"
    from epigraph.ask import answer_of

    same = answer_of("Where does Alice live?", streamed)
    assert (same.text, same.citations, same.thoughts, same.actions) == (
        whole.text,
        whole.citations,
        whole.thoughts,
        whole.actions,
    )
    assert whole.usage.calls == 3 and whole.usage.input_tokens > 0 and whole.usage.context_tokens > 0


class CompleteOnly:
    """A model without ``stream``: the agent must call ``complete`` and still yield the same chunks."""

    def __init__(self, inner: ScriptedLLM) -> None:
        self.inner = inner

    async def complete(self, request: ChatRequest) -> Completion:
        return await self.inner.complete(request)


async def test_a_model_that_cannot_stream_yields_the_same_chunks(
    store: EmbeddedStore, embedder: HashEmbedder
) -> None:
    inner = ScriptedLLM(
        {
            "ask_plan": [plan("search_facts", "Search.", query="Alice lives"), plan("answer")],
            "ask_answer": "Lisbon [F1].",
        }
    )
    async with graph(store, embedder, CompleteOnly(inner)) as kg:
        chunks = await dialog(kg, "Where does Alice live?")
    assert [c.chunk_type for c in chunks] == ["thought", "action", "observation", "answer"]
    assert chunks[-1].content == "Lisbon [F1]." and chunks[-1].citations[0].text == LISBON
    assert not any(c.streamed for c in inner.calls)


async def test_an_error_mid_answer_is_the_final_chunk(store: EmbeddedStore, embedder: HashEmbedder) -> None:
    llm = ScriptedLLM(
        {
            "ask_plan": [plan("search_facts", query="Alice lives"), plan("answer")],
            "ask_answer": ScriptedReply(
                "Alice lives in Lis", chunk_size=4, error=LLMUnavailable("server went away")
            ),
        }
    )
    async with graph(store, embedder, llm) as kg:
        chunks = await dialog(kg, "Where does Alice live?")
        whole = await graph_answer(kg)
    assert chunks[-1].chunk_type == "error" and "server went away" in chunks[-1].content
    assert chunks[-1].data["type"] == "LLMUnavailable" and chunks[-1].usage is not None
    answers = [c for c in chunks if c.chunk_type == "answer"]
    assert answers and answers[-1].end_of_message and answers[-1].content == "", "the cut answer is closed"
    assert not whole.ok and whole.error is not None
    with pytest.raises(LLMUnavailable):
        whole.raise_for_error()


async def graph_answer(kg: KnowledgeGraph) -> Answer:
    kg.llm = ScriptedLLM(
        {
            "ask_plan": plan("search_facts", query="Alice"),
            "ask_answer": ScriptedReply(error=LLMUnavailable("down")),
        }
    )
    options = AskOptions(max_steps=1)
    return await kg.ask("Where does Alice live?", streaming=False, mode="agent", options=options)


async def test_lookups_are_bounded_and_a_repeated_lookup_ends_the_looking(
    store: EmbeddedStore, embedder: HashEmbedder
) -> None:
    eager = ScriptedLLM(
        {
            "ask_plan": lambda r: plan("search_facts", query=f"Alice {r.variables['steps_left']}"),
            "ask_answer": "Lisbon [F1].",
        }
    )
    async with graph(store, embedder, eager) as kg:
        chunks = await dialog(kg, "Where does Alice live?", options=AskOptions(max_steps=2))
        assert sum(c.chunk_type == "action" for c in chunks) == 2 and len(eager.calls_for("ask_plan")) == 2
        stuck = ScriptedLLM({"ask_plan": plan("entity", entity="Alice"), "ask_answer": "Lisbon [F1]."})
        kg.llm = stuck
        chunks = await dialog(kg, "Where does Alice live?")
    assert sum(c.chunk_type == "action" for c in chunks) == 1 and len(stuck.calls_for("ask_plan")) == 2


async def test_an_unusable_plan_falls_back_to_searching_the_question(
    store: EmbeddedStore, embedder: HashEmbedder
) -> None:
    llm = ScriptedLLM({"ask_plan": "I think we should look", "ask_answer": "Lisbon [F1]."})
    async with graph(store, embedder, llm) as kg:
        chunks = await dialog(kg, "Where does Alice live?", options=AskOptions(max_steps=1))
    action = next(c for c in chunks if c.chunk_type == "action")
    assert action.data == {"tool": "search_facts", "args": {"query": "Where does Alice live?"}}
    assert chunks[-1].chunk_type == "answer" and chunks[-1].usage is not None
    assert chunks[-1].usage.calls == 3, "two plan calls (one re-ask) and the answer"


async def test_an_unknown_entity_is_observed_as_such(store: EmbeddedStore, embedder: HashEmbedder) -> None:
    llm = ScriptedLLM({"ask_plan": [plan("entity", entity="Alise"), plan("answer")], "ask_answer": "nothing"})
    async with graph(store, embedder, llm) as kg:
        chunks = await dialog(kg, "Where does Alise live?")
    observation = next(c for c in chunks if c.chunk_type == "observation")
    assert "no entity named 'Alise'" in observation.content and "Alice" in observation.content


async def test_bad_calls_raise_at_once(store: EmbeddedStore, embedder: HashEmbedder) -> None:
    async with KnowledgeGraph(store=store, embedder=embedder, group_id="g", llm=None) as kg:
        kg.llm = None
        with pytest.raises(ConfigError, match="ask needs an LLM"):
            await kg.ask("Where?", streaming=False)
        kg.llm = ScriptedLLM({})
        with pytest.raises(UsageError, match="non-empty question"):
            await kg.ask("  ", streaming=False)
        with pytest.raises(UsageError, match="bad time"):
            await kg.ask("Where?", as_of="yesterday", streaming=False)
        with pytest.raises(UsageError, match="context, agent, auto"):
            kg.ask("Where?", mode="fast")  # type: ignore[call-overload]


async def test_a_fact_search_also_shows_the_matching_episodes_of_its_time(
    store: EmbeddedStore, embedder: HashEmbedder
) -> None:
    """The episodes hold the original words; they follow the dialog's as_of and known_at like facts."""
    now = Lookups(store, embedder, "g", as_of=None, known_at=None)
    found = await now.run(Lookup("search_facts", {"query": "Alice moved to Berlin"}))
    assert "Alice: I moved to Berlin." in [e.content for e in found.episodes]
    earlier = await now.run(Lookup("search_facts", {"query": "Alice moved to Berlin", "as_of": "2021-01-01"}))
    assert BERLIN not in [f.text for f in earlier.facts], "the facts true on the plan's date"
    assert "Alice: I moved to Berlin." in [e.content for e in earlier.episodes], "a later message may tell"
    then = Lookups(store, embedder, "g", as_of=datetime(2021, 1, 1, tzinfo=UTC), known_at=None)
    found = await then.run(Lookup("search_facts", {"query": "Alice moved to Berlin"}))
    cut = datetime(2021, 1, 1, tzinfo=UTC)
    assert found.episodes and all(e.reference_time <= cut for e in found.episodes)
    before = Lookups(store, embedder, "g", as_of=None, known_at=datetime(2000, 1, 1, tzinfo=UTC))
    found = await before.run(Lookup("search_facts", {"query": "Alice moved to Berlin"}))
    assert found.episodes == [] and found.facts == [], "nothing was recorded by then"


async def test_an_entity_lookup_shows_its_summary_to_the_answer(
    store: EmbeddedStore, embedder: HashEmbedder
) -> None:
    llm = ScriptedLLM(
        {"ask_plan": [plan("entity", entity="Alice"), plan("answer")], "ask_answer": "Lisbon [F1]."}
    )
    async with graph(store, embedder, llm) as kg:
        chunks = await dialog(kg, "Where does Alice live?")
        kg.llm = then = ScriptedLLM({"ask_plan": [plan("entity", entity="Alice"), plan("answer")],
                                     "ask_answer": "Berlin [F1]."})  # fmt: skip
        await dialog(kg, "Where did Alice live?", as_of="2023-01-01")
    observation = next(c for c in chunks if c.chunk_type == "observation")
    assert observation.data["summaries"] == ["Alice: Alice lives in Lisbon."]
    assert llm.calls_for("ask_answer")[0].variables["summaries"] == "Alice: Alice lives in Lisbon."
    assert then.calls_for("ask_answer")[0].variables["summaries"] == "(none)", "not versioned: not then"
