"""Search orchestration: embed the query once, run the retrievers concurrently, fuse, filter, rerank, hydrate.

::

    results = await search(store, embedder, "where does Alice work?", group_ids="acme")
    results = await search(store, embedder, "Alice", group_ids="acme", as_of="2021-06-01")

By default only currently valid facts are returned; ``as_of`` (event time: what was true then),
``known_at`` (system time: what the graph believed then) travel in time, and ``include_retired=True``
returns every fact with its interval. See :mod:`.filters` for the exact semantics.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

import numpy as np

from ..concurrency import gather
from ..embed import Embedder
from ..errors import UsageError
from ..graph.derived import Community
from ..graph.model import Entity, Episode, Fact, speaker_of
from ..graph.store import CURRENT, GraphReads, Hit, TimeFilter
from . import fusion
from .config import DEFAULT, Fusion, Reranker, Scope, ScopeConfig, SearchConfig
from .context import names, session_links
from .endpoints import by_group, fetch_endpoints
from .entity import resolve_center
from .filters import Filters, make_filters
from .results import CommunityResult, EntityResult, EpisodeHit, FactResult, SearchResults
from .retrievers import Request, center_distances, retrieve

Item = Fact | Entity | Episode


@dataclass(frozen=True, slots=True)
class Ranked:
    """One candidate after fusion/reranking, with every score that led there."""

    item: Any
    score: float
    scores: Mapping[str, float]
    endpoints: tuple[Entity | None, Entity | None] | None = None
    """A fact's (source, target), when a filter already fetched them."""


async def search(
    store: GraphReads,
    embedder: Embedder,
    query: str,
    *,
    group_ids: str | Iterable[str],
    config: SearchConfig = DEFAULT,
    as_of: datetime | str | None = None,
    known_at: datetime | str | None = None,
    include_retired: bool = False,
    labels: str | Iterable[str] | None = None,
    relations: str | Iterable[str] | None = None,
    center: str | Sequence[str] | None = None,
    limit: int | None = None,
    during: tuple[datetime | str | None, datetime | str | None] | None = None,
) -> SearchResults:
    """Hybrid search of facts, entities and/or episodes (which ones, and how: ``config``).

    ``center``: entity uuids or names; used by the BFS retriever and the node-distance reranker.
    ``labels``: entities with one of these labels (facts: at least one endpoint has one).
    ``relations``: facts with one of these relation names. ``during=(start, end)``: facts whose validity
    overlaps ``[start, end)``, episodes whose reference time is in it. ``limit`` overrides
    ``config.limit`` (per kind of result). Raises :class:`~epigraph.errors.UsageError` on bad input and
    :class:`~epigraph.errors.EntityNotFound` for an unknown center.
    """
    started = time.perf_counter()
    text = query.strip()
    if not text:
        raise UsageError("search needs a non-empty query")
    cfg = config if limit is None else _with_limit(config, limit)
    filters = make_filters(
        group_ids,
        as_of=as_of,
        known_at=known_at,
        include_retired=include_retired,
        labels=labels,
        relations=relations,
        during=during,
    )
    centers = await resolve_center(store, filters.group_ids, center) if center else {}
    if cfg.needs_center and not centers:
        raise UsageError(f"recipe {cfg.name} ranks by distance from a center entity: pass center=")
    vector = await embed_query(embedder, text) if cfg.needs_vector else None
    req = Request(text=text, filters=filters, vector=vector, center=centers)
    scopes = cfg.scopes()
    found = await gather([_run_scope(store, scope, sc, req, cfg.limit) for scope, sc in scopes])
    ranked = {scope: items for (scope, _), items in zip(scopes, found, strict=True)}
    facts = await hydrate_facts(store, ranked.get("facts", []), filters.store_time())
    return SearchResults(
        query=text,
        group_ids=filters.group_ids,
        recipe=cfg.name,
        facts=tuple(facts),
        entities=tuple(EntityResult(r.item, r.score, r.scores) for r in ranked.get("entities", [])),
        episodes=tuple(EpisodeHit(r.item, r.score, r.scores) for r in ranked.get("episodes", [])),
        communities=tuple(CommunityResult(r.item, r.score, r.scores) for r in ranked.get("communities", [])),
        as_of=filters.as_of,
        known_at=filters.known_at,
        include_retired=include_retired,
        elapsed_ms=(time.perf_counter() - started) * 1000.0,
    )


def _with_limit(config: SearchConfig, limit: int) -> SearchConfig:
    try:
        return config.with_limit(limit)
    except ValueError as exc:
        raise UsageError(str(exc)) from exc


