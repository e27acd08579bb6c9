"""Retrievers: one store call (or a small BFS) per (kind of result, retriever), returning scored hits.

- ``bm25``: the store's fulltext index, queried with the question's content words (English stopwords
  dropped: stores treat every query word as significant, and dropping them raised fulltext recall, see
  docs/decisions/2026-11-22-search-fusion-and-fulltext.md);
- ``cosine``: the store's vector search with the query embedding computed once per search;
- ``bfs``: the neighbourhood of the ``center`` entities (facts and entities scored ``1 / (1 + hops)``,
  episodes by how many center entities they mention).

Retrievers never see SQL or Cypher, only the store's Protocols (:class:`~epigraph.graph.store.GraphReads`,
and :class:`~epigraph.graph.store.ViewReads` for communities).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..graph.store import GraphReads, Hit
from ..language import QUERY_STOP_WORDS, words
from . import communities
from .config import Retriever, Scope
from .filters import Filters


def keyword_query(text: str) -> str:
    """The words of ``text`` without English stopwords; the text itself when only stopwords remain."""
    content = [w for w in words(text) if w.casefold() not in QUERY_STOP_WORDS]
    return " ".join(content) if content else text


@dataclass(frozen=True, slots=True)
class Request:
    """One search's inputs, computed once and shared by every retriever."""

    text: str
    filters: Filters
    vector: Sequence[float] | None = None
    center: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Center entity uuids per group (groups without a center are absent)."""

    @property
    def keywords(self) -> str:
        return keyword_query(self.text)


async def retrieve(
    store: GraphReads, scope: Scope, retriever: Retriever, req: Request, limit: int, depth: int = 2
) -> list[Hit[Any]]:
    """Run one retriever for one kind of result; best first, at most ``limit`` hits."""
    if retriever is Retriever.BFS:
        return await _bfs(store, scope, req, limit, depth)
    if retriever is Retriever.COSINE and req.vector is None:
        raise ValueError("the cosine retriever needs the query vector")
    groups, f = req.filters.group_ids, req.filters
    if scope == "communities":
        found = await communities.of_groups(store, groups)
        if retriever is Retriever.BM25:
            return list(communities.bm25(found, req.text, limit))
        return list(communities.cosine(found, req.vector or (), limit))
    if scope == "facts":
        if retriever is Retriever.BM25:
            return await store.search_facts_text(groups, req.keywords, limit, f.fact_filter())
        return await store.search_facts_vector(groups, req.vector or (), limit, f.fact_filter())
    if scope == "entities":
        if retriever is Retriever.BM25:
            return await store.search_entities_text(groups, req.keywords, limit, f.entity_filter())
        return await store.search_entities_vector(groups, req.vector or (), limit, f.entity_filter())
    if retriever is Retriever.BM25:
        return await store.search_episodes_text(groups, req.keywords, limit, f.store_time())
    return await store.search_episodes_vector(groups, req.vector or (), limit, f.store_time())


async def _bfs(store: GraphReads, scope: Scope, req: Request, limit: int, depth: int) -> list[Hit[Any]]:
    hits: list[Hit[Any]] = []
    for group_id, center in req.center.items():
        if scope == "facts":
            hits += await _bfs_facts(store, group_id, center, req, limit, depth)
        elif scope == "entities":
            hits += await _bfs_entities(store, group_id, center, req, depth)
        else:
            hits += await _bfs_episodes(store, group_id, center, req, limit)
    hits.sort(key=lambda h: -h.score)  # stable: per-group order kept within equal scores
    return hits[:limit]


async def center_distances(
    store: GraphReads, group_id: str, center: Sequence[str], req: Request, depth: int
) -> dict[str, int]:
    """Hop distance from the nearest center entity (the centers themselves at 0)."""
    found = await store.neighbours(group_id, center, depth, req.filters.fact_filter())
    return {**found, **dict.fromkeys(center, 0)}


async def _bfs_facts(
    store: GraphReads, group_id: str, center: Sequence[str], req: Request, limit: int, depth: int
) -> list[Hit[Any]]:
    dist = (
        await center_distances(store, group_id, center, req, depth - 1)
        if depth > 1
        else dict.fromkeys(center, 0)
    )
    facts = await store.facts_around(group_id, list(dist), req.filters.fact_filter(), limit=limit)
    # a fact touching a center is 1 hop away, one touching a neighbour 2 hops, ...
    hops = {f.uuid: 1 + min(dist.get(f.source_uuid, depth), dist.get(f.target_uuid, depth)) for f in facts}
    hits = [Hit(item=f, score=1.0 / (1.0 + hops[f.uuid])) for f in facts]
    return sorted(hits, key=lambda h: -h.score)


async def _bfs_entities(
    store: GraphReads, group_id: str, center: Sequence[str], req: Request, depth: int
) -> list[Hit[Any]]:
    dist = await store.neighbours(group_id, center, depth, req.filters.fact_filter())
    dist = {uuid: d for uuid, d in dist.items() if uuid not in center}
    entities = await store.get_entities(group_id, list(dist), req.filters.store_time())
    hits = [Hit(item=e, score=1.0 / (1.0 + dist[e.uuid])) for e in entities if req.filters.keep_entity(e)]
    return sorted(hits, key=lambda h: -h.score)


async def _bfs_episodes(
    store: GraphReads, group_id: str, center: Sequence[str], req: Request, limit: int
) -> list[Hit[Any]]:
    counts: dict[str, int] = {}
    episodes: dict[str, Any] = {}
    for uuid in center:
        for episode in await store.episodes_mentioning(group_id, uuid, limit, req.filters.store_time()):
            counts[episode.uuid] = counts.get(episode.uuid, 0) + 1
            episodes.setdefault(episode.uuid, episode)
    return sorted((Hit(item=episodes[u], score=float(c)) for u, c in counts.items()), key=lambda h: -h.score)
