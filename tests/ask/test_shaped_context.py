"""The one-call context shaped by the question (``ask/shapes.py``, ``context.SHAPED``) over a real embedded
store ingested with ScriptedLLM: a gathering question reads an entity's whole record (grouped,
deduplicated, dated), a "when" question the date a relative word meant, a question about what was said
that message; still one model call, citations still resolved."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime

import pytest

from epigraph import AskChunk, KnowledgeGraph
from epigraph.ask import check_dialog
from epigraph.ask.context import PARTS, SHAPED, parts_for
from epigraph.ask.record import deduplicated
from epigraph.ask.relative_dates import meant_dates
from epigraph.ask.shapes import shape_of
from epigraph.episodes.inputs import EpisodeInput
from epigraph.graph.embedded import EmbeddedStore
from epigraph.graph.model import Fact
from epigraph.ingestion.ingestor import Ingestor
from epigraph.testing import HashEmbedder, ScriptedLLM, ScriptedReply
from tests.support.world import F, Turn, World

POTTERY = "Melanie signed up for a pottery class."
PLATE = "Melanie made a plate in the pottery class."
CAMPING = "Melanie went camping with her kids."
PAINTING = "Melanie paints sunsets."
GROUP_MEETING = "Caroline went to an LGBTQ support group."
SAID = "Caroline: I went to an LGBTQ support group yesterday, it was so powerful."
EPISODES = [
    (SAID, datetime(2023, 5, 8, 13, 56, tzinfo=UTC)),
    ("Melanie: We went camping with the kids last week.", datetime(2023, 6, 27, tzinfo=UTC)),
    ("Melanie: I signed up for a pottery class.", datetime(2023, 7, 2, tzinfo=UTC)),
    ("Melanie: I paint sunsets, it relaxes me.", datetime(2023, 7, 10, tzinfo=UTC)),
    ("Melanie: I made a plate in my pottery class!", datetime(2023, 8, 24, tzinfo=UTC)),
]
WORLD = World(
    {
        EPISODES[0][0]: Turn(
            ["Caroline", "LGBTQ support group"],
            [F("Caroline", "LGBTQ support group", "ATTENDED", GROUP_MEETING, "2023-05-07T00:00:00Z")],
        ),
        EPISODES[1][0]: Turn(
            ["Melanie", "camping"], [F("Melanie", "camping", "WENT", CAMPING, "2023-06-20T00:00:00Z")]
        ),
        EPISODES[2][0]: Turn(
            ["Melanie", "pottery class"],
            [F("Melanie", "pottery class", "SIGNED_UP_FOR", POTTERY, "2023-07-02T00:00:00Z")],
        ),
        EPISODES[3][0]: Turn(
            ["Melanie", "painting"], [F("Melanie", "painting", "ENJOYS", PAINTING, "2023-07-10T00:00:00Z")]
        ),
        EPISODES[4][0]: Turn(
            ["Melanie", "pottery class"],
            [F("Melanie", "pottery class", "MADE_PLATE_IN", PLATE, "2023-08-24T00:00:00Z")],
        ),
    }
)
NOW = "2023-09-01"


@pytest.fixture
async def kg() -> AsyncIterator[KnowledgeGraph]:
    embedder = HashEmbedder(dim=64)
    store = EmbeddedStore(":memory:")
    await store.setup(embedder.dim)
    ingestor = Ingestor(store, WORLD.llm(), embedder)
    for content, when in EPISODES:
        await ingestor.add_episode(EpisodeInput(content, group_id="g", reference_time=when))
    graph = KnowledgeGraph(store=store, llm=ScriptedLLM({}), embedder=embedder, group_id="g")
    async with graph:
        yield graph


def citing_first_fact(request: object) -> ScriptedReply:
    return ScriptedReply("Pottery and camping [F1].", chunk_size=5)


async def dialog(kg: KnowledgeGraph, question: str, **kw: object) -> tuple[list[AskChunk], ScriptedLLM]:
    llm = ScriptedLLM({"ask_answer": citing_first_fact})
    kg.llm = llm
    chunks = [c async for c in kg.ask(question, as_of=NOW, **kw)]  # type: ignore[call-overload]
    check_dialog(chunks)
    return chunks, llm


def test_the_shape_is_read_from_the_question_grammar() -> None:
    assert shape_of("When did Melanie sign up for a pottery class?") == "when"
    assert shape_of("How long ago was Caroline's 18th birthday?") == "when"
    assert shape_of("What activities does Melanie partake in?") == "gather"
    assert shape_of("Which books has Melanie read?") == "gather"
    assert shape_of("What did Caroline say about the support group?") == "said"
    assert shape_of("Where does Alice live?") == "plain"
    assert shape_of("What is Caroline's identity?") == "plain"
    assert parts_for("Where does Alice live?") == PARTS
    assert [p.name for p in parts_for("What activities does Melanie do?")] == [
        p.name for p in SHAPED["gather"]
    ]
    for parts in SHAPED.values():
        assert abs(sum(p.share for p in parts) - 1.0) < 1e-9, "each shape's shares add up to the budget"


def test_relative_words_are_read_against_the_message_date() -> None:
    sent = datetime(2023, 7, 15, 10, tzinfo=UTC)  # a Saturday
    text = "Yesterday I ran; last week we camped, last Friday I painted; I moved 4 years ago. Yesterday!"
    assert meant_dates(text, sent) == [
        "yesterday: 14 July 2023",
        "last week: the week before 15 July 2023",
        "last friday: Friday 14 July 2023",
    ], "each once, at most three"
    assert meant_dates("We met 4 years ago, and two months ago", sent) == [
        "4 years ago: 2019",
        "two months ago: May 2023",
    ]
    assert meant_dates("last month and next year", sent) == ["last month: June 2023", "next year: 2024"]
    assert meant_dates("a few years ago, recently", sent) == []


def test_facts_of_the_same_words_are_one_with_every_episode() -> None:
    def fact(text: str, episode: str, day: int) -> Fact:
        when = datetime(2023, 7, day, tzinfo=UTC)
        return Fact(
            group_id="g", source_uuid="m", target_uuid="p", relation="R", text=text,
            episodes=[episode], stated_at=when, valid_at=when,
        )  # fmt: skip

    later, first, other = (
        fact("Melanie does pottery!", "e2", 9),
        fact("melanie does  pottery", "e1", 2),
        fact(PLATE, "e3", 5),
    )
    merged = deduplicated([later, other, first])
    assert [f.uuid for f in merged] == [first.uuid, other.uuid], "the earliest kept, in order of statement"
    assert merged[0].episodes == ["e1", "e2"]


CAMPED = [
    ("Melanie: We went camping at the beach.", "Melanie went camping at the beach.", 5),
    ("Melanie: We went camping in the mountains.", "Melanie went camping in the mountains.", 9),
    ("Melanie: We went camping in the forest.", "Melanie went camping in the forest.", 20),
]
ASKED = "What places has Melanie been to: the beach, the mountains, the forest?"
"""Names no thing of the record (a name would make its record the one read), but camping's words."""
LISTED = World(
    {said: Turn(["Melanie", "camping"], [F("Melanie", "camping", "WENT", fact)]) for said, fact, _ in CAMPED}
    | {
        EPISODES[2][0]: WORLD.turns[EPISODES[2][0]],  # the pottery class
        EPISODES[3][0]: WORLD.turns[EPISODES[3][0]],  # painting
    }
)


