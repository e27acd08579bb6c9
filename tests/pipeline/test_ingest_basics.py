"""Core ingestion behaviour: calls per episode, exact-name merges, endpoint matching, accounting."""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from epigraph.episodes.events import EntityExtracted
from epigraph.episodes.inputs import EpisodeInput
from epigraph.graph.embedded import EmbeddedStore
from epigraph.graph.store import EVERYTHING, FactFilter
from epigraph.ingestion.ingestor import Ingestor
from epigraph.pipeline.options import IngestOptions, SummaryOptions
from epigraph.testing import HashEmbedder
from tests.support.world import T0, F, Turn, World


class OrthogonalEmbedder:
    """Every text gets its own basis vector: no two names are ever close by cosine."""

    def __init__(self, dim: int = 64) -> None:
        self.dim, self.name, self.requests = dim, "orthogonal", 0
        self._next = 0

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if texts:
            self.requests += 1
        for row in range(len(texts)):
            out[row, self._next % self.dim] = 1.0
            self._next += 1
        return out


async def test_a_turn_without_entities_costs_exactly_one_call(
    store: EmbeddedStore, embedder: HashEmbedder
) -> None:
    world = World({"Bob: Bye!": Turn()})
    llm = world.llm()
    result = await Ingestor(store, llm, embedder).add_episode(
        EpisodeInput("Bob: Bye!", group_id="g", reference_time=T0)
    )

    assert result.ok
    assert [c.prompt_name for c in llm.calls] == ["extract_entities"]
    assert result.report.llm_calls == 1
    assert result.report.embedding_requests == 0
    assert (await store.stats("g")).entities == 0


async def test_exact_name_duplicates_merge_whatever_their_vectors(store: EmbeddedStore) -> None:
    world = World(
        {
            "Ann: I joined DGIA.": Turn(
                ["Ann", "DGIA"], [F("Ann", "DGIA", "MEMBER_OF", "Ann is a member of DGIA.")]
            ),
            "Ben: DGIA hired me.": Turn(
                ["Ben", "dgia"], [F("Ben", "dgia", "WORKS_FOR", "Ben works for DGIA.")]
            ),
        }
    )
    llm = world.llm()
    embedder = OrthogonalEmbedder()
    ingestor = Ingestor(store, llm, embedder)
    for content in world.turns:
        await ingestor.add_episode(EpisodeInput(content, group_id="g", reference_time=T0))

    found = await store.entities_by_names("g", ["DGIA"])
    assert len(found["DGIA"]) == 1
    assert (await store.stats("g")).entities == 3
    assert not any(c.variables["entities"] for c in llm.calls_for("resolve_episode")), (
        "an exact name match needs no model"
    )
    facts = await store.facts_around("g", [found["DGIA"][0].uuid], FactFilter(time=EVERYTHING))
    assert {f.text for f in facts} == {"Ann is a member of DGIA.", "Ben works for DGIA."}


async def test_fact_endpoints_match_case_insensitively_and_through_aliases(
    store: EmbeddedStore, embedder: HashEmbedder
) -> None:
    world = World(
        {
            "Melanie: Hi!": Turn(["Melanie", "Caroline"]),
            "Caroline: Mel, you paint?": Turn(
                ["Caroline", "Mel", "painting"],
                [
                    F("caroline", "MEL", "ASKED", "Caroline asked Mel a question."),
                    F("Melanie", "Painting", "ENJOYS", "Melanie enjoys painting."),
                ],
            ),
        },
        same_as={"Mel": "Melanie"},
    )
    ingestor = Ingestor(store, world.llm(), embedder)
    results = [
        await ingestor.add_episode(EpisodeInput(c, group_id="g", reference_time=T0)) for c in world.turns
    ]

    assert len(results[1].facts) == 2, results[1].report.warnings
    melanie = (await store.entities_by_names("g", ["Mel"]))["Mel"]
    assert [e.name for e in melanie] == ["Melanie"]
    assert "Mel" in melanie[0].aliases


async def test_a_fact_naming_an_unknown_entity_is_dropped_and_reported(
    store: EmbeddedStore, embedder: HashEmbedder
) -> None:
    world = World({"Ann: hi Bo": Turn(["Ann", "Bo"], [F("Ann", "Zed", "KNOWS", "Ann knows Zed.")])})
    result = await Ingestor(store, world.llm(), embedder).add_episode(
        EpisodeInput("Ann: hi Bo", group_id="g", reference_time=T0)
    )
    assert result.facts == []
    assert any("'Zed'" in w for w in result.report.warnings)


