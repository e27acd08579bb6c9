"""The ``communities`` scope: communities found by their name and summary (BM25+) and by meaning
(cosine with their embedding), fused like the other scopes; never by graph distance or mentions."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from epigraph.errors import UsageError
from epigraph.graph.derived import Community
from epigraph.graph.embedded import EmbeddedStore
from epigraph.graph.model import Entity, Episode, Mention
from epigraph.graph.store import EpisodeWrite
from epigraph.search import COMBINED, COMMUNITIES_HYBRID, SearchConfig, recipe, search
from epigraph.search.communities import bm25, cosine
from epigraph.search.config import BM25_ONLY, HYBRID, HYBRID_NODE_DISTANCE, ScopeConfig
from epigraph.testing import HashEmbedder

G = "g"
DIM = 64
TOPICS = {
    "Hiking club": "Ann and Bob hike in the Alps every summer.",
    "Globex colleagues": "Cy and Dee build software at Globex in Berlin.",
    "Family": "Eve is Ann's sister; they cook together on Sundays.",
}


@pytest.fixture
async def found() -> AsyncIterator[tuple[EmbeddedStore, HashEmbedder, dict[str, Community]]]:
    embedder = HashEmbedder(dim=DIM)
    async with EmbeddedStore(":memory:") as store:
        await store.setup(DIM)
        people = [Entity(group_id=G, name=n) for n in ("Ann", "Bob", "Cy", "Dee", "Eve", "Fay")]
        episode = Episode(group_id=G, content="people", reference_time="2024-01-01T00:00:00Z")
        mentions = [Mention(group_id=G, episode_uuid=episode.uuid, entity_uuid=p.uuid) for p in people]
        await store.write_episode(EpisodeWrite(episode, people, (), mentions))
        vectors = await embedder.embed([f"{name}: {text}" for name, text in TOPICS.items()])
        pairs = [people[:2], people[2:4], people[4:]]
        communities = {}
        for (name, text), vector, (a, b) in zip(TOPICS.items(), vectors, pairs, strict=True):
            embedding = [float(x) for x in vector]
            communities[name] = Community(
                group_id=G, name=name, summary=text, members=[a.uuid, b.uuid], embedding=embedding
            )
        await store.replace_communities(G, list(communities.values()))
        yield store, embedder, communities


async def test_a_community_is_found_by_its_name_and_its_summary(
    found: tuple[EmbeddedStore, HashEmbedder, dict[str, Community]],
) -> None:
    store, embedder, communities = found
    results = await search(store, embedder, "who hikes in the Alps?", group_ids=G, config=COMMUNITIES_HYBRID)
    assert results.communities[0].community == communities["Hiking club"]
    assert (results.facts, results.entities, results.episodes) == ((), (), ())
    assert set(results.communities[0].scores) >= {"bm25", "cosine", "fused"}
    data = results.to_dict()["communities"][0]
    assert data["community"]["name"] == "Hiking club" and "embedding" not in data["community"]
    assert len(results) == len(results.communities) and list(results) == list(results.communities)
    by_text = await search(store, embedder, "Globex", group_ids=G, config=SearchConfig(communities=BM25_ONLY))
    assert [r.name for r in by_text.communities] == ["Globex colleagues"]
    assert recipe("communities_hybrid") is COMMUNITIES_HYBRID
    assert (
        await search(store, embedder, "Alps", group_ids="other", config=COMMUNITIES_HYBRID)
    ).communities == ()


async def test_the_default_search_leaves_communities_out(
    found: tuple[EmbeddedStore, HashEmbedder, dict[str, Community]],
) -> None:
    store, embedder, _ = found
    assert (await search(store, embedder, "Alps", group_ids=G, config=COMBINED)).communities == ()


def test_ranking_in_memory() -> None:
    a = Community(
        group_id=G, name="Hiking club", summary="mountains", members=["x", "y"], embedding=[1.0, 0.0]
    )
    b = Community(group_id=G, name="Chess", summary="hiking on Sundays too", members=["z", "w"],
                  embedding=[0.0, 1.0])  # fmt: skip
    assert [h.item.name for h in bm25([b, a], "hiking", 10)] == [
        "Hiking club",
        "Chess",
    ]  # the name counts more
    assert bm25([a, b], "the", 10) == [] and bm25([], "hiking", 10) == []
    assert [h.item.name for h in cosine([a, b], [0.1, 0.9], 1)] == ["Chess"]
    assert cosine([a, b], [0.0, 0.0], 5) == [] and cosine([a], [1.0, 0.0, 0.0], 5) == []


def test_communities_are_not_found_by_graph_distance() -> None:
    for scope in (
        HYBRID_NODE_DISTANCE,
        ScopeConfig(retrievers=HYBRID.retrievers, context_window=1),
    ):
        with pytest.raises(ValueError, match="communities"):
            SearchConfig(communities=scope)
    with pytest.raises(ValueError, match="at least one"):
        SearchConfig()
    assert issubclass(UsageError, ValueError)
