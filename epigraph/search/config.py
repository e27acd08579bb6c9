"""Search configuration: which retrievers, how they are fused and reranked, how many results.

Configs are frozen dataclasses; the recipes below are module-level constants that nothing can mutate
(the incumbent's ``search()`` mutated a shared recipe, PR getzep/graphiti#1680). Derive a variant with
the ``with_*`` helpers or :func:`dataclasses.replace`, which return new objects::

    cfg = FACTS_HYBRID.with_limit(25)
    cfg = COMBINED.with_scope("facts", FACTS_HYBRID_MMR.facts)

Defaults were tuned on LoCoMo evidence retrieval (``bench/performance/search.py``; numbers in the
``bench/results/search.json`` it writes): reciprocal rank fusion with a small k (5) beats both retrievers
alone and every score fusion tried; textbook RRF (k=60) is too flat for 30-candidate lists. Episode
searches then re-score the fused hits by their session neighbours and speakers (``HYBRID_CONTEXT``,
:mod:`.context`). The figures: docs/decisions/2026-11-22-search-fusion-and-fulltext.md and
2026-11-25-episode-search-context.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import timedelta
from enum import StrEnum
from types import MappingProxyType
from typing import Any, Literal

from .fusion import Normalization


class Retriever(StrEnum):
    BM25 = "bm25"
    """The store's fulltext index (BM25 in SQLite FTS5 and in Lucene)."""
    COSINE = "cosine"
    """The store's vector search against the query embedding."""
    BFS = "bfs"
    """Graph neighbourhood of the ``center`` entities (needs ``center=``; contributes nothing without it)."""


class Fusion(StrEnum):
    RRF = "rrf"
    """Reciprocal rank fusion with ``rrf_k``."""
    SCORE = "score"
    """Weighted sum of per-retriever scores normalized with ``normalization``."""


class Reranker(StrEnum):
    NONE = "none"
    MMR = "mmr"
    """Maximal marginal relevance over the stored embeddings (diversity)."""
    NODE_DISTANCE = "node_distance"
    """Closest to the ``center`` entities first (needs ``center=``)."""
    EPISODE_MENTIONS = "episode_mentions"
    """Most mentioned first: episodes supporting a fact, episodes mentioning an entity."""


Scope = Literal["facts", "entities", "episodes", "communities"]
SCOPES: tuple[Scope, ...] = ("facts", "entities", "episodes", "communities")


@dataclass(frozen=True, slots=True)
class ScopeConfig:
    """How one kind of result (facts, entities or episodes) is retrieved and ranked.

    ``weights`` align with ``retrievers`` (empty = all 1). ``candidates`` is how many hits each retriever
    fetches before fusion (at least the search limit).
    """

    retrievers: tuple[Retriever, ...] = (Retriever.BM25, Retriever.COSINE)
    fusion: Fusion = Fusion.SCORE
    weights: tuple[float, ...] = ()
    normalization: Normalization = Normalization.ZSCORE
    rrf_k: float = 60.0
    reranker: Reranker = Reranker.NONE
    mmr_lambda: float = 0.5
    candidates: int = 30
    bfs_depth: int = 2
    context_window: int = 0
    """Episodes only: how many turns on each side of a hit, in the same session, get a share of its
    score (0 = off). See :func:`.fusion.spread_to_neighbours`."""
    context_discount: float = 0.5
    """The share a turn ``j`` steps from a hit gets: ``context_discount ** j`` of the hit's score."""
    session_gap: timedelta = timedelta(minutes=30)
    """Consecutive episodes further apart in reference time than this, or of different sources, are
    different sessions: no score crosses between them."""
    speaker_weight: float = 1.0
    """Episodes only: the score factor of a message whose speaker the query names (1 = off)."""

    def __post_init__(self) -> None:
        if not self.retrievers:
            raise ValueError("a scope needs at least one retriever")
        if len(set(self.retrievers)) != len(self.retrievers):
            raise ValueError(f"duplicate retrievers: {self.retrievers}")
        if self.weights and len(self.weights) != len(self.retrievers):
            raise ValueError(f"{len(self.weights)} weights for {len(self.retrievers)} retrievers")
        if any(w < 0 for w in self.weights):
            raise ValueError(f"weights must be >= 0, got {self.weights}")
        if self.rrf_k < 0:
            raise ValueError(f"rrf_k must be >= 0, got {self.rrf_k}")
        if not 0.0 <= self.mmr_lambda <= 1.0:
            raise ValueError(f"mmr_lambda must be in [0, 1], got {self.mmr_lambda}")
        if self.candidates < 1 or self.bfs_depth < 1:
            raise ValueError("candidates and bfs_depth must be >= 1")
        if self.context_window < 0 or not 0.0 <= self.context_discount <= 1.0:
            raise ValueError("context_window must be >= 0 and context_discount in [0, 1]")
        if self.session_gap < timedelta(0) or not self.speaker_weight > 0:
            raise ValueError("session_gap must be >= 0 and speaker_weight > 0")

    @property
    def needs_vector(self) -> bool:
        return Retriever.COSINE in self.retrievers

    @property
    def needs_center(self) -> bool:
        return self.reranker is Reranker.NODE_DISTANCE

    @property
    def uses_context(self) -> bool:
        """Whether episodes are re-scored by their session neighbours or their speakers."""
        return self.context_window > 0 or self.speaker_weight != 1.0

    def weight_list(self) -> list[float]:
        return list(self.weights) if self.weights else [1.0] * len(self.retrievers)