async def test_report_tokens_equal_the_recorded_calls(store: EmbeddedStore, embedder: HashEmbedder) -> None:
    world = World(
        {
            "Ann: I live in Oslo.": Turn(
                ["Ann", "Oslo"], [F("Ann", "Oslo", "LIVES_IN", "Ann lives in Oslo.")]
            ),
            "Ann: Now I live in Rome.": Turn(
                ["Ann", "Rome"], [F("Ann", "Rome", "LIVES_IN", "Ann lives in Rome.")]
            ),
        },
        contradicts={"Ann lives in Rome.": ["Ann lives in Oslo."]},
    )
    llm = world.llm()
    ingestor = Ingestor(store, llm, embedder)
    reports = [
        (await ingestor.add_episode(EpisodeInput(c, group_id="g", reference_time=T0))).report
        for c in world.turns
    ]

    assert sum(r.llm_calls for r in reports) == len(llm.calls)
    assert sum(r.input_tokens for r in reports) == llm.usage.input_tokens
    assert sum(r.output_tokens for r in reports) == llm.usage.output_tokens
    second = reports[1]
    assert second.per_prompt["resolve_episode"].calls == 1
    assert sum(p.input_tokens for p in second.per_prompt.values()) == second.input_tokens
    assert second.embedding_requests <= 2
    assert {"context", "extract_entities", "extract_facts", "resolve_facts"} <= set(second.stage_ms)


async def test_separate_mode_keeps_to_four_round_trips(store: EmbeddedStore, embedder: HashEmbedder) -> None:
    facts = [
        F("Ann", "Rome", "LIVES_IN", "Ann lives in Rome."),
        F("Ann", "Acme", "WORKS_AT", "Ann works at Acme."),
    ]
    world = World(
        {
            "Ann: Rome, Acme.": Turn(["Ann", "Rome", "Acme"], facts),
            "Ann: Still Rome and Acme, and Milan soon.": Turn(
                ["Ann", "Rome", "Acme", "Milan"],
                [*facts, F("Ann", "Milan", "LIVES_IN", "Ann lives in Milan.", expression="next month")],
            ),
        },
        contradicts={"Ann lives in Milan.": ["Ann lives in Rome."]},
        latency=0.25,  # round trips come from call timestamps: calls started together must overlap even
    )  # when a loaded machine delays one start (at 0.02 s a 5th "round trip" appeared under load)
    llm = world.llm()
    ingestor = Ingestor(store, llm, embedder, IngestOptions(summaries=SummaryOptions(compose_max=1)))
    for content in world.turns:
        result = await ingestor.add_episode(EpisodeInput(content, group_id="g", reference_time=T0))
        assert 1 <= result.report.round_trips <= 4
    assert {c.prompt_name for c in llm.calls} >= {"resolve_episode", "summarize_entities"}
    milan = next(f for f in result.facts if f.text.startswith("Ann lives in Milan"))
    assert milan.valid_at is not None and milan.valid_at.month == T0.month % 12 + 1, "dated by its words"


async def test_combined_mode_builds_the_same_graph_with_fewer_calls(embedder: HashEmbedder) -> None:
    world = World(
        {
            "Ann: I live in Oslo with Bo.": Turn(
                ["Ann", "Oslo", "Bo"],
                [
                    F("Ann", "Oslo", "LIVES_IN", "Ann lives in Oslo."),
                    F("Ann", "Bo", "LIVES_WITH", "Ann lives with Bo."),
                ],
            )
        }
    )
    graphs, calls = [], []
    for mode in ("separate", "combined"):
        llm = world.llm()
        async with EmbeddedStore(":memory:") as store:
            await store.setup(embedder.dim)
            await Ingestor(store, llm, embedder, IngestOptions(mode=mode)).add_episode(
                EpisodeInput("Ann: I live in Oslo with Bo.", group_id="g", reference_time=T0)
            )
            graphs.append(await store.stats("g"))
        calls.append([c.prompt_name for c in llm.calls])
    assert graphs[0] == graphs[1]
    assert calls == [["extract_entities", "extract_facts"], ["extract_combined"]]


async def test_entity_resolution_starts_while_extraction_still_streams(
    store: EmbeddedStore, embedder: HashEmbedder
) -> None:
    names = ["Oslo", "Bo", "Cy", "Dee", "Eve"]
    text = "Ann: I met Bo, Cy, Dee and Eve in Oslo"
    facts = [F("Ann", n, "MET", f"Ann met {n}.") for n in names]
    world = World({text: Turn(["Ann", *names], facts)}, latency=0.05)
    llm = world.llm()
    ingestor = Ingestor(store, llm, embedder, IngestOptions(mode="combined"))
    seen: list[float] = []
    async for event in ingestor.ingest([{"content": text, "reference_time": T0, "group_id": "g"}]):
        if isinstance(event, EntityExtracted):
            seen.append(time.perf_counter())
    extraction = llm.calls_for("extract_combined")[0]
    assert len(seen) == len(names) + 1, "the speaker and each name, once"
    assert seen[0] < extraction.finished, "the first entity was handed on before the reply ended"
