"""Bulk mode: a window of turns extracted in one call, each turn then its own episode, in order."""

from __future__ import annotations

from datetime import timedelta

from epigraph.episodes.inputs import EpisodeInput
from epigraph.errors import LLMUnavailable
from epigraph.graph.embedded import EmbeddedStore
from epigraph.graph.store import EVERYTHING, FactFilter
from epigraph.ingestion.ingestor import Ingestor
from epigraph.pipeline.bulk import attributed
from epigraph.pipeline.names.policy import SYNONYMS
from epigraph.pipeline.options import IngestOptions
from epigraph.prompts import extract_window as wp
from epigraph.prompts.extraction import EntityLine, FactLine
from epigraph.prompts.protocol import ChatRequest
from epigraph.testing import HashEmbedder, ScriptedReply
from tests.support.world import T0, F, Turn, World

TURNS = {
    "Ann: Hi Bo!": Turn(),
    "Ann: I moved to Oslo last week and joined Acme.": Turn(
        ["Ann", "Oslo", "Acme"],
        [
            F("Ann", "Oslo", "MOVED_TO", "Ann moved to Oslo last week."),
            F("Ann", "Acme", "JOINED", "Ann joined Acme."),
        ],
    ),
    "Bo: Nice! I live in Rome.": Turn(["Bo", "Rome"], [F("Bo", "Rome", "LIVES_IN", "Bo lives in Rome.")]),
    "Ann: Acme is in Oslo too.": Turn(
        ["Acme", "Oslo"], [F("Acme", "Oslo", "LOCATED_IN", "Acme is in Oslo.")]
    ),
}


def items() -> list[EpisodeInput]:
    """One turn a day, so each fact's time words read against its own turn."""
    return [
        EpisodeInput(content=c, reference_time=T0 + timedelta(days=i), group_id="g")
        for i, c in enumerate(TURNS)
    ]


async def test_a_window_call_feeds_each_turn_its_own_lines(
    store: EmbeddedStore, embedder: HashEmbedder
) -> None:
    llm = World(TURNS).llm()
    results = await Ingestor(store, llm, embedder, IngestOptions(mode="bulk", window=3)).add_episodes(items())

    assert [c.prompt_name for c in llm.calls if c.prompt_name.startswith("extract")] == ["extract_window"] * 2
    assert [len(r.facts) for r in results] == [0, 2, 1, 1], "each fact in the episode of its turn"
    oslo = next(f for f in results[1].facts if "Oslo" in f.text)
    assert oslo.episodes == [results[1].episode.uuid]
    assert oslo.valid_at is not None and oslo.valid_at.date() == (T0 + timedelta(days=1 - 7)).date()
    windows = [r.report.per_prompt.get("extract_window") for r in results]
    assert [w.calls if w else 0 for w in windows] == [1, 0, 0, 1], "charged once, to a window's first turn"


async def test_bulk_builds_the_graph_combined_mode_builds(embedder: HashEmbedder) -> None:
    graphs = []
    for mode in ("combined", "bulk"):
        async with EmbeddedStore(":memory:") as store:
            await store.setup(embedder.dim)
            await Ingestor(store, World(TURNS).llm(), embedder, IngestOptions(mode=mode)).add_episodes(
                items()
            )
            facts = await store.facts_around("g", [], FactFilter(time=EVERYTHING), limit=100)
            graphs.append((await store.stats("g"), sorted((f.text, f.valid_at) for f in facts)))
    assert graphs[0] == graphs[1]


async def test_a_failed_window_call_falls_back_to_each_turns_own_call(
    store: EmbeddedStore, embedder: HashEmbedder
) -> None:
    world = World(TURNS)

    def down(request: ChatRequest) -> ScriptedReply:
        return ScriptedReply(error=LLMUnavailable("the window call failed"))

    world.overrides["extract_window"] = down
    llm = world.llm()
    results = await Ingestor(store, llm, embedder, IngestOptions(mode="bulk")).add_episodes(items())
    assert all(r.ok for r in results)
    assert [c.prompt_name for c in llm.calls].count("extract_window") == 1, "not asked again per turn"
    assert [c.prompt_name for c in llm.calls].count("extract_combined") == 4
    assert [len(r.facts) for r in results] == [0, 2, 1, 1]
    first = results[0].report
    assert any("extract_window failed (the window call failed)" in w for w in first.warnings)
    assert first.per_prompt["extract_window"].calls == 1, "the failed call is charged to the first turn"
    assert all("extract_window" not in r.report.per_prompt for r in results[1:])