async def embed_query(embedder: Embedder, text: str) -> list[float]:
    """The query's embedding: the ONE embedder call of a search."""
    vectors = await embedder.embed([text])
    return [float(x) for x in np.asarray(vectors[0], dtype=np.float32)]


async def _run_scope(
    store: GraphReads, scope: Scope, sc: ScopeConfig, req: Request, limit: int
) -> list[Ranked]:
    """Retrieve (retrievers concurrently), fuse, post-filter, rerank and cut one kind of result."""
    pool = max(sc.candidates, limit) * (3 if req.filters.post_filters else 1)
    lists = await gather([retrieve(store, scope, r, req, pool, sc.bfs_depth) for r in sc.retrievers])
    candidates = fuse(sc, lists)
    if scope == "episodes" and sc.uses_context:
        candidates = await episode_context(store, sc, req.text, candidates, req.filters.store_time())
    candidates = await _post_filter(store, scope, req.filters, candidates)
    reranked = await _rerank(store, scope, sc, req, candidates)
    return reranked[:limit]


def fuse(sc: ScopeConfig, lists: Sequence[Sequence[Hit[Any]]]) -> list[Ranked]:
    """Fuse the retrievers' hit lists as ``sc`` says (pure)."""
    items: dict[str, Any] = {}
    raw: dict[str, dict[str, float]] = {}
    for retriever, hits in zip(sc.retrievers, lists, strict=True):
        for hit in hits:
            uuid = hit.item.uuid
            items.setdefault(uuid, hit.item)
            raw.setdefault(uuid, {}).setdefault(retriever.value, hit.score)
    keyed = [[(h.item.uuid, h.score) for h in hits] for hits in lists]
    if len(lists) == 1:
        fused = fusion.dedupe(keyed[0])
    elif sc.fusion is Fusion.RRF:
        fused = fusion.rrf([[k for k, _ in ranked] for ranked in keyed], k=sc.rrf_k, weights=sc.weight_list())
    else:
        fused = fusion.score_fusion(keyed, weights=sc.weight_list(), method=sc.normalization)
    return [Ranked(items[k], score, {**raw[k], "fused": score}) for k, score in fused]


async def episode_context(
    store: GraphReads, sc: ScopeConfig, query: str, candidates: list[Ranked], when: TimeFilter = CURRENT
) -> list[Ranked]:
    """Re-score fused episode hits by their session neighbours, then by their speakers (see :mod:`.context`).

    The first ``sc.candidates`` hits share their scores: one ``episodes_around`` call per group fetches
    the turns within ``sc.context_window`` of them (among the episodes passing ``when``: a later turn is
    no neighbour of a search as of earlier), and the turns that were no hit join the candidates with what
    their neighbours gave them.
    """
    if not candidates:
        return candidates
    items: dict[str, Any] = {c.item.uuid: c.item for c in candidates}
    ranked = [(c.item.uuid, c.score) for c in candidates]
    steps: dict[str, dict[str, float]] = {}
    if sc.context_window > 0:
        sharing = candidates[: sc.candidates]
        groups = by_group((c.item.group_id, c.item.uuid) for c in sharing)
        found = await gather(
            [store.episodes_around(g, uuids, sc.context_window, when) for g, uuids in groups.items()]
        )
        items.update((e.uuid, e) for episodes in found for e in episodes)
        # every group's hits and neighbours in the group's order (around each sharing hit, all of its
        # neighbours are there, so steps counted in this list are steps in the group); groups never link
        ordered = sorted(items.values(), key=lambda e: (e.group_id, e.reference_time, e.created_at, e.uuid))
        linked = session_links(ordered, sc.session_gap)
        sequence = [e.uuid for e in ordered]
        ranked = fusion.spread_to_neighbours(
            ranked, sequence, sc.context_window, sc.context_discount, linked, spreading=len(sharing)
        )
        steps["context"] = dict(ranked)
    if sc.speaker_weight != 1.0:
        named: dict[str, bool] = {}
        factors = {}
        for uuid, _ in ranked:
            speaker = speaker_of(items[uuid])
            if speaker is not None and named.setdefault(speaker, names(query, speaker)):
                factors[uuid] = sc.speaker_weight
        ranked = fusion.boost(ranked, factors)
        steps["speaker"] = dict(ranked)
    before = {c.item.uuid: c.scores for c in candidates}
    return [
        Ranked(items[k], score, {**before.get(k, {}), **{step: s[k] for step, s in steps.items()}})
        for k, score in ranked
    ]


