"""A group of facts with clustered synthetic vectors, for the embedded store's approximate index
(tests/graph/test_embedded_ann*.py)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np

from epigraph.graph.embedded import EmbeddedStore
from epigraph.graph.model import Entity, Episode, EpisodeStatus, Fact, Mention
from epigraph.graph.store import EpisodeWrite, FactFilter


def clustered(rng: np.random.Generator, n: int, dim: int = 64) -> np.ndarray:
    """Vectors of low intrinsic dimension, like sentence embeddings (the bench's kind, smaller)."""
    basis = np.random.default_rng(0).standard_normal((12, dim))
    return rng.standard_normal((n, 12)) @ basis + 0.3 * rng.standard_normal((n, dim))


T0 = datetime(2024, 1, 1, tzinfo=UTC)
FACTS = 200


async def write_facts(store: EmbeddedStore, group: str, vectors: np.ndarray) -> list[Episode]:
    """One episode per 10 facts, each fact between two of the episode's entities."""
    episodes = []
    for first in range(0, len(vectors), 10):
        ep = Episode(group_id=group, content=f"episode {first}", reference_time=T0, status=EpisodeStatus.DONE)
        a, b = Entity(group_id=group, name=f"A{first}"), Entity(group_id=group, name=f"B{first}")
        facts = [
            Fact(group_id=group, source_uuid=a.uuid, target_uuid=b.uuid, relation="KNOWS",
                 text=f"fact {k}", text_embedding=vectors[k].tolist(), episodes=[ep.uuid],
                 valid_at=T0 + timedelta(minutes=k), created_at=T0 + timedelta(minutes=k))
            for k in range(first, first + 10)
        ]  # fmt: skip
        mentions = [Mention(group_id=group, episode_uuid=ep.uuid, entity_uuid=e.uuid) for e in (a, b)]
        await store.write_episode(EpisodeWrite(episode=ep, entities=[a, b], facts=facts, mentions=mentions))
        episodes.append(ep)
    return episodes


async def top(
    store: EmbeddedStore, group: str, query: np.ndarray, flt: FactFilter | None = None
) -> list[str]:
    hits = await store.search_facts_vector([group], query.tolist(), 10, flt or FactFilter())
    return [hit.item.text for hit in hits]
