"""Fusion and reranking: pure functions over ids, ranks, scores and vectors. No I/O, no store types.

Every function returns ``list[tuple[key, score]]`` ordered best first (higher score is better) and never
returns a key twice. Keys are any hashable ids (the engine passes uuids).

Determinism: ties are broken by a key that does not depend on the order of the input *lists* (best rank
seen, then ``str(key)``), and sums are exact (``math.fsum``), so permuting the retrievers never changes a
ranking. Within one list, a repeated key counts once, at its best (first) position.

Why more than RRF: textbook RRF (k=60) throws away how far ahead a retriever's top hit is; score fusion
after a per-list normalization keeps that signal. The default recipe is RRF with a small k (5), which
keeps the head of each list decisive (``config.HYBRID``; the figures:
docs/decisions/2026-11-22-search-fusion-and-fulltext.md).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from enum import StrEnum
from typing import TypeVar

import numpy as np
import numpy.typing as npt

K = TypeVar("K", bound=Hashable)
Ranked = list[tuple[K, float]]


class Normalization(StrEnum):
    """How one retriever's raw scores are put on a common scale before a weighted sum."""

    MINMAX = "minmax"
    """``(s - min) / (max - min)``: top hit 1, last hit 0 (all 1 when the scores are equal)."""
    ZSCORE = "zscore"
    """``(s - mean) / std`` (all 0 when the scores are equal)."""
    DBSF = "dbsf"
    """Distribution-based: min-max over ``mean ± 3 std``, clipped to [0, 1]."""
    MAX = "max"
    """``s / max``: keeps the ratio to the top hit (for non-negative scores such as BM25 and cosine)."""


def dedupe(items: Sequence[tuple[K, float]]) -> list[tuple[K, float]]:
    """Keep the first occurrence of every key (lists are best first, so its best position)."""
    seen: set[K] = set()
    out: list[tuple[K, float]] = []
    for key, score in items:
        if key not in seen:
            seen.add(key)
            out.append((key, score))
    return out


def _order(scores: Mapping[K, float], best_rank: Mapping[K, int]) -> Ranked[K]:
    """Sort by score desc, then best rank asc, then str(key): independent of list order."""
    keys = sorted(scores, key=lambda key: (-scores[key], best_rank[key], str(key)))
    return [(key, scores[key]) for key in keys]


def _check_weights(n: int, weights: Sequence[float] | None) -> list[float]:
    if weights is None:
        return [1.0] * n
    if len(weights) != n:
        raise ValueError(f"{len(weights)} weights for {n} lists")
    if any(w < 0 or not math.isfinite(w) for w in weights):
        raise ValueError(f"weights must be finite and >= 0, got {list(weights)}")
    return list(weights)


def rrf(lists: Sequence[Sequence[K]], k: float = 60.0, weights: Sequence[float] | None = None) -> Ranked[K]:
    """Reciprocal rank fusion: ``score(d) = sum_i w_i / (k + rank_i(d))`` with 1-based ranks.

    A key absent from a list gets nothing from it. ``k`` controls how fast credit decays with rank:
    small ``k`` rewards top positions (k=60 is the textbook value, often too flat for short lists).
    """
    if k < 0 or not math.isfinite(k):
        raise ValueError(f"k must be finite and >= 0, got {k}")
    ws = _check_weights(len(lists), weights)
    parts: dict[K, list[float]] = {}
    best_rank: dict[K, int] = {}
    for weight, ranked in zip(ws, lists, strict=True):
        seen: set[K] = set()
        for rank, key in enumerate(ranked, start=1):
            if key in seen:
                continue
            seen.add(key)
            parts.setdefault(key, []).append(weight / (k + rank))
            best_rank[key] = min(rank, best_rank.get(key, rank))
    scores = {key: math.fsum(sorted(p)) for key, p in parts.items()}
    return _order(scores, best_rank)


