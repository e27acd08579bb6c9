"""search() end to end on an in-memory EmbeddedStore with HashEmbedder."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from epigraph.errors import EntityNotFound, StoreError, UsageError
from epigraph.graph.derived import Community
from epigraph.graph.embedded import EmbeddedStore
from epigraph.graph.model import Entity, Fact
from epigraph.graph.store import CURRENT, Hit, TimeFilter
from epigraph.search import (
    COMBINED,
    ENTITIES_HYBRID,
    ENTITIES_MENTIONS,
    ENTITIES_NODE_DISTANCE,
    EPISODES_HYBRID,
    FACTS_BM25,
    FACTS_HYBRID,
    FACTS_HYBRID_MMR,
    FACTS_HYBRID_RRF,
    FACTS_NODE_DISTANCE,
    RECIPES,
    ScopeConfig,
    SearchConfig,
    search,
)
from epigraph.search.config import Retriever
from epigraph.search.results import is_retired
from epigraph.testing import HashEmbedder
from tests.support.search_graph import Graph, t

LIVES = ("paris", "berlin", "rome")


def uuids(graph: Graph, *keys: str) -> set[str]:
    return {graph.f(k).uuid for k in keys}


def lives_in(graph: Graph, results: object) -> set[str]:
    found = {r.uuid for r in results.facts}  # type: ignore[attr-defined]
    return found & uuids(graph, *LIVES)


async def test_default_search_returns_typed_results_without_retired_facts(graph: Graph) -> None:
    results = await search(graph.store, graph.embedder, "where does Alice live", group_ids="g", limit=20)
    assert results.facts and results.entities and results.episodes
    assert lives_in(graph, results) == uuids(graph, "rome")
    assert not any(is_retired(r.fact) for r in results.facts)
    rome = next(r for r in results.facts if r.uuid == graph.f("rome").uuid)
    assert (rome.source_name, rome.target_name) == ("Alice", "Rome")
    assert rome.score == rome.scores["fused"] and {"bm25", "cosine"} & set(rome.scores)
    assert results.recipe == "COMBINED" and results.elapsed_ms > 0


async def test_query_is_embedded_once(graph: Graph) -> None:
    await search(graph.store, graph.embedder, "Alice work", group_ids="g", config=COMBINED)
    assert graph.embedder.requests == 1
    await search(graph.store, graph.embedder, "Alice work", group_ids="g", config=FACTS_BM25)
    assert graph.embedder.requests == 1  # fulltext only: no embedding at all


@pytest.mark.parametrize(
    ("as_of", "expected"), [(t(2020, 6), "paris"), (t(2021, 6), "berlin"), (t(2023), "rome"), (t(2019), None)]
)
async def test_as_of_returns_what_was_valid_then(graph: Graph, as_of: object, expected: str | None) -> None:
    results = await search(
        graph.store,
        graph.embedder,
        "Alice lives in",
        group_ids="g",
        config=FACTS_HYBRID,
        as_of=as_of,
        limit=20,
    )
    assert lives_in(graph, results) == (uuids(graph, expected) if expected else set())


async def test_known_at_returns_what_the_graph_believed(graph: Graph) -> None:
    then = await search(
        graph.store,
        graph.embedder,
        "Alice lives in",
        group_ids="g",
        config=FACTS_HYBRID,
        known_at=t(2020, 6),
        limit=20,
    )
    assert lives_in(graph, then) == uuids(graph, "paris")
    assert graph.f("carol").uuid not in {r.uuid for r in then.facts}  # not learned yet


async def test_include_retired_shows_everything_with_intervals(graph: Graph) -> None:
    results = await search(
        graph.store,
        graph.embedder,
        "Alice lives in",
        group_ids="g",
        config=FACTS_HYBRID,
        include_retired=True,
        limit=20,
    )
    assert lives_in(graph, results) == uuids(graph, *LIVES)
    paris = next(r for r in results.facts if r.uuid == graph.f("paris").uuid)
    assert paris.retired and paris.fact.invalid_at == t(2021) and paris.fact.invalidated_by is not None


async def test_relations_filter(graph: Graph) -> None:
    results = await search(
        graph.store,
        graph.embedder,
        "Alice",
        group_ids="g",
        config=FACTS_HYBRID,
        relations=["WORKS_AT"],
        limit=20,
    )
    assert results.facts and {r.relation for r in results.facts} == {"WORKS_AT"}


async def test_labels_filter_entities_and_fact_endpoints(graph: Graph) -> None:
    ents = await search(
        graph.store,
        graph.embedder,
        "Acme Globex Alice",
        group_ids="g",
        config=ENTITIES_HYBRID,
        labels="Company",
    )
    assert {r.name for r in ents.entities} == {"Acme", "Globex"}
    facts = await search(
        graph.store,
        graph.embedder,
        "lives works",
        group_ids="g",
        config=FACTS_HYBRID,
        labels=["City"],
        limit=20,
    )
    assert facts.facts and all("City" in (r.target.labels if r.target else []) for r in facts.facts)


async def test_during_filter(graph: Graph) -> None:
    results = await search(
        graph.store,
        graph.embedder,
        "Alice lives",
        group_ids="g",
        config=FACTS_HYBRID,
        include_retired=True,
        during=(t(2021, 3), t(2021, 4)),
        limit=20,
    )
    assert lives_in(graph, results) == uuids(graph, "berlin")
    episodes = await search(
        graph.store,
        graph.embedder,
        "Alice Acme",
        group_ids="g",
        config=EPISODES_HYBRID,
        during=(t(2020, 1), t(2020, 3)),
    )
    assert {r.uuid for r in episodes.episodes} == {graph.episodes["e1"].uuid}


async def test_groups_never_cross(graph: Graph) -> None:
    only_g = await search(
        graph.store, graph.embedder, "Alice lives in Paris", group_ids="g", include_retired=True, limit=50
    )
    assert {r.fact.group_id for r in only_g.facts} == {"g"}
    assert {r.entity.group_id for r in only_g.entities} == {"g"}
    assert {r.episode.group_id for r in only_g.episodes} == {"g"}
    other = await search(graph.store, graph.embedder, "Alice lives in Paris", group_ids="other")
    assert [r.uuid for r in other.facts] == [graph.f("o_paris").uuid]
    both = await search(
        graph.store, graph.embedder, "Alice lives in Paris", group_ids=["g", "other"], limit=50
    )
    assert {r.fact.group_id for r in both.facts} == {"g", "other"}


async def test_node_distance_ranks_facts_near_the_center_first(graph: Graph) -> None:
    results = await search(
        graph.store,
        graph.embedder,
        "works knows lives",
        group_ids="g",
        config=FACTS_NODE_DISTANCE,
        center="Carol",
        limit=20,
    )
    carol, bob = graph.e("carol").uuid, graph.e("bob").uuid
    distances = [
        0
        if carol in (r.fact.source_uuid, r.fact.target_uuid)
        else 1
        if bob in (r.fact.source_uuid, r.fact.target_uuid)
        else 2
        for r in results.facts
    ]
    assert distances == sorted(distances) and distances[0] == 0
    assert all("node_distance" in r.scores for r in results.facts)


async def test_node_distance_for_entities_and_bfs(graph: Graph) -> None:
    results = await search(
        graph.store,
        graph.embedder,
        "person city company",
        group_ids="g",
        config=ENTITIES_NODE_DISTANCE,
        center=graph.e("rome").uuid,
        limit=20,
    )
    names = [r.name for r in results.entities]
    assert names[0] in ("Rome", "Alice") and names.index("Alice") < names.index("Carol")


async def test_bfs_retriever_alone(graph: Graph) -> None:
    cfg = SearchConfig(
        facts=ScopeConfig(retrievers=(Retriever.BFS,), bfs_depth=1),
        entities=ScopeConfig(retrievers=(Retriever.BFS,), bfs_depth=1),
        episodes=ScopeConfig(retrievers=(Retriever.BFS,)),
        limit=20,
    )
    results = await search(graph.store, graph.embedder, "anything", group_ids="g", config=cfg, center="Carol")
    assert {r.uuid for r in results.facts} == uuids(graph, "carol")
    assert [r.name for r in results.entities] == ["Bob"]
    assert [r.uuid for r in results.episodes] == [graph.episodes["e-rome"].uuid]
    assert graph.embedder.requests == 0
    nothing = await search(graph.store, graph.embedder, "anything", group_ids="g", config=cfg)
    assert len(nothing) == 0  # BFS without a center contributes nothing


async def test_mentions_rerank_is_descending(graph: Graph) -> None:
    results = await search(
        graph.store,
        graph.embedder,
        "Alice Bob Acme Globex Carol",
        group_ids="g",
        config=ENTITIES_MENTIONS,
        limit=20,
    )
    counts = [r.scores["episode_mentions"] for r in results.entities]
    assert counts == sorted(counts, reverse=True) and results.entities[0].name == "Alice"


async def test_mmr_and_rrf_recipes_run(graph: Graph) -> None:
    for cfg in (FACTS_HYBRID_MMR, FACTS_HYBRID_RRF):
        results = await search(graph.store, graph.embedder, "Alice works at Acme", group_ids="g", config=cfg)
        ids = [r.uuid for r in results.facts]
        assert ids and len(ids) == len(set(ids)) and ids[0] == graph.f("works").uuid


async def test_every_recipe_runs(graph: Graph) -> None:
    alice = next(e for e in graph.entities.values() if e.name == "Alice" and e.group_id == "g")
    community = Community(group_id="g", name="Alice at Acme", summary="at Acme", members=[alice.uuid])
    await graph.store.replace_communities("g", [community])
    for name, cfg in RECIPES.items():
        center = "Alice" if cfg.needs_center else None
        results = await search(
            graph.store, graph.embedder, "Alice Acme", group_ids="g", config=cfg, center=center
        )
        assert len(results) > 0, name


async def test_limit_applies_per_kind(graph: Graph) -> None:
    results = await search(graph.store, graph.embedder, "Alice Bob Acme Paris", group_ids="g", limit=2)
    assert len(results.facts) <= 2 and len(results.entities) <= 2 and len(results.episodes) <= 2


async def test_usage_errors(graph: Graph) -> None:
    with pytest.raises(UsageError):
        await search(graph.store, graph.embedder, "   ", group_ids="g")
    with pytest.raises(UsageError):
        await search(graph.store, graph.embedder, "x", group_ids=[])
    with pytest.raises(UsageError):
        await search(graph.store, graph.embedder, "x", group_ids="g", limit=0)
    with pytest.raises(UsageError, match="center"):
        await search(graph.store, graph.embedder, "x", group_ids="g", config=FACTS_NODE_DISTANCE)
    with pytest.raises(EntityNotFound) as info:
        await search(
            graph.store, graph.embedder, "x", group_ids="g", config=FACTS_NODE_DISTANCE, center="Alice Smith"
        )
    assert "Alice" in info.value.closest


class BrokenVectors(EmbeddedStore):
    """A store whose vector search fails (a fake, not a mock: the real store with one method broken)."""

    async def search_facts_vector(self, *args: object, **kwargs: object) -> list[Hit[Fact]]:
        raise StoreError("vector index unavailable")


async def test_store_errors_surface_unwrapped() -> None:
    store = BrokenVectors(":memory:")
    await store.setup(embedding_dim=8)
    try:
        with pytest.raises(StoreError, match="vector index unavailable"):
            await search(store, HashEmbedder(dim=8), "anything", group_ids="g")
    finally:
        await store.close()


class CountingStore:
    """Delegates to a real store and counts ``get_entities`` calls (a proxy, not a mock)."""

    def __init__(self, inner: EmbeddedStore) -> None:
        self.inner, self.get_entities_calls = inner, 0

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)

    async def get_entities(
        self, group_id: str, uuids: Sequence[str], time: TimeFilter = CURRENT
    ) -> list[Entity]:
        self.get_entities_calls += 1
        return await self.inner.get_entities(group_id, uuids, time)


async def test_fact_endpoints_are_hydrated_with_one_call(graph: Graph) -> None:
    store = CountingStore(graph.store)
    results = await search(store, graph.embedder, "Alice Bob", group_ids="g", config=FACTS_HYBRID, limit=20)  # type: ignore[arg-type]
    assert len(results.facts) > 3 and all(r.source and r.target for r in results.facts)
    assert store.get_entities_calls == 1


async def test_the_knowledge_graph_takes_every_filter_of_search_by_name(graph: Graph) -> None:
    """``KnowledgeGraph.search`` has the filters of ``search()`` as typed keywords (no ``**filters``), and
    they reach the search unchanged; the Protocols a user implements come from the package root."""
    from epigraph import LLM, Embedder, GraphStore, KnowledgeGraph
    from epigraph.config import Settings
    from epigraph.testing import ScriptedLLM

    assert isinstance(graph.store, GraphStore) and isinstance(graph.embedder, Embedder)
    assert isinstance(ScriptedLLM({}), LLM)
    kg = KnowledgeGraph(Settings(), store=graph.store, embedder=graph.embedder, group_id="g")
    during = (t(2020, 6), t(2021, 6))
    found = await kg.search(
        "where does Alice live", config=FACTS_HYBRID, include_retired=True, labels="City",
        relations=["LIVES_IN"], center="Alice", during=during, limit=5,
    )  # fmt: skip
    direct = await search(
        graph.store, graph.embedder, "where does Alice live", group_ids="g", config=FACTS_HYBRID,
        include_retired=True, labels="City", relations=["LIVES_IN"], center="Alice", during=during, limit=5,
    )  # fmt: skip
    assert [r.uuid for r in found.facts] == [r.uuid for r in direct.facts]
    assert {r.relation for r in found.facts} == {"LIVES_IN"}
    assert uuids(graph, "paris", "berlin") <= {r.uuid for r in found.facts}
    assert graph.f("rome").uuid not in {r.uuid for r in found.facts}  # from 2022: not during
    with pytest.raises(TypeError):
        await kg.search("Alice", label="City")  # type: ignore[call-arg]
