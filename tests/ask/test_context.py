"""The one-call path (``mode="context"``) and ``auto`` over a real embedded store ingested with
ScriptedLLM: the context's steps as chunks, one answering call, citations checked, time filters, the
budget and its shares, and the agent as the fallback of ``auto``."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, date, datetime, timedelta

from epigraph import AskChunk, KnowledgeGraph
from epigraph.ask import NOTHING, AskOptions, Lookups, check_dialog
from epigraph.ask.context import PARTS, Part, assemble
from epigraph.ask.dialog import LOOKING_FURTHER
from epigraph.ask.lookups import Found, Lookup, name_candidates
from epigraph.ask.observations import Observations, Seen
from epigraph.graph.embedded import EmbeddedStore
from epigraph.graph.model import Episode, Fact
from epigraph.prompts.protocol import ChatRequest
from epigraph.testing import HashEmbedder, ScriptedLLM, ScriptedReply
from epigraph.tokens import count_text_tokens
from tests.support.ask_graph import BERLIN, LISBON, PARIS
from tests.support.ask_scripts import fact_lines, held_on, plan

CONTEXT_TOOLS = ["search_episodes", "search_facts", "entities", "conversations_of", "episodes_of"]


def graph(store: EmbeddedStore, embedder: HashEmbedder, llm: object) -> KnowledgeGraph:
    return KnowledgeGraph(store=store, llm=llm, embedder=embedder, group_id="g")  # type: ignore[arg-type]


async def dialog(kg: KnowledgeGraph, question: str, **kw: object) -> list[AskChunk]:
    chunks = [c async for c in kg.ask(question, **kw)]  # type: ignore[call-overload]
    check_dialog(chunks)
    return chunks


def messages(chunks: list[AskChunk]) -> list[str]:
    return [c.chunk_type for c in chunks if c.end_of_message]


def tools(chunks: list[AskChunk]) -> list[str]:
    return [c.data["tool"] for c in chunks if c.chunk_type == "action"]


def answer_text(chunks: list[AskChunk]) -> str:
    return "".join(c.content for c in chunks if c.chunk_type == "answer")


def shown_lines(request: ChatRequest) -> list[str]:
    """Every line of context the answering call was shown (summaries, facts, episodes)."""
    v = request.variables
    return [line for key in ("summaries", "facts", "episodes") for line in str(v[key]).splitlines()]


async def test_one_context_then_one_streamed_call(store: EmbeddedStore, embedder: HashEmbedder) -> None:
    llm = ScriptedLLM({"ask_answer": held_on(date(2022, 6, 1), chunk_size=4)})
    async with graph(store, embedder, llm) as kg:
        chunks = await dialog(kg, "Where did Alice live in 2022?", mode="context")
    assert messages(chunks) == ["action", "observation"] * 5 + ["answer"]
    assert tools(chunks) == CONTEXT_TOOLS
    searched = next(c for c in chunks if c.chunk_type == "action" and c.data["tool"] == "search_facts")
    assert searched.data["args"] == {"query": "Where did Alice live in 2022?", "during": "2022"}
    (call,) = llm.calls
    assert call.prompt_name == "ask_answer" and call.streamed, "the answer is the one model call"
    lines = {text: (end, status) for _, text, _, end, status in fact_lines(call.request)}
    assert lines[BERLIN] == (date(2024, 2, 1), "ended") and lines[PARIS] == (date(2022, 1, 10), "ended")
    assert LISBON not in lines, "the question names 2022: the facts that held during it"
    assert str(call.variables["summaries"]).startswith("Alice: "), "the entity the question names"
    episodes = str(call.variables["episodes"])
    assert "Alice: I moved to Berlin." in episodes and "Alice: I live in Paris." in episodes
    assert len([c for c in chunks if c.chunk_type == "answer"]) > 2, "the answer streamed in pieces"
    last = chunks[-1]
    assert [c.text for c in last.citations] == [BERLIN] and last.citations[0].retired
    assert last.usage is not None and (last.usage.calls, last.usage.lookups) == (1, 5)
    assert 0 < last.usage.context_tokens <= AskOptions().one_call_tokens


async def test_only_shown_ids_are_cited_and_the_grammar_allows_exactly_them(
    store: EmbeddedStore, embedder: HashEmbedder
) -> None:
    llm = ScriptedLLM(
        {"ask_answer": ScriptedReply("Berlin [F1, F99], earlier Paris [E42][F2].", chunk_size=3)}
    )
    async with graph(store, embedder, llm) as kg:
        chunks = await dialog(kg, "Where did Alice live?", mode="context")
    last = chunks[-1]
    assert "F99" not in answer_text(chunks) and "E42" not in answer_text(chunks)
    assert set(last.dropped) == {"F99", "E42"} and [c.id for c in last.citations] == ["F1", "F2"]
    observed = {i["id"]: i for c in chunks if c.chunk_type == "observation" for i in c.data["items"]}
    assert all(observed[c.id]["uuid"] == c.uuid for c in last.citations)
    grammar = llm.calls[0].request.grammar or ""
    assert set(re.findall(r'"([FE]\d+)"', grammar)) == set(observed)


async def test_a_dialog_as_of_a_past_date_sees_nothing_later_and_no_summaries(
    store: EmbeddedStore, embedder: HashEmbedder
) -> None:
    """Summaries are not versioned (Alice's says Lisbon): a dialog before the newest episode gets none."""
    llm = ScriptedLLM({"ask_answer": held_on(date(2023, 1, 1))})
    async with graph(store, embedder, llm) as kg:
        chunks = await dialog(kg, "Where does Alice live?", as_of="2023-01-01", mode="context")
        request = llm.calls[0].request
        assert request.variables["summaries"] == "(none)" and "Lisbon" not in "\n".join(shown_lines(request))
        assert {s for *_, s in fact_lines(request)} <= {"current", "ended"}
        assert [c.text for c in chunks[-1].citations] == [BERLIN]
        kg.llm = ScriptedLLM({})
        before = await dialog(kg, "Where does Alice live?", known_at="2001-01-01", mode="context")
    assert answer_text(before) == NOTHING and before[-1].usage is not None
    assert before[-1].usage.calls == 0, "nothing was recorded by then: nothing to show, no model call"


async def test_the_context_stays_within_its_budget(store: EmbeddedStore, embedder: HashEmbedder) -> None:
    used = 0
    async with graph(store, embedder, None) as kg:
        for budget in (40, 90, 400):
            kg.llm = llm = ScriptedLLM({"ask_answer": "Lisbon [F1]."})
            options = AskOptions(one_call_tokens=budget)
            answer = await kg.ask("Where does Alice live?", streaming=False, mode="context", options=options)
            shown = shown_lines(llm.calls[0].request)
            used = sum(count_text_tokens(line) + 1 for line in shown if line != "(none)")
            assert used == answer.usage.context_tokens <= budget, budget
    assert used > 90, "a larger budget shows more"


def _fact(i: int) -> Fact:
    start = datetime(2020, 1, 1, tzinfo=UTC) + timedelta(days=i)
    return Fact(
        uuid=f"f{i}", group_id="g", source_uuid="a", target_uuid="b", relation="MET",
        text=f"Alice met person number {i} at the market on a sunny day.", valid_at=start, episodes=[f"e{i}"],
    )  # fmt: skip


def _episode(i: int) -> Episode:
    when = datetime(2020, 1, 1, tzinfo=UTC) + timedelta(days=i)
    return Episode(
        group_id="g", content=f"Alice: I met person number {i} today, at the market.", reference_time=when
    )


async def test_each_part_gets_its_share_and_leaves_the_rest_to_the_next(
    store: EmbeddedStore, embedder: HashEmbedder
) -> None:
    """Fifty facts would fill the whole budget: the facts part stops at its share, the episodes still
    get theirs; a part that finds little leaves its share to the parts after it."""

    async def many_facts(_: Lookups, __: str, ___: Sequence[Seen]) -> tuple[Lookup, Found]:
        return Lookup("search_facts", {}), Found(facts=[_fact(i) for i in range(50)])

    async def nothing(_: Lookups, __: str, ___: Sequence[Seen]) -> tuple[Lookup, Found]:
        return Lookup("entities", {}), Found()

    async def many_episodes(_: Lookups, __: str, ___: Sequence[Seen]) -> tuple[Lookup, Found]:
        return Lookup("search_episodes", {}), Found(episodes=[_episode(i) for i in range(50)])

    parts = [
        Part("facts", 0.4, many_facts),
        Part("entities", 0.2, nothing),
        Part("episodes", 0.4, many_episodes),
    ]
    now = datetime(2024, 1, 1, tzinfo=UTC)
    lookups = Lookups(store, embedder, "g", as_of=None, known_at=None, now=now)
    observed = Observations(now=now, known_at=None, budget_tokens=500)
    steps = await assemble(lookups, "Whom did Alice meet?", observed, parts)
    facts_tokens = sum(count_text_tokens(s.line) + 1 for s in steps[0].seen)
    assert 0 < facts_tokens <= 0.4 * 500 and steps[0].left_out > 0
    episodes_tokens = sum(count_text_tokens(s.line) + 1 for s in steps[2].seen)
    assert episodes_tokens > 0.4 * 500, "the entities' unused share went to the episodes"
    assert observed.used_tokens <= 500 and steps[2].left_out > 0
    assert abs(sum(p.share for p in PARTS) - 1.0) < 1e-9


async def test_auto_answers_from_the_context_when_it_cites(
    store: EmbeddedStore, embedder: HashEmbedder
) -> None:
    llm = ScriptedLLM({"ask_answer": held_on(date(2022, 6, 1), chunk_size=5)})
    async with graph(store, embedder, llm) as kg:
        chunks = await dialog(kg, "Where did Alice live in 2022?")  # auto: the default
    assert tools(chunks) == CONTEXT_TOOLS and not llm.calls_for("ask_plan")
    assert answer_text(chunks) == f"{BERLIN} [F1]" and chunks[-1].usage is not None
    assert chunks[-1].usage.calls == 1


async def test_auto_looks_further_when_the_context_answer_finds_nothing(
    store: EmbeddedStore, embedder: HashEmbedder
) -> None:
    """A small context (one episode) whose answer begins with [none] (declines): that answer is never
    shown, the agent looks further from what the context showed, and a second answer cites what it
    found."""

    def answer(request: ChatRequest) -> ScriptedReply:
        acme = [label for label, text, *_ in fact_lines(request) if "Acme" in text]
        if not acme:
            return ScriptedReply("[none] So I cannot tell who [E1].", chunk_size=3)
        return ScriptedReply(f"Bob works at Acme. [{acme[0]}]", chunk_size=3)

    llm = ScriptedLLM(
        {"ask_plan": [plan("entity", "Look Bob up.", entity="Bob"), plan("answer")], "ask_answer": answer}
    )
    async with graph(store, embedder, llm) as kg:
        chunks = await dialog(kg, "Who works at Acme?", options=AskOptions(one_call_tokens=30))
    kinds = messages(chunks)
    assert kinds == [*["action", "observation"] * 5, "thought", "thought", "action", "observation", "answer"]
    assert chunks[10].content == LOOKING_FURTHER and tools(chunks)[5:] == ["entity"]
    first_context = llm.calls_for("ask_answer")[0].request
    assert not fact_lines(first_context) and "Bob: I work at Acme." in first_context.variables["episodes"]
    text = answer_text(chunks)
    assert re.fullmatch(r"Bob works at Acme\. \[F\d\]", text), "the declined answer is never shown"
    last = chunks[-1]
    assert [c.text for c in last.citations] == ["Bob works at Acme."]
    assert last.usage is not None and last.usage.calls == 4, "declined answer, two plans, the answer"
    assert last.usage.context_tokens > 30, "the agent's lookups had the rest of context_tokens"


async def test_auto_keeps_a_declined_answer_when_no_budget_remains(
    store: EmbeddedStore, embedder: HashEmbedder
) -> None:
    llm = ScriptedLLM({"ask_answer": "Nothing says so. [none]"})
    async with graph(store, embedder, llm) as kg:
        answer = await kg.ask("What is Alice's cat called?", streaming=False, options=AskOptions(max_steps=0))
    assert answer.ok and answer.text == "Nothing says so." and answer.usage.calls == 1
    assert not llm.calls_for("ask_plan")


async def test_auto_does_not_answer_twice_from_the_same_context(
    store: EmbeddedStore, embedder: HashEmbedder
) -> None:
    """The agent added nothing new: the answer says the graph holds nothing, without a second call."""
    llm = ScriptedLLM({"ask_answer": "[none]", "ask_plan": plan("answer", "Nothing more.")})
    async with graph(store, embedder, llm) as kg:
        answer = await kg.ask("What is Alice's cat called?", streaming=False)
    assert answer.ok and answer.text == NOTHING and answer.citations == ()
    assert answer.thoughts == (LOOKING_FURTHER, "Nothing more.")
    assert len(llm.calls_for("ask_answer")) == 1 and answer.usage.calls == 2


async def test_auto_shows_an_answer_that_ends_in_none_after_saying_something(
    store: EmbeddedStore, embedder: HashEmbedder
) -> None:
    """A small model that writes its answer and then, finding nothing to cite, ends it with [none] has
    answered: the answer is shown as it streams, and the agent is not asked."""
    llm = ScriptedLLM(
        {"ask_answer": ScriptedReply("Alice's cat is called Tom, as she said. [none]", chunk_size=4)}
    )
    async with graph(store, embedder, llm) as kg:
        chunks = await dialog(kg, "What is Alice's cat called?")
    assert answer_text(chunks).rstrip() == "Alice's cat is called Tom, as she said."
    assert not llm.calls_for("ask_plan") and chunks[-1].usage is not None and chunks[-1].usage.calls == 1
    answers = [c for c in chunks if c.chunk_type == "answer"]
    assert len(answers) > 2, "streamed in pieces, not held back to the end"


async def test_auto_on_an_empty_graph_asks_the_agent_and_says_nothing_is_known(
    embedder: HashEmbedder,
) -> None:
    llm = ScriptedLLM({"ask_plan": [plan("search_facts", query="Alice"), plan("answer")]})
    async with EmbeddedStore(":memory:") as empty, graph(empty, embedder, llm) as kg:
        chunks = await dialog(kg, "Where does Alice live?")
    assert answer_text(chunks) == NOTHING and not llm.calls_for("ask_answer")
    assert tools(chunks) == [*CONTEXT_TOOLS, "search_facts"]


def test_the_names_a_question_may_name() -> None:
    found = name_candidates("What did Melanie's kids paint in the park?")
    assert "Melanie's kids" in found and "Melanie" in found and "park" in found
    assert not {"What", "did", "the", "What did"} & set(found)
    assert found.index("Melanie's kids") < found.index("Melanie"), "longest first"