async def _post_filter(
    store: GraphReads, scope: Scope, filters: Filters, candidates: list[Ranked]
) -> list[Ranked]:
    if scope == "communities":
        return candidates  # searched as they are now; labels and relations describe facts and entities
    if scope == "episodes":
        return [c for c in candidates if filters.keep_episode(c.item)]
    if scope == "entities":
        return [c for c in candidates if filters.keep_entity(c.item)]
    if not filters.post_filters:
        return candidates
    if filters.labels is None:
        return [c for c in candidates if filters.keep_fact(c.item)]
    found = await fetch_endpoints(store, [c.item for c in candidates], filters.store_time())
    with_ends = [
        replace(c, endpoints=(found.get(c.item.source_uuid), found.get(c.item.target_uuid)))
        for c in candidates
    ]
    return [c for c in with_ends if filters.keep_fact(c.item, c.endpoints or ())]


async def _rerank(
    store: GraphReads, scope: Scope, sc: ScopeConfig, req: Request, candidates: list[Ranked]
) -> list[Ranked]:
    if sc.reranker is Reranker.NONE or not candidates:
        return candidates
    by_uuid = {c.item.uuid: c for c in candidates}
    keys = list(by_uuid)
    if sc.reranker is Reranker.MMR:
        order = _mmr(sc, candidates, req.vector)
    elif sc.reranker is Reranker.NODE_DISTANCE:
        order = fusion.rerank_by_distance(keys, await _distances(store, scope, sc, req, candidates))
    else:
        counts = await _mentions(store, scope, candidates, req.filters.store_time())
        order = fusion.rerank_by_mentions(keys, counts)
    name = sc.reranker.value
    return [replace(by_uuid[k], score=score, scores={**by_uuid[k].scores, name: score}) for k, score in order]


def _vector_of(item: Any) -> list[float] | None:
    if isinstance(item, Community):
        return item.embedding
    if isinstance(item, Fact):
        return item.text_embedding
    if isinstance(item, Entity):
        return item.name_embedding
    return item.content_embedding if isinstance(item, Episode) else None


def _mmr(sc: ScopeConfig, candidates: list[Ranked], query: Sequence[float] | None) -> list[tuple[str, float]]:
    """MMR with the fused scores (min-max normalized) as relevance; items without a vector get no penalty."""
    vectors = [_vector_of(c.item) for c in candidates]
    dim = next((len(v) for v in vectors if v), len(query or ()) or 1)
    matrix = np.zeros((len(candidates), dim))
    for i, v in enumerate(vectors):
        if v and len(v) == dim:
            matrix[i] = v
    relevance = fusion.normalize([c.score for c in candidates], fusion.Normalization.MINMAX)
    keys = [c.item.uuid for c in candidates]
    return fusion.mmr(keys, matrix, np.zeros(dim), lambda_=sc.mmr_lambda, relevance=relevance)


async def _distances(
    store: GraphReads, scope: Scope, sc: ScopeConfig, req: Request, candidates: list[Ranked]
) -> dict[str, float]:
    depth = max(sc.bfs_depth, 3)
    dist: dict[str, int] = {}
    for group_id, center in req.center.items():
        dist.update(await center_distances(store, group_id, center, req, depth))
    if scope == "entities":
        return {uuid: float(d) for uuid, d in dist.items()}
    inf = float("inf")
    return {
        c.item.uuid: float(min(dist.get(c.item.source_uuid, inf), dist.get(c.item.target_uuid, inf)))
        for c in candidates
    }


async def _mentions(
    store: GraphReads, scope: Scope, candidates: list[Ranked], time: TimeFilter
) -> dict[str, int]:
    if scope == "facts":
        return {c.item.uuid: len(c.item.episodes) for c in candidates}
    counts: dict[str, int] = {}
    for group_id, uuids in by_group((c.item.group_id, c.item.uuid) for c in candidates).items():
        counts.update(await store.mention_counts(group_id, uuids, time))
    return counts


async def hydrate_facts(
    store: GraphReads, ranked: Sequence[Ranked], time: TimeFilter = CURRENT
) -> list[FactResult]:
    """Facts with their endpoint entities as they were under ``time`` (fetched in one call unless a
    filter already has them)."""
    found = await fetch_endpoints(store, [r.item for r in ranked if r.endpoints is None], time)
    results = []
    for r in ranked:
        source, target = r.endpoints or (found.get(r.item.source_uuid), found.get(r.item.target_uuid))
        results.append(FactResult(r.item, source, target, r.score, r.scores))
    return results
