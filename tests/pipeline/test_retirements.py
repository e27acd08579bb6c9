"""What a model's ``contradicts`` answers may retire (``pipeline.facts.retirements``): restatements never,
every candidate shown at once not with ``retire_all_guard``; a real change still does."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

from epigraph import KnowledgeGraph
from epigraph.config import Settings
from epigraph.episodes.inputs import EpisodeInput
from epigraph.graph.embedded import EmbeddedStore
from epigraph.ingestion.ingestor import Ingestor
from epigraph.pipeline.facts.retirements import restates, sentence_words
from epigraph.pipeline.options import (
    SMALL_MODEL_RETIRE_ALL_GUARD,
    FactOptions,
    IngestOptions,
    for_small_model,
    small_model_options,
)
from epigraph.prompts.protocol import ChatRequest
from epigraph.prompts.resolve_episode import verdict_line
from epigraph.testing import HashEmbedder, ScriptedLLM
from tests.support.world import T0, F, Turn, World

ALL_SCOPED = IngestOptions(facts=FactOptions(similarity_floor=0.0))
GUARDED = IngestOptions(facts=FactOptions(similarity_floor=0.0, retire_all_guard=3))
MEL = "Melanie: I'm swamped with the kids & work, Caroline, and I paint. I live near you."
EARLIER = [
    F("Melanie", "Caroline", "LIVES_NEAR", "Melanie lives in the same city as Caroline."),
    F("Melanie", "Caroline", "FRIEND_OF", "Melanie and Caroline are friends."),
    F("Melanie", "Caroline", "WORKS_WITH", "Melanie works in the same company as Caroline."),
]
LIKES = "Melanie: I like you, Caroline."
LIKES_FACT = F("Melanie", "Caroline", "LIKES", "Melanie likes Caroline.")


def retire_every_candidate(request: ChatRequest) -> str:
    """What the local 1.5B model answered in 11 of its 16 retiring decisions (recorded replies)."""
    facts = request.variables["facts"]
    return "\n".join(verdict_line(f["id"], (), [c["id"] for c in f["candidates"]]) for f in facts)


def world(second: str, fact: F, resolve: Any) -> World:
    return World(
        {MEL: Turn(["Melanie", "Caroline"], EARLIER), second: Turn(["Melanie", "Caroline"], [fact])},
        overrides={"resolve_episode": resolve},
    )


async def _two_turns(store: EmbeddedStore, embedder: HashEmbedder, w: World, options: IngestOptions) -> Any:
    ingestor = Ingestor(store, w.llm(), embedder, options)
    await ingestor.add_episode(EpisodeInput(MEL, group_id="g", reference_time=T0))
    return await ingestor.add_episode(
        EpisodeInput(list(w.turns)[1], group_id="g", reference_time=T0 + timedelta(days=1))
    )


def test_a_restatement_has_the_same_words_up_to_articles_and_punctuation() -> None:
    assert restates(
        "Melanie painted the lake sunrise last year.", "Melanie painted that lake sunrise last year!"
    )
    assert restates(
        "Melanie lives in the same city as Caroline.", "melanie lives in the same city as caroline"
    )
    assert not restates("Alice no longer lives in Paris.", "Alice lives in Paris.")
    assert not restates("Jon opened his studio.", "Jon will open his studio.")
    assert not restates("", "")
    assert sentence_words("Caroline's agency, finally!") == ["caroline's", "agency", "finally"]


async def test_retiring_every_candidate_shown_retires_none_under_the_guard(
    store: EmbeddedStore, embedder: HashEmbedder
) -> None:
    liked = await _two_turns(store, embedder, world(LIKES, LIKES_FACT, retire_every_candidate), GUARDED)
    assert liked.invalidated == []
    assert [f.text for f in liked.facts] == ["Melanie likes Caroline."], "the new fact is kept"
    assert any("retired all 3 candidates shown" in w for w in liked.report.warnings), liked.report.warnings


async def test_without_the_guard_the_same_answer_retires_every_candidate(
    store: EmbeddedStore, embedder: HashEmbedder
) -> None:
    """The default (a strong model's answer is trusted): what the guard is there to stop."""
    liked = await _two_turns(store, embedder, world(LIKES, LIKES_FACT, retire_every_candidate), ALL_SCOPED)
    assert sorted(f.text for f in liked.invalidated) == sorted(f.fact for f in EARLIER)


async def test_a_real_change_among_several_candidates_is_still_applied_under_the_guard(
    store: EmbeddedStore, embedder: HashEmbedder
) -> None:
    moved = "Melanie moved away from Caroline's city."

    def one_change(request: ChatRequest) -> str:
        (fact,) = request.variables["facts"]
        chosen = [c["id"] for c in fact["candidates"] if c["fact"] == EARLIER[0].fact]
        return verdict_line(fact["id"], (), chosen)

    second = "Melanie: I moved away from your city, Caroline."
    result = await _two_turns(
        store, embedder, world(second, F("Melanie", "Caroline", "MOVED_AWAY", moved), one_change), GUARDED
    )
    assert [f.text for f in result.invalidated] == [EARLIER[0].fact]
    assert not any("retire" in w for w in result.report.warnings)


async def test_a_restated_candidate_is_read_as_the_duplicate_not_retired(
    store: EmbeddedStore, embedder: HashEmbedder
) -> None:
    again = "Melanie: as I said, I live near you."
    restated = F("Melanie", "Caroline", "LIVES_CLOSE_TO", "Melanie lives in that same city as Caroline!")

    def retire_the_restated(request: ChatRequest) -> str:
        (fact,) = request.variables["facts"]
        chosen = [c["id"] for c in fact["candidates"] if c["fact"] == EARLIER[0].fact]
        return verdict_line(fact["id"], (), chosen)

    result = await _two_turns(store, embedder, world(again, restated, retire_the_restated), ALL_SCOPED)
    assert result.invalidated == []
    (kept,) = result.facts
    assert kept.text == EARLIER[0].fact and len(kept.episodes) == 2, "the earlier fact, now said twice"
    assert any("which says the same; read as a duplicate" in w for w in result.report.warnings)


PAINTING = "Melanie: Thanks, Caroline! Painting's a fun way to express my feelings and get creative."
PAINTING_FACTS = [
    F("Melanie", "Caroline", "THANKS", "Melanie thanks Caroline."),
    F("Melanie", "Caroline", "TELLS", "Melanie tells Caroline that painting is fun."),
    F("Melanie", "Caroline", "SHARES_WITH", "Melanie shares her feelings with Caroline."),
]


async def test_the_recorded_blanket_reply_of_the_local_model_retires_nothing(
    store: EmbeddedStore, embedder: HashEmbedder
) -> None:
    """Its real decisions (three new facts, each said to contradict all five facts joining Melanie and
    Caroline; recorded as JSON, kept as verdict lines) replayed over the same shape of graph: under the
    small model's options nothing is retired."""
    recorded = json.loads(
        (Path(__file__).parent / "fixtures/live/resolve_retires_everything.json").read_text()
    )
    many = [*EARLIER, F("Melanie", "Caroline", "VISITS", "Melanie visits Caroline."),
            F("Melanie", "Caroline", "CALLS", "Melanie calls Caroline.")]  # fmt: skip
    w = World(
        {MEL: Turn(["Melanie", "Caroline"], many), PAINTING: Turn(["Melanie", "Caroline"], PAINTING_FACTS)},
        overrides={"resolve_episode": lambda request: recorded["text"]},
    )
    result = await _two_turns(store, embedder, w, for_small_model(ALL_SCOPED))
    assert result.invalidated == []
    assert sorted(f.text for f in result.facts) == sorted(f.fact for f in PAINTING_FACTS)
    assert sum("retired all 5 candidates shown" in w for w in result.report.warnings) == 3


def test_the_small_model_options_turn_the_guard_on_unless_set() -> None:
    assert for_small_model().facts.retire_all_guard == SMALL_MODEL_RETIRE_ALL_GUARD
    assert for_small_model(IngestOptions(mode="combined")).mode == "combined"
    assert for_small_model(IngestOptions(facts=FactOptions(retire_all_guard=5))).facts.retire_all_guard == 5
    assert IngestOptions().facts.retire_all_guard == 0


def test_a_knowledge_graph_on_the_local_model_uses_the_small_model_options() -> None:
    """Nothing starts before the graph is entered: the options are set when it is made."""
    local = KnowledgeGraph(Settings(llm_local=True, db_path=":memory:"), embedder=HashEmbedder())
    assert local.options.facts.retire_all_guard == SMALL_MODEL_RETIRE_ALL_GUARD
    chosen = KnowledgeGraph(
        Settings(llm_local=True, db_path=":memory:"),
        embedder=HashEmbedder(),
        options=IngestOptions(mode="combined", facts=FactOptions(retire_all_guard=4)),
    )
    assert (chosen.options.mode, chosen.options.facts.retire_all_guard) == ("combined", 4)
    other = KnowledgeGraph(Settings(db_path=":memory:"), llm=ScriptedLLM({}), embedder=HashEmbedder())
    assert other.options.facts.retire_all_guard == 0


async def test_with_retire_off_no_decision_retires_a_fact_and_each_is_reported(
    store: EmbeddedStore, embedder: HashEmbedder
) -> None:
    """The local model's options: its retirements are noise, so none is applied (and each is said)."""
    moved = "Melanie moved away from Caroline's city."
    second = "Melanie: I moved away from your city, Caroline."
    off = IngestOptions(facts=FactOptions(similarity_floor=0.0, retire=False))
    result = await _two_turns(
        store,
        embedder,
        world(second, F("Melanie", "Caroline", "MOVED_AWAY", moved), retire_every_candidate),
        off,
    )
    assert result.invalidated == []
    assert [f.text for f in result.facts] == [moved], "the new fact is kept"
    assert any("none retired (IngestOptions.facts.retire is off)" in w for w in result.report.warnings)


async def test_with_resolve_off_no_resolve_call_is_made_a_repeat_still_merges_and_the_rest_stay_new(
    store: EmbeddedStore, embedder: HashEmbedder
) -> None:
    """The local model's options: it answered ``new`` to every question, so none is asked; the
    deterministic rules still merge a fact repeated word for word (and exact names, as ever)."""
    second = "Melanie: I live near you, Caroline, and I love your city."
    loves = F("Melanie", "Caroline", "LOVES_CITY_OF", "Melanie loves Caroline's city.")
    asked: list[ChatRequest] = []

    def resolve(request: ChatRequest) -> str:
        asked.append(request)
        return retire_every_candidate(request)

    w = World(
        {
            MEL: Turn(["Melanie", "Caroline"], EARLIER),
            second: Turn(["Melanie", "Caroline"], [EARLIER[0], loves]),
        },
        overrides={"resolve_episode": resolve},
    )
    result = await _two_turns(
        store, embedder, w, IngestOptions(facts=FactOptions(similarity_floor=0.0, resolve=False))
    )
    assert asked == [], "no resolve_episode call"
    assert result.ok and result.invalidated == []
    repeat = next(f for f in result.facts if f.text == EARLIER[0].fact)
    assert len(repeat.episodes) == 2, "the word-for-word repeat extends the earlier fact's provenance"
    assert loves.fact in [f.text for f in result.facts], "the new fact is kept as new"
    async with EmbeddedStore(":memory:") as other:
        asking = await _two_turns(
            other, embedder, w, IngestOptions(facts=FactOptions(similarity_floor=0.0, retire=False))
        )
    assert asking.ok and len(asked) == 1, "with resolve on, the same turn asks about its candidates"


def test_the_small_model_ingests_without_context_close_candidates_only_and_no_retirements() -> None:
    small = small_model_options()
    assert (small.context.tokens, small.facts.candidates_always, small.facts.retire) == (0, 0, False)
    assert small.facts.resolve is False and IngestOptions().facts.resolve is True
    assert small.facts.dates_stated_only is True and IngestOptions().facts.dates_stated_only is False
    assert for_small_model(None) == small
    assert for_small_model(IngestOptions(mode="combined")).context == IngestOptions().context
