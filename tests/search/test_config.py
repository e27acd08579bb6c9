"""Search configs are immutable values; recipes are constants nobody can change."""

from __future__ import annotations

import dataclasses

import pytest

from epigraph.search import config as cfg
from epigraph.search.config import (
    COMBINED,
    DEFAULT,
    FACTS_HYBRID,
    FACTS_HYBRID_RRF,
    RECIPES,
    Fusion,
    Reranker,
    Retriever,
    ScopeConfig,
    SearchConfig,
    recipe,
)


def test_configs_are_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        FACTS_HYBRID.limit = 99  # type: ignore[misc]
    assert FACTS_HYBRID.facts is not None
    with pytest.raises(dataclasses.FrozenInstanceError):
        FACTS_HYBRID.facts.rrf_k = 1  # type: ignore[misc]


def test_with_limit_returns_a_copy() -> None:
    bigger = FACTS_HYBRID.with_limit(50)
    assert bigger.limit == 50 and FACTS_HYBRID.limit == 10
    assert bigger.facts is FACTS_HYBRID.facts


def test_with_scope_and_name() -> None:
    both = FACTS_HYBRID.with_scope("entities", FACTS_HYBRID_RRF.facts).with_name("mine")
    assert (
        both.entities == FACTS_HYBRID_RRF.facts and both.facts == FACTS_HYBRID.facts and both.name == "mine"
    )
    assert FACTS_HYBRID.entities is None


def test_recipes_registry_is_read_only_and_complete() -> None:
    with pytest.raises(TypeError):
        RECIPES["X"] = FACTS_HYBRID  # type: ignore[index]
    constants = {v.name for k, v in vars(cfg).items() if k.isupper() and isinstance(v, SearchConfig)}
    assert constants == set(RECIPES)
    assert all(name == config.name for name, config in RECIPES.items())
    assert recipe("facts_hybrid_rrf") is FACTS_HYBRID_RRF
    with pytest.raises(ValueError, match="known: "):
        recipe("nope")


def test_default_is_combined_hybrid() -> None:
    assert DEFAULT is COMBINED
    assert all(sc.retrievers == (Retriever.BM25, Retriever.COSINE) for _, sc in DEFAULT.scopes())
    assert DEFAULT.needs_vector and not DEFAULT.needs_center


def test_rrf_recipes_use_rrf() -> None:
    assert FACTS_HYBRID_RRF.facts is not None and FACTS_HYBRID_RRF.facts.fusion is Fusion.RRF


@pytest.mark.parametrize(
    "kwargs",
    [
        {"retrievers": ()},
        {"retrievers": (Retriever.BM25, Retriever.BM25)},
        {"weights": (1.0,)},
        {"weights": (1.0, -1.0)},
        {"rrf_k": -1.0},
        {"mmr_lambda": 1.5},
        {"candidates": 0},
        {"bfs_depth": 0},
    ],
)
def test_scope_config_validation(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        ScopeConfig(**kwargs)  # type: ignore[arg-type]


def test_search_config_validation() -> None:
    with pytest.raises(ValueError):
        SearchConfig()
    with pytest.raises(ValueError):
        SearchConfig(facts=ScopeConfig(), limit=0)
    with pytest.raises(ValueError):
        SearchConfig(episodes=ScopeConfig(reranker=Reranker.NODE_DISTANCE))
    with pytest.raises(ValueError):
        FACTS_HYBRID.with_limit(0)


def test_needs_center_and_vector() -> None:
    assert cfg.FACTS_NODE_DISTANCE.needs_center
    assert not cfg.FACTS_BM25.needs_vector
    assert cfg.FACTS_VECTOR.needs_vector
    mmr_only_bm25 = SearchConfig(facts=ScopeConfig(retrievers=(Retriever.BM25,), reranker=Reranker.MMR))
    assert mmr_only_bm25.needs_vector  # MMR reads stored vectors; the query vector comes along
