"""Two ingestors finishing one episode (a Kafka worker frozen past its claim and the next owner of its
partition): the store takes the first write, refuses the second, and the second run reports itself a
duplicate (issue 22). Claims (issue 31) keep two live owners from both running it; this is the case
they cannot cover, a claim that lapsed under a run that then went on.
"""

from __future__ import annotations

from pathlib import Path

from epigraph.episodes.events import DUPLICATE, EpisodeResult
from epigraph.graph.embedded import EmbeddedStore
from epigraph.graph.model import Episode, EpisodeStatus
from epigraph.ingestion.claims import Leases
from epigraph.ingestion.ingestor import Ingestor
from epigraph.prompts.protocol import ChatRequest
from epigraph.testing import HashEmbedder, ScriptedLLM, ScriptedReply
from tests.support.world import T0, F, Turn, World

TEXT = "Melanie: I moved to Paris last spring."
WORLD = World(
    {TEXT: Turn(["Melanie", "Paris"], [F("Melanie", "Paris", "LIVES_IN", "Melanie lives in Paris.")])}
)


async def test_the_later_of_two_overlapping_runs_writes_nothing_and_says_so(tmp_path: Path) -> None:
    path = str(tmp_path / "graph.db")
    embedder = HashEmbedder()
    stores = [EmbeddedStore(path), EmbeddedStore(path)]  # two processes' connections to one file
    for store in stores:
        await store.setup(embedder.dim)
    episode = Episode(group_id="g", content=TEXT, reference_time=T0)
    first = Ingestor(stores[0], WORLD.llm(), embedder)
    frozen = Leases()
    earlier: list[EpisodeResult] = []

    async def frozen_then_answer(request: ChatRequest) -> ScriptedReply:
        if not earlier:  # while this run waits on its first call, its claim lapses (as if it froze
            # past it: released here) and the other one does the whole episode
            await stores[0].release_episode(episode.group_id, episode.uuid, frozen.owner)
            earlier.append(await first.process(episode))
        return WORLD.answer(request)

    second = Ingestor(stores[1], ScriptedLLM(frozen_then_answer), embedder, leases=frozen)
    late = await second.process(episode)
    try:
        assert earlier[0].ok and not earlier[0].skipped and len(earlier[0].facts) == 1
        assert late.skipped and DUPLICATE in late.report.warnings
        assert late.report.llm_calls > 0  # it did run the whole episode, only its write was refused
        stats = await stores[0].stats("g")
        assert (stats.episodes, stats.entities, stats.facts, stats.mentions) == (1, 2, 1, 2)
        stored = await stores[0].get_episode("g", episode.uuid)
        assert stored is not None and stored.status == EpisodeStatus.DONE
        assert DUPLICATE not in stored.report.warnings  # the stored report is the winner's
    finally:
        for store in stores:
            await store.close()
