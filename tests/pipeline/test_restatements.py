"""Restatements without a model (``FactOptions.restated_similarity``): a fact on the same two entities,
saying the same, adds its episode as a source instead of a second fact; another meaning stays apart."""

from __future__ import annotations

from epigraph.episodes.inputs import EpisodeInput
from epigraph.graph.embedded import EmbeddedStore
from epigraph.ingestion.ingestor import Ingestor
from epigraph.pipeline.options import FactOptions, IngestOptions
from epigraph.testing import HashEmbedder
from tests.support.world import F, Turn, World

T0, T1 = "2023-01-20T16:04:00Z", "2023-01-20T16:10:00Z"
FIRST = "Jon: I'm passionate about dancing, so I'm off to go swimming."
SECOND = "Jon: Yes, I'm so passionate about dancing! I teach dancing to kids at the studio."


def _world() -> World:
    return World(
        {
            FIRST: Turn(
                ["Jon", "dancing", "swimming"],
                [
                    F("Jon", "dancing", "PASSIONATE_ABOUT", "Jon is passionate about dancing."),
                    F("Jon", "swimming", "OFF_TO", "Jon is off to go swimming."),
                    F("Jon", "swimming", "OFF_TO_GO", "Jon is off to go swimming with the kids."),
                ],
            ),
            SECOND: Turn(
                ["Jon", "dancing", "kids"],
                [
                    F("Jon", "dancing", "IS_PASSIONATE_ABOUT", "Jon is so passionate about dancing."),
                    F("Jon", "dancing", "TEACHES", "Jon teaches dancing to kids at the studio."),
                ],
            ),
        }
    )


async def test_a_restatement_adds_a_source_instead_of_a_fact(
    store: EmbeddedStore, embedder: HashEmbedder
) -> None:
    ingestor = Ingestor(
        store,
        _world().llm(),
        embedder,
        IngestOptions(facts=FactOptions(resolve=False, restated_similarity=0.7)),
    )
    first = await ingestor.add_episode(EpisodeInput(FIRST, group_id="g", reference_time=T0))
    assert sorted(f.text for f in first.facts) == [
        "Jon is off to go swimming.",
        "Jon is passionate about dancing.",
    ]
    assert any("restates 'Jon is off to go swimming.'" in w for w in first.report.warnings), (
        "said twice in a reply"
    )
    second = await ingestor.add_episode(EpisodeInput(SECOND, group_id="g", reference_time=T1))
    assert second.report.llm_calls == 2, "extraction only: no resolve call"
    by_text = {f.text: f for f in second.facts}
    passion = by_text["Jon is passionate about dancing."]
    assert passion.episodes == [first.episode.uuid, second.episode.uuid], "one fact, two sources"
    assert "Jon is so passionate about dancing." not in by_text
    assert by_text["Jon teaches dancing to kids at the studio."].episodes == [second.episode.uuid]
    stored = await store.get_facts("g", [passion.uuid])
    assert stored[0].episodes == [first.episode.uuid, second.episode.uuid]


async def test_without_the_option_only_word_for_word_repeats_merge(
    store: EmbeddedStore, embedder: HashEmbedder
) -> None:
    ingestor = Ingestor(store, _world().llm(), embedder, IngestOptions(facts=FactOptions(resolve=False)))
    first = await ingestor.add_episode(EpisodeInput(FIRST, group_id="g", reference_time=T0))
    second = await ingestor.add_episode(EpisodeInput(SECOND, group_id="g", reference_time=T1))
    assert len(first.facts) == 3
    assert "Jon is so passionate about dancing." in {f.text for f in second.facts}