def normalize(scores: Sequence[float], method: Normalization | str = Normalization.MINMAX) -> list[float]:
    """Put one list's raw scores on a common scale (see :class:`Normalization`)."""
    method = Normalization(method)
    if not scores:
        return []
    arr = np.asarray(scores, dtype=np.float64)
    if not np.all(np.isfinite(arr)):
        raise ValueError("scores must be finite")
    lo, hi = float(arr.min()), float(arr.max())
    if method is Normalization.MINMAX:
        return [1.0] * len(arr) if hi == lo else _floats((arr - lo) / (hi - lo))
    if method is Normalization.MAX:
        if hi <= 0:
            return [1.0 if s == hi else 0.0 for s in arr.tolist()]
        with np.errstate(over="ignore"):  # a tiny positive max: large negatives overflow, and clip to 0
            return _floats(np.clip(arr / hi, 0.0, 1.0))
    mean, std = float(arr.mean()), float(arr.std())
    if std == 0.0:
        return [1.0 if method is Normalization.DBSF else 0.0] * len(arr)
    if method is Normalization.ZSCORE:
        return _floats((arr - mean) / std)
    low, high = mean - 3 * std, mean + 3 * std
    return _floats(np.clip((arr - low) / (high - low), 0.0, 1.0))


def _floats(arr: npt.NDArray[np.float64]) -> list[float]:
    return [float(x) for x in arr]


def score_fusion(
    lists: Sequence[Sequence[tuple[K, float]]],
    weights: Sequence[float] | None = None,
    method: Normalization | str = Normalization.MINMAX,
) -> Ranked[K]:
    """Weighted sum of per-list normalized scores (convex combination when the weights sum to 1).

    Each list is normalized on its own. A key missing from a list gets that list's lowest normalized
    value (0 for min-max): "not retrieved" is no better than "retrieved last".
    """
    ws = _check_weights(len(lists), weights)
    normalized: list[dict[K, float]] = []
    best_rank: dict[K, int] = {}
    for ranked in lists:
        unique = dedupe(ranked)
        values = normalize([s for _, s in unique], method)
        normalized.append({key: v for (key, _), v in zip(unique, values, strict=True)})
        for rank, (key, _) in enumerate(unique, start=1):
            best_rank[key] = min(rank, best_rank.get(key, rank))
    floors = [min(n.values()) if n else 0.0 for n in normalized]
    scores = {
        key: math.fsum(
            sorted(w * n.get(key, floor) for w, n, floor in zip(ws, normalized, floors, strict=True))
        )
        for key in best_rank
    }
    return _order(scores, best_rank)


def mmr(
    keys: Sequence[K],
    vectors: npt.ArrayLike,
    query: npt.ArrayLike,
    lambda_: float = 0.5,
    limit: int | None = None,
    relevance: Sequence[float] | None = None,
) -> Ranked[K]:
    """Greedy maximal marginal relevance over ``keys`` with unit ``vectors`` (one row per key).

    Each step picks ``argmax lambda * rel(d) - (1 - lambda) * max_{s in selected} cos(d, s)``; ``rel`` is
    ``relevance`` when given (e.g. fused scores) else the cosine to ``query``. ``lambda_=1`` is a pure
    relevance sort; smaller values trade relevance for diversity. Ties keep the input order. The score
    returned is the marginal score at the time the key was picked.
    """
    if not 0.0 <= lambda_ <= 1.0:
        raise ValueError(f"lambda_ must be in [0, 1], got {lambda_}")
    if len(set(keys)) != len(keys):
        raise ValueError("mmr keys must be unique")
    n = len(keys)
    if n == 0:
        return []
    mat = np.asarray(vectors, dtype=np.float64).reshape(n, -1)
    rel = (
        np.asarray(relevance, dtype=np.float64)
        if relevance is not None
        else mat @ np.asarray(query, dtype=np.float64).reshape(-1)
    )
    if rel.shape != (n,):
        raise ValueError(f"{rel.shape[0]} relevance values for {n} keys")
    sims = mat @ mat.T
    take = n if limit is None else max(0, min(limit, n))
    max_sim = np.full(n, -np.inf)
    chosen = np.zeros(n, dtype=bool)
    out: Ranked[K] = []
    for _ in range(take):
        penalty = np.where(np.isfinite(max_sim), max_sim, 0.0)
        marginal = lambda_ * rel - (1.0 - lambda_) * penalty
        marginal[chosen] = -np.inf
        pick = int(np.argmax(marginal))  # first maximum: ties keep the input order
        chosen[pick] = True
        out.append((keys[pick], float(marginal[pick])))
        max_sim = np.maximum(max_sim, sims[pick])
    return out