async def test_turns_a_cut_window_reply_never_got_to_extract_on_their_own(
    store: EmbeddedStore, embedder: HashEmbedder
) -> None:
    """A window reply that runs away in turn 2 (its first line again) is stopped there: turn 2 keeps
    the line it got and says the reply was cut; turns 3 and 4, never reached, each make their own call
    (no second window: windows stay where they were asked for)."""
    world = World(TURNS)

    def runaway(request: ChatRequest) -> ScriptedReply:
        lines = world.extract_window(request.variables).splitlines()
        first_of_two = next(line for line in lines if line.startswith("2 "))
        return ScriptedReply("\n".join(["1 Ann: none", first_of_two, first_of_two, first_of_two]) + "\n")

    world.overrides["extract_window"] = runaway
    llm = world.llm()
    results = await Ingestor(store, llm, embedder, IngestOptions(mode="bulk")).add_episodes(items())

    assert all(r.ok for r in results)
    assert [c.prompt_name for c in llm.calls].count("extract_window") == 1
    combined = [c.variables.get("message") for c in llm.calls if c.prompt_name == "extract_combined"]
    assert combined == ["Nice! I live in Rome.", "Acme is in Oslo too."]
    assert [len(r.facts) for r in results] == [0, 1, 1, 1]
    assert results[0].report.truncated and "stopped" in " ".join(results[0].report.warnings)


async def test_a_window_reply_cut_before_its_first_line_is_reported_and_every_turn_extracts_alone(
    store: EmbeddedStore, embedder: HashEmbedder
) -> None:
    world = World(TURNS)
    world.overrides["extract_window"] = lambda request: ScriptedReply("1 Ann: none", finish_reason="length")
    llm = world.llm()
    results = await Ingestor(store, llm, embedder, IngestOptions(mode="bulk")).add_episodes(items())

    assert all(r.ok for r in results)
    assert [c.prompt_name for c in llm.calls].count("extract_combined") == 4
    assert [len(r.facts) for r in results] == [0, 2, 1, 1]
    assert any("extract_window failed (reply cut at the token limit" in w for w in results[0].report.warnings)
    assert results[0].report.per_prompt["extract_window"].calls == 1


def _window(*turns: tuple[str, str]) -> wp.ExtractWindowInput:
    return wp.ExtractWindowInput(turns=[wp.WindowTurn(speaker=s, message=m) for s, m in turns])


def test_a_line_numbered_a_turn_off_goes_to_the_turn_that_states_it_with_that_turns_speaker() -> None:
    data = _window(
        ("Cy", "Hey Mo! How have you been?"),
        ("Mo", "Swamped with work. You?"),
        ("Cy", "I went to a pottery class yesterday, and my sister came too."),
        ("Mo", "Nice! I love pottery and my kids do too."),
    )
    read = wp.WindowLines()
    found = [
        *read.decode("2 Mo: [Mo] went to [pottery class] yesterday", data),
        *read.decode("2 Mo: [Mo's sister] came to [pottery class]", data),
        *read.decode("4 Mo: [Mo] loves [pottery]", data),
        *read.decode("4 Mo: [Mo's kids] love [pottery]", data),
        *read.decode("2 Mo: [Mo] is swamped with [work]", data),
    ]

    lines = attributed(found, data.turns, SYNONYMS)

    moved = [(line.turn, next(i.fact for i in line.items if isinstance(i, FactLine))) for line in lines]
    assert moved == [
        (3, "Cy went to pottery class yesterday"),
        (3, "Cy's sister came to pottery class"),
        (4, "Mo loves pottery"),
        (4, "Mo's kids love pottery"),
        (2, "Mo is swamped with work"),
    ], "moved where the text names it, the written speaker read as that turn's; ties keep their number"
    names = {i.name for i in lines[1].items if isinstance(i, EntityLine)}
    assert names == {"Cy's sister", "pottery class"}