async def test_a_gathering_question_reads_the_entity_whole_record_one_thing_each_first() -> None:
    """Melanie's record: camping (three facts, the closest to the question), the pottery class,
    painting. Every fact once and dated, after the best-matching messages, and one fact about each
    thing before camping's second (grouped whole, camping's three came first)."""
    embedder = HashEmbedder(dim=64)
    store = EmbeddedStore(":memory:")
    await store.setup(embedder.dim)
    ingestor = Ingestor(store, LISTED.llm(), embedder)
    told = [(said, datetime(2023, 6, day, tzinfo=UTC)) for said, _, day in CAMPED] + EPISODES[2:4]
    for content, when in told:
        await ingestor.add_episode(EpisodeInput(content, group_id="g", reference_time=when))
    melanie = (await store.entities_by_names("g", ["Melanie"]))["Melanie"][0]
    record = await store.facts_around("g", [melanie.uuid])
    llm = ScriptedLLM({"ask_answer": citing_first_fact})
    async with KnowledgeGraph(store=store, llm=llm, embedder=embedder, group_id="g") as kg:
        chunks = [c async for c in kg.ask(ASKED, as_of=NOW, mode="context")]
    check_dialog(chunks)
    actions = [c.data for c in chunks if c.chunk_type == "action"]
    assert actions[0]["tool"] == "search_episodes", "the best-matching messages first"
    assert {"tool": "record", "args": {"entity": "Melanie"}} in actions
    assert "search_facts" not in [a["tool"] for a in actions], "the record instead of the fact search"
    (call,) = llm.calls
    assert call.prompt_name == "ask_answer", "one model call: the answer"
    assert len(record) == 5
    lines = str(call.variables["facts"]).splitlines()
    shown = [f for line in lines for f in record if f.text in line]
    assert sorted(f.uuid for f in shown) == sorted(f.uuid for f in record), "the whole record, each once"
    things = [({f.source_uuid, f.target_uuid} - {melanie.uuid}).pop() for f in shown]
    assert "camping" in shown[0].text, "the thing closest to the question first"
    assert len(set(things[:3])) == 3 and things[3:] == [things[0]] * 2, "one fact each, then the rest"
    assert any(POTTERY in line and "from 2 July 2023" in line for line in lines), "with its date"
    last = chunks[-1]
    assert last.citations and last.citations[0].id == "F1" and last.citations[0].text in lines[0]


