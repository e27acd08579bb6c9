"""The approximate vector index of a large group: usearch's HNSW over int8 copies of the vectors.

Optional: ``pip install 'epigraph[ann]'`` installs usearch; without it every search is the exact brute
force of :mod:`.vectors` (right at any size, memory-bound past ~100k rows). The index only proposes
candidates: :class:`.vectors.VectorIndex` scores them exactly against its float32 matrix, so the scores
and the order of what it returns are exact and only a neighbour the graph walk missed can be lost
(recall@10 against brute force: ``python -m bench store``; why usearch, with the figures:
docs/decisions/2026-12-02-vector-index.md).

The index is built from the matrix (in a background thread) the first time a group of at least
:data:`EXACT_BELOW` rows is searched, unless a saved one can be read (:mod:`.ann_file`: written next to
the database, and never holding a vector the database no longer has); a removal takes the vector out of
the index at once.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import Future
from typing import Any

import numpy as np

try:
    from usearch.index import Index as _Usearch
except ImportError:  # the optional extra is not installed: exact search only
    _Usearch = None  # type: ignore[misc,assignment]

AVAILABLE = _Usearch is not None
"""Whether usearch is installed (``epigraph[ann]``)."""

EXACT_BELOW = 50_000
"""Groups with fewer vectors of a kind than this are searched exactly (brute force takes ~4 ms there);
from this size on, through the index (``EmbeddedStore(exact_below=...)`` changes it)."""

CANDIDATES = 384
"""Candidates the index proposes for a search (more when a time filter leaves only a share of the rows:
``CANDIDATES / share``), re-scored exactly: with :data:`EXPANSION_SEARCH`, recall@10 >= 0.95 (the bench)."""
EXPANSION_SEARCH = 768
CONNECTIVITY = 16
EXPANSION_ADD = 128
MIN_SHARE = 0.1
"""A search whose time filter leaves fewer than this share of the rows is exact: an index walk would have
to propose too many candidates to find enough that pass."""


ONE_BUILD = threading.Lock()
"""Held by the build under way: one at a time (each itself uses every core)."""


class Ann:
    """One usearch index keyed by integer labels (:class:`.vectors.VectorIndex` maps them to uuids)."""

    def __init__(self, dim: int) -> None:
        if _Usearch is None:
            raise RuntimeError("usearch is not installed (pip install 'epigraph[ann]')")
        self.dim = dim
        self._index: Any = _Usearch(
            ndim=dim,
            metric="cos",
            dtype="i8",
            connectivity=CONNECTIVITY,
            expansion_add=EXPANSION_ADD,
            expansion_search=EXPANSION_SEARCH,
        )

    def __len__(self) -> int:
        return len(self._index)

    def add(self, labels: np.ndarray, vectors: np.ndarray, threads: int = 1) -> None:
        if len(labels):
            self._index.add(labels.astype(np.uint64), vectors, threads=threads)

    @classmethod
    def restored(cls, serialized: np.ndarray, dim: int) -> Ann:
        """The index :meth:`serialized` wrote (``ValueError`` when it is not one of ``dim`` dimensions)."""
        if _Usearch is None:
            raise RuntimeError("usearch is not installed (pip install 'epigraph[ann]')")
        index: Any = _Usearch.restore(np.ascontiguousarray(serialized, dtype=np.uint8).tobytes())
        if index is None or index.ndim != dim:
            raise ValueError(f"not a usearch index of dimension {dim}")
        index.expansion_add, index.expansion_search = EXPANSION_ADD, EXPANSION_SEARCH
        ann = cls.__new__(cls)
        ann.dim, ann._index = dim, index
        return ann

    def serialized(self) -> np.ndarray:
        """The whole index as bytes (what usearch writes: every vector's int8 copy and the graph)."""
        return np.frombuffer(self._index.save(), dtype=np.uint8)

    def remove(self, label: int) -> bool:
        """Take ``label`` out; whether the index held it (its bytes stay in the index until reused)."""
        return bool(self._index.remove(int(label)))

    def candidates(self, query: np.ndarray, count: int) -> np.ndarray:
        """Labels of about the ``count`` nearest vectors to ``query``, best first."""
        self._index.expansion_search = max(EXPANSION_SEARCH, count)
        found: np.ndarray = np.asarray(self._index.search(query, count, threads=1).keys, dtype=np.int64)
        return found


def build(dim: int, labels: np.ndarray, matrix: np.ndarray) -> Future[Ann]:
    """An index of ``matrix``'s rows under ``labels``, built in the background on every core.

    ``matrix`` may change while it is read (rows written or moved by the SQLite thread): the caller keeps
    the labels it touched meanwhile and sets them right once the build is done (``VectorIndex``). The
    thread is a daemon: a process that searched once and is done (a command) does not wait for it."""
    future: Future[Ann] = Future()

    def run() -> None:
        with ONE_BUILD:
            try:
                ann = Ann(dim)
                ann.add(labels, matrix, threads=os.cpu_count() or 1)
            except BaseException as exc:
                future.set_exception(exc)
            else:
                future.set_result(ann)

    threading.Thread(target=run, name="epigraph-ann", daemon=True).start()
    return future
