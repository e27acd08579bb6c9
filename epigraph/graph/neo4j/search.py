"""Fulltext and vector search over the Neo4j indexes, scoped by group after the index call.

Neo4j's index procedures cannot filter by group inside the index, so both kinds over-fetch:

- **fulltext**: the Lucene query itself carries a zero-boost group clause (see ``lucene.build_query``), so
  nearly every hit is in the groups; the index returns at most ``fetch = max(5 * limit, 50)`` hits, the exact
  group / time / relation / label filters run in Cypher, and if fewer than ``limit`` survive while the index
  had more, the query runs again with 8x the fetch until the index is exhausted. Scores are Lucene BM25.
- **vector**: ``db.index.vector.query*`` returns ``k = clamp(2 * limit, 50)`` approximate nearest
  candidates (HNSW, unquantized); the group and filters apply in Cypher and the best ``limit + 5``
  survivors by the index's similarity come back (no stored vector is read on the server). Too few
  survivors while the index had more: one more index query with ``k`` scaled by the observed survivor
  ratio (at most 2,000); still too few, or none at all: an exact scan of the groups' vectors
  (``vector.similarity.cosine``) replaces it, so top-k is right for every group size and filter. The fact
  scan reads only the facts begun by ``as_of`` (a seek in the ``(group_id, start_us)`` index), or,
  when at most 1,000 facts had been recorded by a chosen ``known_at``, only those (``(group_id,
  known_from_us)``), so a search as of an early time or of what was known then, the usual reasons the
  index path gives up, stays cheap in a big group. The
  returned score is the plain cosine in ``[-1, 1]``, recomputed in float64 from the returned vectors
  (Neo4j reports ``(1 + cos) / 2`` in float32), and the top ``limit`` are cut after that rescoring: the
  same numbers and order the embedded store's numpy search gives.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from . import convert
from .connection import Connection
from .lucene import build_query

TEXT_OVERFETCH, TEXT_MIN_FETCH, TEXT_GROWTH, TEXT_MAX_FETCH = 5, 50, 8, 1_000_000
VECTOR_OVERFETCH, VECTOR_MIN_K, VECTOR_MAX_K = 2, 50, 2_000
# At most this many candidates (e.g. facts begun by an early as_of), and the exact scan answers at once:
# reading that many facts' vectors costs about one index query at the largest k.
SCAN_FIRST_MAX = 1_000
RESCORE_MARGIN = 5  # extra survivors fetched so float32 near-ties at the cut are settled in float64

# Which path answered a vector search: DEBUG records every exact scan (a filtered search in a big group
# reads the whole group's vectors there; in a small group the scan is the cheap, normal answer).
log = logging.getLogger("epigraph.neo4j")


async def fulltext(
    conn: Connection,
    statement: str,
    *,
    index: str,
    fields: Sequence[tuple[str, float]],
    group_ids: Sequence[str],
    text: str,
    limit: int,
    uuid_of: Callable[[Any], str],
    params: Mapping[str, Any] | None = None,
) -> list[tuple[Any, float]]:
    """``(item map, BM25 score)`` pairs, best first (ties by uuid), at most ``limit``."""
    groups = list(dict.fromkeys(group_ids))
    query = build_query(fields, text, groups)
    if limit <= 0 or not groups or not query:
        return []
    fetch = max(limit * TEXT_OVERFETCH, TEXT_MIN_FETCH)
    while True:
        args = {
            **(params or {}),
            "index": index,
            "query": query,
            "group_ids": groups,
            "fetch": fetch,
            "limit": limit,
        }
        record = (await conn.read(statement, args, what="fulltext search"))[0]
        if record["survivors"] >= limit or record["fetched"] < fetch or fetch >= TEXT_MAX_FETCH:
            break
        fetch = min(fetch * TEXT_GROWTH, TEXT_MAX_FETCH)
    pairs = [(hit["item"], float(hit["score"])) for hit in record["items"]]
    pairs.sort(key=lambda pair: (-pair[1], uuid_of(pair[0])))
    return pairs


async def vector(
    conn: Connection,
    index_statement: str,
    scan_statement: str,
    *,
    index: str,
    index_dim: int | None,
    group_ids: Sequence[str],
    query: Sequence[float],
    limit: int,
    embedding_of: Callable[[Any], Sequence[float]],
    uuid_of: Callable[[Any], str],
    params: Mapping[str, Any] | None = None,
    narrowings: Sequence[tuple[str, str]] = (),
) -> list[tuple[Any, float]]:
    """``(item map, cosine)`` pairs, best first (ties by uuid), at most ``limit``.

    ``embedding_of(item)`` returns the stored vector of an item map (used for the exact float64 score).
    ``narrowings``: ``(count, scan)`` statements, a narrower exact scan and how many candidates it would
    read, counted up to ``$cap``. The first with at most ``SCAN_FIRST_MAX`` answers without asking the
    index (see ``_few_candidates``).
    """
    vec = convert.to_vector(query)
    groups = list(dict.fromkeys(group_ids))
    if limit <= 0 or not groups or convert.cosine_dim(vec) is None:
        return []
    args = {
        **(params or {}),
        "index": index,
        "group_ids": groups,
        "vector": vec,
        "limit": limit + RESCORE_MARGIN,
    }
    items: list[Any] | None = None
    if index_dim == len(vec):
        narrow = await _few_candidates(conn, narrowings, args)
        if narrow is not None:
            scan_statement = narrow
            log.debug(
                "vector search on %s: at most %d candidates, the index is skipped", index, SCAN_FIRST_MAX
            )
        else:
            items = await _from_index(conn, index_statement, args, limit)
    if items is None:
        items = [row["item"] for row in await conn.read(scan_statement, args, what="vector scan")]
        log.debug("vector search on %s: exact scan of %d group(s), %d hit(s)", index, len(groups), len(items))
    scores = cosines([embedding_of(item) for item in items], vec)
    ranked = sorted(zip(items, scores, strict=True), key=lambda pair: (-pair[1], uuid_of(pair[0])))
    return ranked[:limit]


async def _few_candidates(
    conn: Connection, narrowings: Sequence[tuple[str, str]], args: dict[str, Any]
) -> str | None:
    """The scan of the first narrowing that would read at most ``SCAN_FIRST_MAX`` candidates (e.g. the
    facts begun by an early ``as_of``), or ``None``. Such a scan costs about one index query, is exact,
    and spares the index path, which a filter that selective defeats after up to two queries."""
    for count, scan in narrowings:
        record = (await conn.read(count, {**args, "cap": SCAN_FIRST_MAX + 1}, what="vector search"))[0]
        if int(record["n"]) <= SCAN_FIRST_MAX:
            return scan
    return None


async def _from_index(conn: Connection, statement: str, args: dict[str, Any], limit: int) -> list[Any] | None:
    """Top ``limit`` from the vector index, or ``None`` when only an exact scan can tell.

    First ``k = clamp(2 * limit, 50)``. Too few survivors of the group/filters, while the index had more:
    the survivor ratio estimates the groups' share of the index, and one more query asks for the ``k`` that
    should yield ``2 * limit`` survivors (at most ``VECTOR_MAX_K``). No survivor at all, or still too few:
    the exact scan decides (a group that rare is small, so the scan is cheap).
    """
    k = min(max(limit * VECTOR_OVERFETCH, VECTOR_MIN_K), VECTOR_MAX_K)
    for _ in range(2):
        record = (await conn.read(statement, {**args, "k": k}, what="vector search"))[0]
        fetched, survivors = int(record["fetched"]), int(record["survivors"])
        if survivors >= limit or fetched < k:
            return [hit["item"] for hit in record["items"]]
        if survivors == 0 or k >= VECTOR_MAX_K:
            return None
        k = min(math.ceil(k * 2 * limit / survivors), VECTOR_MAX_K)
    return None


def cosines(vectors: Sequence[Sequence[float]], query: Sequence[float]) -> list[float]:
    """Plain cosine similarity of each vector with ``query``, in float64."""
    if not vectors:
        return []
    matrix = np.asarray(vectors, dtype=np.float64)
    q = np.asarray(query, dtype=np.float64)
    norms = np.linalg.norm(matrix, axis=1) * np.linalg.norm(q)
    sims = (matrix @ q) / np.where(norms == 0.0, 1.0, norms)
    return [float(s) for s in sims]