async def test_a_when_question_holds_the_date_the_relative_word_meant(kg: KnowledgeGraph) -> None:
    chunks, llm = await dialog(kg, "When did Caroline go to the LGBTQ support group?", mode="context")
    (call,) = llm.calls
    facts, episodes = str(call.variables["facts"]), str(call.variables["episodes"])
    assert any(GROUP_MEETING in line and "from 7 May 2023" in line for line in facts.splitlines())
    assert "I went to an LGBTQ support group yesterday" in episodes
    assert "(yesterday: 7 May 2023)" in episodes, "the message's relative word, resolved"
    tools = [c.data["tool"] for c in chunks if c.chunk_type == "action"]
    assert tools == ["search_episodes", "search_facts", "conversations_of", "episodes_of"], "no summaries"


async def test_a_question_about_what_was_said_reads_that_message(kg: KnowledgeGraph) -> None:
    chunks, llm = await dialog(kg, "What did Caroline say about the LGBTQ support group?", mode="context")
    (call,) = llm.calls
    assert SAID.split(": ", 1)[1] in str(call.variables["episodes"])
    tools = [c.data["tool"] for c in chunks if c.chunk_type == "action"]
    assert tools == ["search_episodes", "search_facts", "conversations_of", "episodes_of"], (
        "the said shape's parts: no entity summaries, the best-matching messages first with the most room"
    )


async def test_the_default_path_makes_one_model_call_and_its_citations_resolve(kg: KnowledgeGraph) -> None:
    chunks, llm = await dialog(kg, "What activities does Melanie partake in?")
    assert [c.prompt_name for c in llm.calls] == ["ask_answer"], "auto: the context's answer, one call"
    last = chunks[-1]
    observed = {i["id"]: i for c in chunks if c.chunk_type == "observation" for i in c.data["items"]}
    assert last.citations and all(observed[c.id]["uuid"] == c.uuid for c in last.citations)
    assert last.usage is not None and last.usage.calls == 1
    stored = await kg.store.get_facts("g", [c.uuid for c in last.citations])
    assert [f.text for f in stored] == [c.text for c in last.citations]
