"""Entity summaries per episode: small entities composed without a model, big ones in one call per
episode, or none at all."""

from __future__ import annotations

from epigraph.episodes.inputs import EpisodeInput
from epigraph.graph.embedded import EmbeddedStore
from epigraph.ingestion.ingestor import Ingestor
from epigraph.pipeline.options import IngestOptions, SummaryOptions
from epigraph.testing import HashEmbedder
from tests.support.world import T0, F, Turn, World, hobbies


async def test_small_entities_get_composed_summaries_without_a_model(
    store: EmbeddedStore, embedder: HashEmbedder
) -> None:
    world = World({"Ann: Oslo.": Turn(["Ann", "Oslo"], [F("Ann", "Oslo", "LIVES_IN", "Ann lives in Oslo.")])})
    llm = world.llm()
    await Ingestor(store, llm, embedder).add_episode(
        EpisodeInput("Ann: Oslo.", group_id="g", reference_time=T0)
    )
    assert not llm.calls_for("summarize_entities")
    ann = (await store.entities_by_names("g", ["Ann"]))["Ann"][0]
    assert ann.summary == "Ann lives in Oslo."


async def test_big_entities_share_one_summary_call_per_episode(
    store: EmbeddedStore, embedder: HashEmbedder
) -> None:
    world = World(hobbies(6))
    llm = world.llm()
    result = await Ingestor(store, llm, embedder).add_episode(
        EpisodeInput(next(iter(hobbies(6))), group_id="g", reference_time=T0)
    )
    [call] = llm.calls_for("summarize_entities")
    assert sorted(e["name"] for e in call.variables["entities"]) == ["Ann", "Bo"]
    summaries = {e.name: e.summary for e in result.entities}
    assert summaries["Ann"].startswith("Ann: ")
    assert summaries["chess"] in ("Ann enjoys chess. Bo enjoys chess.", "Bo enjoys chess. Ann enjoys chess.")


async def test_summaries_can_be_turned_off(store: EmbeddedStore, embedder: HashEmbedder) -> None:
    world = World(hobbies(6))
    llm = world.llm()
    ingestor = Ingestor(
        store, llm, embedder, IngestOptions(summaries=SummaryOptions(mode="off", compose_max=2))
    )
    await ingestor.add_episode(EpisodeInput(next(iter(hobbies(6))), group_id="g", reference_time=T0))
    assert not llm.calls_for("summarize_entities")
    ann = (await store.entities_by_names("g", ["Ann"]))["Ann"][0]
    assert ann.summary.count("Ann enjoys") == 2, "the newest facts, composed"