@dataclass(frozen=True, slots=True)
class SearchConfig:
    """What to search (a scope config per kind of result, ``None`` = skip it) and how many results."""

    facts: ScopeConfig | None = None
    entities: ScopeConfig | None = None
    episodes: ScopeConfig | None = None
    limit: int = 10
    name: str = "custom"
    communities: ScopeConfig | None = None
    """Communities by their name and summary (``search.communities``: ranked in memory, as they are now)."""

    def __post_init__(self) -> None:
        if self.limit < 1:
            raise ValueError(f"limit must be >= 1, got {self.limit}")
        if all(getattr(self, scope) is None for scope in SCOPES):
            raise ValueError("a search config needs at least one of facts, entities, episodes, communities")
        if self.communities is not None and (
            self.communities.uses_context
            or Retriever.BFS in self.communities.retrievers
            or self.communities.reranker in (Reranker.NODE_DISTANCE, Reranker.EPISODE_MENTIONS)
        ):
            raise ValueError("communities are found by BM25 and cosine, reranked by MMR at most")
        if self.episodes is not None and self.episodes.reranker in (
            Reranker.NODE_DISTANCE,
            Reranker.EPISODE_MENTIONS,
        ):
            raise ValueError(f"episodes cannot be reranked by {self.episodes.reranker}")
        for scope in (self.facts, self.entities):
            if scope is not None and scope.uses_context:
                raise ValueError(
                    "context_window and speaker_weight: only episodes have session neighbours and speakers"
                )

    def scope(self, scope: Scope) -> ScopeConfig | None:
        value: ScopeConfig | None = getattr(self, scope)
        return value

    def scopes(self) -> list[tuple[Scope, ScopeConfig]]:
        return [(s, c) for s in SCOPES if (c := self.scope(s)) is not None]

    @property
    def needs_vector(self) -> bool:
        return any(c.needs_vector or c.reranker is Reranker.MMR for _, c in self.scopes())

    @property
    def needs_center(self) -> bool:
        return any(c.needs_center for _, c in self.scopes())

    def with_limit(self, limit: int) -> SearchConfig:
        return replace(self, limit=limit)

    def with_scope(self, scope: Scope, config: ScopeConfig | None) -> SearchConfig:
        changes: dict[str, Any] = {scope: config, "name": f"{self.name}+{scope}"}
        return replace(self, **changes)

    def with_name(self, name: str) -> SearchConfig:
        return replace(self, name=name)


BM25_ONLY = ScopeConfig(retrievers=(Retriever.BM25,))
COSINE_ONLY = ScopeConfig(retrievers=(Retriever.COSINE,))

# The tuned hybrid: reciprocal rank fusion with a small k (5), 30 candidates per retriever, equal weights.
# The best hit@5 and hit@10 of every recipe measured on LoCoMo evidence retrieval; rank fusion needs no
# knowledge of either retriever's score scale, and a small k keeps the head of each list decisive. Its
# neighbouring settings are within noise: this is the simple rule, not a fit to the last decimal
# (figures: docs/decisions/2026-11-22-search-fusion-and-fulltext.md).
HYBRID = ScopeConfig(
    retrievers=(Retriever.BM25, Retriever.COSINE),
    fusion=Fusion.RRF,
    rrf_k=5.0,
    candidates=30,
)
# Score fusion of z-normalized BM25 and cosine scores, equal weights (the previous default).
HYBRID_SCORE = ScopeConfig(
    retrievers=(Retriever.BM25, Retriever.COSINE),
    fusion=Fusion.SCORE,
    normalization=Normalization.ZSCORE,
    weights=(0.5, 0.5),
    candidates=30,
)
# RRF with a small k (k=60 is too flat for short candidate lists: it lost to BM25 alone on LoCoMo).
HYBRID_RRF = ScopeConfig(retrievers=(Retriever.BM25, Retriever.COSINE), fusion=Fusion.RRF, rrf_k=10.0)
HYBRID_RRF_K60 = ScopeConfig(retrievers=(Retriever.BM25, Retriever.COSINE), fusion=Fusion.RRF, rrf_k=60.0)
HYBRID_MMR = replace(HYBRID_SCORE, reranker=Reranker.MMR, mmr_lambda=0.7)
HYBRID_MENTIONS = replace(HYBRID_SCORE, reranker=Reranker.EPISODE_MENTIONS)
HYBRID_NODE_DISTANCE = replace(
    HYBRID_SCORE,
    retrievers=(Retriever.BM25, Retriever.COSINE, Retriever.BFS),
    weights=(),
    reranker=Reranker.NODE_DISTANCE,
)

