"""The per-episode algorithm computes and the queue writes: ``ingest_episode`` returns the one write the
episode wants and its result, and leaves the store as it found it (no entity, fact or mention written, the
episode still ``pending``, no ``EpisodeDone``); performing that write is what stores the episode's graph.
Real SQLite."""

from __future__ import annotations

from epigraph.episodes.events import EpisodeDone, ProgressEvent
from epigraph.graph.embedded import EmbeddedStore
from epigraph.graph.model import Episode, EpisodeStatus
from epigraph.pipeline.episode import ingest_episode
from epigraph.pipeline.metering import MeteredEmbedder, MeteredLLM, ReportBuilder
from epigraph.pipeline.options import IngestOptions
from epigraph.pipeline.state import EpisodeRun
from epigraph.testing import HashEmbedder
from tests.support.world import T0, F, Turn, World

TEXT = "Melanie: I moved to Paris last spring."
WORLD = World(
    {TEXT: Turn(["Melanie", "Paris"], [F("Melanie", "Paris", "LIVES_IN", "Melanie lives in Paris.")])}
)


async def test_the_algorithm_returns_the_write_it_wants_and_writes_nothing(
    store: EmbeddedStore, embedder: HashEmbedder
) -> None:
    episode = Episode(group_id="g", content=TEXT, reference_time=T0)
    await store.save_episode(episode)  # accepted, as the queue does before it runs one
    llm, metered = MeteredLLM(WORLD.llm()), MeteredEmbedder(embedder)
    events: list[ProgressEvent] = []
    run = EpisodeRun(
        episode, store, llm, metered, IngestOptions(), ReportBuilder(llm, metered), events.append, 0, T0
    )

    outcome = await ingest_episode(run)

    stats = await store.stats("g")
    assert (stats.episodes, stats.entities, stats.facts, stats.mentions) == (1, 0, 0, 0)
    stored = await store.get_episode("g", episode.uuid)
    assert stored is not None and stored.status == EpisodeStatus.PENDING
    assert not any(isinstance(e, EpisodeDone) for e in events), "the queue announces the write"
    write = outcome.write
    assert write.episode.status == EpisodeStatus.PENDING and not write.unless_done
    assert sorted(e.name for e in write.entities) == ["Melanie", "Paris"]
    assert [f.text for f in outcome.result.facts] == ["Melanie lives in Paris."]
    assert outcome.result.episode == write.episode

    assert await store.write_episode(write)
    stats = await store.stats("g")
    assert (stats.entities, stats.facts, stats.mentions) == (2, 1, 2)
