"""What the store bench measures of search and of the file, beside the store calls of ``store.py``.

- hybrid search (``search()`` with ``FACTS_HYBRID``: the store's BM25 and vector search, fused) p50 /
  p95, now and as of the middle of the history (time travel: half the facts had begun);
- the embedded file's size (with its WAL; Neo4j's data directory) and the time to open it again: a new
  store on the file until its first hybrid search answered (it loads the matrix and searches exactly
  meanwhile) and until the approximate index is ready (``EmbeddedStore.prepare_vectors``); for Neo4j,
  a new driver's first search;
- ``recall_at_10`` of the embedded store's vector search against brute force: the same queries on the
  same file through a store that searches exactly (``exact_below=None``).

The queries' vectors are given (the bench draws them like its facts'), so the embedder only looks them
up: the figures are the search's own cost.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import numpy as np

from epigraph.graph.embedded import EmbeddedStore
from epigraph.graph.store import GraphStore
from epigraph.search import config as recipes
from epigraph.search import search


@dataclass
class Queries:
    """The bench's queries of one group: a text and a vector each, and the middle of its history."""

    group: str
    texts: list[str]
    vectors: np.ndarray
    middle: datetime
    approximate: list[list[str]] = field(default_factory=list)  # the top 10 uuids through the index


def size_label(size: int) -> str:
    """The size in a metric's name: 1m, 100k, 20k (under 1,000: the number)."""
    if size >= 1_000_000 and size % 1_000_000 == 0:
        return f"{size // 1_000_000}m"
    return f"{size // 1000}k" if size >= 1000 else str(size)


def parse_size(text: str) -> int:
    """``10k``, ``1m``, ``20000``: a number of facts (for ``--sizes``)."""
    scale = {"k": 1_000, "m": 1_000_000}.get(text[-1:].lower(), 1)
    try:
        return int(float(text[:-1] if scale > 1 else text) * scale)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (e.g. 10k, 100k, 1m)") from None


class GivenVectors:
    """An ``Embedder`` that answers each query text with the vector the bench drew for it."""

    name = "given"

    def __init__(self, queries: Queries) -> None:
        self.dim = queries.vectors.shape[1]
        self.requests = 0
        self._by_text = dict(zip(queries.texts, queries.vectors, strict=True))

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.requests += 1
        return np.stack([self._by_text[t] for t in texts]).astype(np.float32)


async def hybrid(store: GraphStore, queries: Queries, as_of: datetime | None = None) -> list[float]:
    """Milliseconds of each hybrid search of ``queries`` (as of ``as_of`` when given)."""
    embedder = GivenVectors(queries)
    out = []
    for text in queries.texts:
        t0 = time.perf_counter()
        await search(
            store, embedder, text, group_ids=[queries.group], config=recipes.FACTS_HYBRID, as_of=as_of
        )
        out.append((time.perf_counter() - t0) * 1000)
    return out


def percentiles(values: Sequence[float]) -> tuple[float, float]:
    return float(np.percentile(values, 50)), float(np.percentile(values, 95))


async def searches(store: GraphStore, queries: Queries, prefix: str) -> dict[str, float]:
    """Hybrid search p50 / p95, now and as of the middle of the history (after a warm-up of 10)."""
    warm = Queries(queries.group, queries.texts[:10], queries.vectors[:10], queries.middle)
    await hybrid(store, warm)
    await hybrid(store, warm, queries.middle)
    out: dict[str, float] = {}
    for label, as_of in (("hybrid", None), ("time_travel_hybrid", queries.middle)):
        p50, p95 = percentiles(await hybrid(store, queries, as_of))
        out[f"{prefix}{label}_p50_ms"], out[f"{prefix}{label}_p95_ms"] = p50, p95
    return out


def file_mb(name: str, path: str) -> float | None:
    """The embedded database file and its WAL, in MiB; for Neo4j, its data directory when the server is
    ``neo4jctl.py run``'s (``EPIGRAPH_NEO4J_LOG`` beside its home: every size of the run so far), else
    ``None``."""
    if name == "neo4j":
        log = os.environ.get("EPIGRAPH_NEO4J_LOG")
        data = Path(log).parent / "home" / "data" if log else None
        if data is None or not data.is_dir():
            return None
        files = [f for f in data.rglob("*") if f.is_file()]
    else:
        files = [f for f in (Path(path), Path(path + "-wal")) if f.exists()]
    return sum(f.stat().st_size for f in files) / 2**20


def index_file_mb(path: str) -> float | None:
    """The embedded store's saved approximate indexes (``<database>.ann``, graph/embedded/ann_file.py), in
    MiB; ``None`` when there is none."""
    files = [f for f in Path(f"{path}.ann").glob("*") if f.is_file()]
    return sum(f.stat().st_size for f in files) / 2**20 if files else None


async def reopened(store: GraphStore, queries: Queries, prefix: str, started: float) -> dict[str, float]:
    """Seconds from ``started`` (before ``store`` was made) to its first hybrid search answered, and
    (embedded) until its approximate index was ready."""
    one = Queries(queries.group, queries.texts[:1], queries.vectors[:1], queries.middle)
    await hybrid(store, one)
    out = {prefix + "open_first_search_s": time.perf_counter() - started}
    if isinstance(store, EmbeddedStore):
        await store.prepare_vectors([queries.group])
        out[prefix + "open_index_ready_s"] = time.perf_counter() - started
    return out


async def top10(store: GraphStore, queries: Queries) -> list[list[str]]:
    hits = [await store.search_facts_vector([queries.group], v.tolist(), 10) for v in queries.vectors]
    return [[h.item.uuid for h in found] for found in hits]


async def recall_at_10(path: str, dim: int, approximate: list[list[str]], queries: Queries) -> float:
    """Mean share of brute force's top 10 (a store on ``path`` that searches exactly) that
    ``approximate`` found, over the queries."""
    exact_store = EmbeddedStore(path, exact_below=None)
    try:
        await exact_store.setup(embedding_dim=dim)
        exact = await top10(exact_store, queries)
    finally:
        await exact_store.close()
    shares = [len(set(a) & set(e)) / max(1, len(e)) for a, e in zip(approximate, exact, strict=True)]
    return float(np.mean(shares))


async def after_close(
    name: str, reopen: Callable[[], Awaitable[GraphStore]], path: str, size: int, asked: Queries
) -> dict[str, float]:
    """Opening the store again with ``reopen`` (time to its first search, to its index) and, for the
    embedded store with an index, recall@10 of its vector search against brute force."""
    prefix = f"{name}.{size_label(size)}."
    started = time.perf_counter()
    store = await reopen()
    try:
        out = await reopened(store, asked, prefix, started)
    finally:
        await store.close()
    if asked.approximate:
        out[prefix + "recall_at_10"] = await recall_at_10(
            path, asked.vectors.shape[1], asked.approximate, asked
        )
    return out
