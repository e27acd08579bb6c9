"""The graph the ask tests ask, through the real pipeline with the scripted world: one fact changed
twice. Alice lived in Paris (from 2020-03-01), then Berlin (from 2022-01-10), then Lisbon (from
2024-02-01); Bob works at Acme (from 2021-05-01)."""

from __future__ import annotations

from datetime import UTC, datetime

from epigraph.episodes.inputs import EpisodeInput
from epigraph.graph.embedded import EmbeddedStore
from epigraph.ingestion.ingestor import Ingestor
from epigraph.testing import HashEmbedder
from tests.support.world import F, Turn, World

PARIS, BERLIN, LISBON = "Alice lives in Paris.", "Alice lives in Berlin.", "Alice lives in Lisbon."


EPISODES = [
    ("Alice: I live in Paris.", datetime(2020, 3, 1, tzinfo=UTC)),
    ("Bob: I work at Acme.", datetime(2021, 5, 1, tzinfo=UTC)),
    ("Alice: I moved to Berlin.", datetime(2022, 1, 10, tzinfo=UTC)),
    ("Alice: I moved to Lisbon.", datetime(2024, 2, 1, tzinfo=UTC)),
]


WORLD = World(
    {
        EPISODES[0][0]: Turn(
            ["Alice", "Paris"], [F("Alice", "Paris", "LIVES_IN", PARIS, "2020-03-01T00:00:00Z")]
        ),
        EPISODES[1][0]: Turn(
            ["Bob", "Acme"], [F("Bob", "Acme", "WORKS_AT", "Bob works at Acme.", "2021-05-01T00:00:00Z")]
        ),
        EPISODES[2][0]: Turn(
            ["Alice", "Berlin"], [F("Alice", "Berlin", "LIVES_IN", BERLIN, "2022-01-10T00:00:00Z")]
        ),
        EPISODES[3][0]: Turn(
            ["Alice", "Lisbon"], [F("Alice", "Lisbon", "LIVES_IN", LISBON, "2024-02-01T00:00:00Z")]
        ),
    },
    contradicts={BERLIN: [PARIS], LISBON: [BERLIN]},
)


async def ingest(store: EmbeddedStore, embedder: HashEmbedder) -> None:
    ingestor = Ingestor(store, WORLD.llm(), embedder)
    for content, when in EPISODES:
        await ingestor.add_episode(EpisodeInput(content, group_id="g", reference_time=when))