def rerank_by_distance(keys: Sequence[K], distance: Mapping[K, float]) -> Ranked[K]:
    """Closest first (0 = the center itself); ties and unknown distances keep the input order.

    Score ``1 / (1 + d)``; keys with no known distance score 0 and go last.
    """
    unique = list(dict.fromkeys(keys))
    order = sorted(range(len(unique)), key=lambda i: (distance.get(unique[i], math.inf), i))
    out: Ranked[K] = []
    for i in order:
        d = distance.get(unique[i], math.inf)
        out.append((unique[i], 0.0 if math.isinf(d) else 1.0 / (1.0 + d)))
    return out


def rerank_by_mentions(keys: Sequence[K], counts: Mapping[K, int]) -> Ranked[K]:
    """Most mentioned first (DESCENDING; the incumbent sorted ascending). Ties keep the input order."""
    unique = list(dict.fromkeys(keys))
    order = sorted(range(len(unique)), key=lambda i: (-counts.get(unique[i], 0), i))
    return [(unique[i], float(counts.get(unique[i], 0))) for i in order]


def spread_to_neighbours(
    ranked: Sequence[tuple[K, float]],
    sequence: Sequence[K],
    window: int,
    discount: float,
    linked: Sequence[bool] | None = None,
    spreading: int | None = None,
) -> Ranked[K]:
    """Session context: a hit shares its score with the items around it in ``sequence``.

    ``sequence`` is an ordered run of keys, such as a conversation's turns; ``linked[i]`` says whether
    ``sequence[i]`` and ``sequence[i + 1]`` are neighbours at all (False: a session ends between them;
    default: all linked). Every key of ``sequence`` within ``window`` steps of one of the first
    ``spreading`` hits of ``ranked`` (default: all), not across a break, gains ``discount ** j`` times
    the hit's score at ``j`` steps, on top of its own score (0 if it is no hit): a turn between two hits
    gains from both. Only positive scores are shared; a sharing hit absent from ``sequence`` shares
    nothing. Ties keep the hits' input order, then the new keys by ``str(key)``.
    """
    if window < 0:
        raise ValueError(f"window must be >= 0, got {window}")
    if not 0.0 <= discount <= 1.0:
        raise ValueError(f"discount must be in [0, 1], got {discount}")
    links = list(linked) if linked is not None else [True] * max(0, len(sequence) - 1)
    if len(links) != max(0, len(sequence) - 1):
        raise ValueError(f"{len(links)} links for {len(sequence)} keys")
    hits = dedupe(ranked)
    own = dict(hits)
    parts: dict[K, list[float]] = {key: [score] for key, score in hits}
    first_at: dict[K, int] = {}
    for i, key in enumerate(sequence):
        first_at.setdefault(key, i)
    for key, score in hits[:spreading]:
        at = first_at.get(key)
        if at is None or score <= 0:
            continue
        for step in (-1, 1):
            j, i = 1, at
            while j <= window and 0 <= i + step < len(sequence) and links[min(i, i + step)]:
                i += step
                neighbour = sequence[i]
                if neighbour != key:
                    parts.setdefault(neighbour, []).append(score * discount**j)
                j += 1
    scores = {key: math.fsum(sorted(p)) for key, p in parts.items()}
    last = len(own)
    best_rank = {key: own_rank for own_rank, (key, _) in enumerate(hits)}
    for key in scores:
        best_rank.setdefault(key, last)
    return _order(scores, best_rank)


def boost(ranked: Sequence[tuple[K, float]], factors: Mapping[K, float]) -> Ranked[K]:
    """Scores times per-key ``factors`` (a missing key: 1), best first; ties keep the input order.

    A negative score is divided instead, so a factor above 1 always moves a key up, below 1 down.
    """
    if any(f <= 0 or not math.isfinite(f) for f in factors.values()):
        raise ValueError("factors must be finite and > 0")
    hits = dedupe(ranked)
    scores = {}
    for key, score in hits:
        factor = factors.get(key, 1.0)
        scores[key] = score * factor if score >= 0 else score / factor
    return _order(scores, {key: rank for rank, (key, _) in enumerate(hits)})