# Episodes: the hybrid above, then what a conversation graph knows of a turn that its text does not say:
# the turns around it and who spoke it. Each of the first `candidates` hits passes half its score to each
# neighbouring turn of its session and a quarter to the turns two away (an answer is often the reply to
# the turn that matched); then a message spoken by someone the query names counts double. Each step
# helps both LoCoMo conversations, and the constants are a rule, not a fit (figures:
# docs/decisions/2026-11-25-episode-search-context.md).
HYBRID_CONTEXT = replace(HYBRID, context_window=2, context_discount=0.5, speaker_weight=2.0)

FACTS_HYBRID = SearchConfig(facts=HYBRID, name="FACTS_HYBRID")
FACTS_HYBRID_RRF = SearchConfig(facts=HYBRID_RRF, name="FACTS_HYBRID_RRF")
FACTS_HYBRID_MMR = SearchConfig(facts=HYBRID_MMR, name="FACTS_HYBRID_MMR")
FACTS_HYBRID_MENTIONS = SearchConfig(facts=HYBRID_MENTIONS, name="FACTS_HYBRID_MENTIONS")
FACTS_NODE_DISTANCE = SearchConfig(facts=HYBRID_NODE_DISTANCE, name="FACTS_NODE_DISTANCE")
FACTS_BM25 = SearchConfig(facts=BM25_ONLY, name="FACTS_BM25")
FACTS_VECTOR = SearchConfig(facts=COSINE_ONLY, name="FACTS_VECTOR")

ENTITIES_HYBRID = SearchConfig(entities=HYBRID, name="ENTITIES_HYBRID")
ENTITIES_HYBRID_RRF = SearchConfig(entities=HYBRID_RRF, name="ENTITIES_HYBRID_RRF")
ENTITIES_HYBRID_MMR = SearchConfig(entities=HYBRID_MMR, name="ENTITIES_HYBRID_MMR")
ENTITIES_MENTIONS = SearchConfig(entities=HYBRID_MENTIONS, name="ENTITIES_MENTIONS")
ENTITIES_NODE_DISTANCE = SearchConfig(entities=HYBRID_NODE_DISTANCE, name="ENTITIES_NODE_DISTANCE")

EPISODES_HYBRID = SearchConfig(episodes=HYBRID_CONTEXT, name="EPISODES_HYBRID")
EPISODES_HYBRID_RRF = SearchConfig(episodes=HYBRID_RRF, name="EPISODES_HYBRID_RRF")
EPISODES_HYBRID_SCORE = SearchConfig(episodes=HYBRID_SCORE, name="EPISODES_HYBRID_SCORE")
EPISODES_HYBRID_RRF_K60 = SearchConfig(episodes=HYBRID_RRF_K60, name="EPISODES_HYBRID_RRF_K60")
EPISODES_HYBRID_MMR = SearchConfig(episodes=HYBRID_MMR, name="EPISODES_HYBRID_MMR")
EPISODES_BM25 = SearchConfig(episodes=BM25_ONLY, name="EPISODES_BM25")
EPISODES_VECTOR = SearchConfig(episodes=COSINE_ONLY, name="EPISODES_VECTOR")

COMMUNITIES_HYBRID = SearchConfig(communities=HYBRID, name="COMMUNITIES_HYBRID")

COMBINED = SearchConfig(facts=HYBRID, entities=HYBRID, episodes=HYBRID_CONTEXT, name="COMBINED")
COMBINED_RRF = SearchConfig(facts=HYBRID_RRF, entities=HYBRID_RRF, episodes=HYBRID_RRF, name="COMBINED_RRF")

DEFAULT = COMBINED
"""What ``search()`` uses when no config is given: facts (with endpoints), entities and episodes."""

RECIPES: Mapping[str, SearchConfig] = MappingProxyType(
    {
        c.name: c
        for c in (
            FACTS_HYBRID,
            FACTS_HYBRID_RRF,
            FACTS_HYBRID_MMR,
            FACTS_HYBRID_MENTIONS,
            FACTS_NODE_DISTANCE,
            FACTS_BM25,
            FACTS_VECTOR,
            ENTITIES_HYBRID,
            ENTITIES_HYBRID_RRF,
            ENTITIES_HYBRID_MMR,
            ENTITIES_MENTIONS,
            ENTITIES_NODE_DISTANCE,
            EPISODES_HYBRID,
            EPISODES_HYBRID_RRF,
            EPISODES_HYBRID_SCORE,
            EPISODES_HYBRID_RRF_K60,
            EPISODES_HYBRID_MMR,
            EPISODES_BM25,
            EPISODES_VECTOR,
            COMMUNITIES_HYBRID,
            COMBINED,
            COMBINED_RRF,
        )
    }
)
"""Every named recipe by name (the CLI's ``--recipe`` choices); read-only."""


def recipe(name: str) -> SearchConfig:
    """The recipe called ``name`` (case-insensitive); ``ValueError`` listing the names otherwise."""
    found = RECIPES.get(name.upper())
    if found is None:
        raise ValueError(f"unknown search recipe {name!r}; known: {', '.join(sorted(RECIPES))}")
    return found
