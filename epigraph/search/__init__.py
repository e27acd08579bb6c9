"""Hybrid search over the temporal graph: retrievers, fusion, recipes, filters, typed results.

- :func:`search` — facts (with endpoints), entities and episodes for a query, per a :class:`SearchConfig`;
- :func:`entity_view` — one entity: summary, aliases, current facts, retired history, episodes;
- recipes (frozen, module-level): ``COMBINED`` (the default), ``FACTS_HYBRID``, ``FACTS_HYBRID_RRF``,
  ``ENTITIES_HYBRID``, ``EPISODES_HYBRID``, ... and :data:`RECIPES` by name;
- :mod:`.fusion` — the pure ranking functions (RRF, score fusion, MMR, node distance, mentions).
"""

from __future__ import annotations

from .config import (
    COMBINED,
    COMBINED_RRF,
    COMMUNITIES_HYBRID,
    DEFAULT,
    ENTITIES_HYBRID,
    ENTITIES_HYBRID_MMR,
    ENTITIES_HYBRID_RRF,
    ENTITIES_MENTIONS,
    ENTITIES_NODE_DISTANCE,
    EPISODES_BM25,
    EPISODES_HYBRID,
    EPISODES_HYBRID_MMR,
    EPISODES_HYBRID_RRF,
    EPISODES_HYBRID_RRF_K60,
    EPISODES_HYBRID_SCORE,
    EPISODES_VECTOR,
    FACTS_BM25,
    FACTS_HYBRID,
    FACTS_HYBRID_MENTIONS,
    FACTS_HYBRID_MMR,
    FACTS_HYBRID_RRF,
    FACTS_NODE_DISTANCE,
    FACTS_VECTOR,
    RECIPES,
    Fusion,
    Reranker,
    Retriever,
    ScopeConfig,
    SearchConfig,
    recipe,
)
from .engine import search
from .entity import EntityView, RetiredFact, closest_names, entity_view
from .fusion import Normalization
from .results import CommunityResult, EntityResult, EpisodeHit, FactResult, SearchResults

__all__ = [
    "COMBINED",
    "COMBINED_RRF",
    "COMMUNITIES_HYBRID",
    "DEFAULT",
    "ENTITIES_HYBRID",
    "ENTITIES_HYBRID_MMR",
    "ENTITIES_HYBRID_RRF",
    "ENTITIES_MENTIONS",
    "ENTITIES_NODE_DISTANCE",
    "EPISODES_BM25",
    "EPISODES_HYBRID",
    "EPISODES_HYBRID_MMR",
    "EPISODES_HYBRID_RRF",
    "EPISODES_HYBRID_RRF_K60",
    "EPISODES_HYBRID_SCORE",
    "EPISODES_VECTOR",
    "FACTS_BM25",
    "FACTS_HYBRID",
    "FACTS_HYBRID_MENTIONS",
    "FACTS_HYBRID_MMR",
    "FACTS_HYBRID_RRF",
    "FACTS_NODE_DISTANCE",
    "FACTS_VECTOR",
    "RECIPES",
    "CommunityResult",
    "EntityResult",
    "EntityView",
    "EpisodeHit",
    "FactResult",
    "Fusion",
    "Normalization",
    "Reranker",
    "RetiredFact",
    "Retriever",
    "ScopeConfig",
    "SearchConfig",
    "SearchResults",
    "closest_names",
    "entity_view",
    "recipe",
    "search",
]
