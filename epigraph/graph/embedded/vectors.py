"""In-memory vector matrices for brute-force cosine search, one per (kind, group).

Vectors are L2-normalized on the way in, so cosine similarity is one matrix-vector product. A matrix
is loaded from SQLite the first time its group is searched and then kept in step with every committed
write and delete (the store applies changes only after COMMIT, on the same SQLite thread as searches,
so a search never sees an uncommitted or half-applied change). Brute force is exact; it is memory-bound
(large matrices are split over the cores, see :func:`scored`) and a matrix costs 4 x dim bytes per
vector of RAM. Past ``ann.EXACT_BELOW`` rows a group's searches take their first candidates from an
approximate index (:mod:`.ann`, usearch when installed), scored exactly against the matrix, and that
index is saved next to the database to be read again instead of built (:mod:`.ann_file`).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor

import numpy as np

from ...errors import StoreError
from . import ann
from .ann_file import Saved, fingerprints

Kind = str  # "entities" | "facts" | "episodes"
# A row's times, in epoch microseconds: when its fact began (valid_at) and was recorded (created_at);
# None = unbounded (entities and episodes have neither). Searches as of a time, or of what was known at
# one, skip the rows whose times are later (VectorIndex.ranked).
Times = tuple[int | None, int | None]
NO_TIMES: Times = (None, None)
Rows = tuple[list[str], np.ndarray, np.ndarray]
"""Rows of a group at once: their keys, their vectors (float32, one a row) and their times (int64, two
a row, ``UNBOUNDED`` for none)."""
Loader = Callable[[], Iterable[Rows]]
UNBOUNDED = np.iinfo(np.int64).min


def normalized_rows(vectors: np.ndarray) -> np.ndarray:
    """Unit-length float32 copies of the rows; a zero row stays zero (it scores 0 against everything).

    Each row's bits do not depend on the rows beside it (a per-row reduction), so a vector normalized
    alone (:func:`normalized`) and in a group's first load are the same bytes: the saved index's
    fingerprints (:mod:`.ann_file`) compare them."""
    rows = np.asarray(vectors, dtype=np.float32)
    norms = np.sqrt(np.add.reduce(rows * rows, axis=1))
    return rows / np.where(norms > 0, norms, np.float32(1))[:, None]


def normalized(vector: np.ndarray) -> np.ndarray:
    """Unit-length float32 copy of one vector (:func:`normalized_rows`)."""
    row: np.ndarray = normalized_rows(np.asarray(vector, dtype=np.float32).reshape(1, -1))[0]
    return row


PARALLEL_ROWS = 20_000
"""From this many rows on, a product is split over the machine's cores (one pass over a large matrix is
memory-bound, and a second core's memory bandwidth shortens it)."""


@functools.cache
def _workers() -> ThreadPoolExecutor:
    """The threads that compute all slices but the caller's own (one process-wide pool)."""
    return ThreadPoolExecutor(max(1, (os.cpu_count() or 1) - 1), thread_name_prefix="epigraph-vectors")


def scored(
    matrix: np.ndarray, query: np.ndarray, first: int, excluded: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """``matrix @ query`` (float32) and the row indices of its ``first`` highest scores (unordered).

    Rows where ``excluded`` (a boolean mask) is true score ``-inf``: they come last, after every other.

    A large matrix is computed in row slices on several threads, and each slice also picks its own best
    ``first`` rows, beside the others; the best of those candidates are the best overall (the selection
    over all rows was a large share of one core's time). einsum, not BLAS ``@``: multi-threaded BLAS gemv
    was several times slower on small shared machines (its threads spin while waiting); here each slice is
    one einsum (which releases the GIL) and the caller blocks on the others' futures, so a busy core only
    delays its slice.
    """
    n = matrix.shape[0]
    slices = max(1, min(os.cpu_count() or 1, n // PARALLEL_ROWS))
    out = np.empty(n, dtype=np.float32)
    bounds = np.linspace(0, n, slices + 1, dtype=int)

    def part(k: int) -> np.ndarray:
        lo, hi = bounds[k], bounds[k + 1]
        np.einsum("ij,j->i", matrix[lo:hi], query, out=out[lo:hi])
        if excluded is not None:
            out[lo:hi][excluded[lo:hi]] = -np.inf
        picked: np.ndarray = lo + best(out[lo:hi], first)
        return picked

    others = [_workers().submit(part, k) for k in range(1, slices)]
    candidates = np.concatenate([part(0), *(future.result() for future in others)])
    return out, candidates[best(out[candidates], first)]


def best(scores: np.ndarray, first: int) -> np.ndarray:
    """Indices of the ``first`` highest ``scores``, unordered (all of them when there are fewer)."""
    n = scores.shape[0]
    if first <= 0:
        return np.empty(0, dtype=np.intp)
    if first >= n:
        return np.arange(n)
    return np.argpartition(scores, n - first)[n - first :]


class VectorIndex:
    """Normalized vectors of one group, keyed by uuid, in a growable float32 matrix, each with its
    :data:`Times` (int64 epoch microseconds, ``UNBOUNDED`` for none) that searches as of a time, or of
    what was known at one, use to skip the rows that had not begun or been recorded by then.

    From ``exact_below`` rows on (and with usearch installed), searches take their first candidates from
    an approximate index (:mod:`.ann`), built in the background on first search: until it is ready they
    are exact. Each row has a label, stable while its key is present, under which the index knows it.
    """

    def __init__(self, dim: int, exact_below: int | None = ann.EXACT_BELOW) -> None:
        self.dim = dim
        self.exact_below = exact_below if ann.AVAILABLE else None
        self._keys: list[str] = []
        self._pos: dict[str, int] = {}
        self._mat = np.empty((0, dim), dtype=np.float32)
        self._times = np.empty((0, 2), dtype=np.int64)
        self._labels = np.empty(0, dtype=np.int64)
        self._by_label: dict[int, str] = {}
        self._next_label = 0
        self._ann: ann.Ann | None = None
        self._building: Future[ann.Ann] | None = None
        self._touched: set[int] = set()  # labels changed while the index was being built
        # A vector was taken out of the approximate index: usearch keeps its bytes (and would write them).
        self._removed = False
        self.saved = False
        """Whether the file next to the database holds this very approximate index (:mod:`.ann_file`)."""

    def __len__(self) -> int:
        return len(self._keys)

    def __contains__(self, key: str) -> bool:
        return key in self._pos

    def upsert(self, key: str, vector: np.ndarray, times: Times = NO_TIMES) -> bool:
        """Add or set ``key``'s vector and times; whether it replaced another vector of ``key`` (the
        same vector again, as a changed fact's row brings it, only sets the times)."""
        v = normalized(vector)
        if v.shape[0] != self.dim:
            raise StoreError(f"vector of dimension {v.shape[0]} in an index of dimension {self.dim}")
        row = self._pos.get(key)
        replaced = row is not None
        if row is not None and np.array_equal(self._mat[row], v):
            self._times[row] = [UNBOUNDED if t is None else t for t in times]
            return False
        if row is None:
            row = len(self._keys)
            self._grow(row + 1)
            self._keys.append(key)
            self._pos[key] = row
            self._labels[row] = label = self._next_label
            self._by_label[label] = key
            self._next_label += 1
            if self._building is not None:
                self._touched.add(label)
        else:
            label = int(self._labels[row])
            self._unindex(label)
        self._mat[row] = v
        self._times[row] = [UNBOUNDED if t is None else t for t in times]
        if self._ann is not None:
            self._ann.add(np.array([label]), v[None, :])
            self.saved = False
        return replaced

    def extend(self, keys: list[str], vectors: np.ndarray, times: np.ndarray) -> None:
        """Add many rows at once (a group's first load, in chunks): what :meth:`upsert` does for each,
        in a few array operations; one by one when a key is here already or an index is built."""
        if self._ann is not None or self._building is not None or len(set(keys)) < len(keys) or any(
            key in self._pos for key in keys
        ):
            for key, vector, (begins, recorded) in zip(keys, vectors, times.tolist(), strict=True):
                known = (None if begins == UNBOUNDED else begins, None if recorded == UNBOUNDED else recorded)
                self.upsert(key, vector, known)
            return
        rows = normalized_rows(vectors)
        if rows.shape[1] != self.dim:
            raise StoreError(f"vectors of dimension {rows.shape[1]} in an index of dimension {self.dim}")
        start, end = len(self._keys), len(self._keys) + len(keys)
        self._grow(end)
        self._mat[start:end] = rows
        self._times[start:end] = times
        labels = np.arange(self._next_label, self._next_label + len(keys))
        self._labels[start:end] = labels
        self._keys.extend(keys)
        self._pos.update(zip(keys, range(start, end), strict=True))
        self._by_label.update(zip(labels.tolist(), keys, strict=True))
        self._next_label += len(keys)

    def remove(self, key: str) -> bool:
        """Drop ``key`` by moving the last row into its place: O(dim); out of the approximate index at
        once. Whether it was there."""
        row = self._pos.pop(key, None)
        if row is None:
            return False
        label = int(self._labels[row])
        self._unindex(label)
        del self._by_label[label]
        last = len(self._keys) - 1
        if row != last:
            moved = self._keys[last]
            self._touched.add(int(self._labels[last]))  # its row changes under a build reading it
            self._mat[row] = self._mat[last]
            self._times[row] = self._times[last]
            self._labels[row] = self._labels[last]
            self._keys[row] = moved
            self._pos[moved] = row
        self._keys.pop()
        return True

    def _unindex(self, label: int) -> None:
        if self._ann is not None:
            self._removed |= self._ann.remove(label)
            self.saved = False
        elif self._building is not None:
            self._touched.add(label)

    # --- the approximate index ------------------------------------------------------------------------
    def indexing(self) -> Future[ann.Ann] | None:
        """Start building the approximate index if this group is large enough and has none: the build
        under way (wait for it, then call :meth:`approximate`), or ``None`` when there is none to wait for."""
        n = len(self._keys)
        if self.exact_below is None or n < self.exact_below:
            self._ann = self._building = None
            return None
        if self._ann is not None:
            return None
        if self._building is None:
            self._touched, self._removed, self.saved = set(), False, False
            self._building = ann.build(self.dim, self._labels[:n].copy(), self._mat[:n])
        return self._building

    def approximate(self) -> ann.Ann | None:
        """The approximate index once built and brought up to date, else ``None`` (search exactly);
        starts its build when the group is large enough. A group that shrank below the size gives it up."""
        building = self.indexing()
        if building is None or not building.done():
            return self._ann
        self._building = None
        built = building.result()
        for label in self._touched:  # changed while it was built: as they are now
            self._removed |= built.remove(label)
            key = self._by_label.get(label)
            if key is not None:
                built.add(np.array([label]), self._mat[self._pos[key]][None, :])
        self._touched = set()
        self._ann = built
        return built

    def wants_index(self) -> bool:
        """Whether searches here go through an approximate index (large enough, usearch installed)."""
        return self.exact_below is not None and len(self._keys) >= self.exact_below

    def adopt(self, saved: Saved) -> bool:
        """Search through ``saved`` (this group's index, read from its file) from now on, set right for the
        rows as they are: a label whose key is stored with the same vector is kept, any other taken out,
        the rows it lacks added. Not adopted when it lacks most rows (a build in the background is then
        the quicker one: this runs on the SQLite thread). Whether it held a vector the rows no longer have
        (its file must go)."""
        n = len(self._keys)
        prints = fingerprints(self._mat[:n]).tolist()
        labels = [-1] * n
        stale: list[int] = []
        for label, key, mark in zip(saved.labels.tolist(), saved.keys, saved.prints.tolist(), strict=True):
            row = self._pos.get(key)
            if row is not None and labels[row] < 0 and prints[row] == mark:
                labels[row] = label
            else:
                stale.append(label)
        mapped = np.array(labels, dtype=np.int64)
        missing = np.flatnonzero(mapped < 0)
        if not self.wants_index() or self._ann is not None or 2 * len(missing) > n:
            return bool(stale)
        start = int(saved.labels.max(initial=-1)) + 1
        mapped[missing] = np.arange(start, start + len(missing))
        for label in stale:
            saved.ann.remove(label)
        saved.ann.add(mapped[missing], self._mat[missing], threads=os.cpu_count() or 1)
        self._labels[:n] = mapped
        self._by_label = dict(zip(mapped.tolist(), self._keys, strict=True))
        self._next_label = int(mapped.max(initial=-1)) + 1
        self._ann, self._building, self._touched = saved.ann, None, set()
        self._removed = bool(stale)
        self.saved = not stale and not len(missing)
        return bool(stale)

    def saveable(self) -> Saved | None:
        """The approximate index to write next to the database: one that is ready, not written yet, and
        never had a vector taken out (usearch would write its bytes); else ``None``."""
        if self._building is not None and self._building.done():
            self.approximate()
        if self._ann is None or self._building is not None or self.saved or self._removed:
            return None
        n = len(self._keys)
        return Saved(self._ann, self._labels[:n].copy(), list(self._keys), fingerprints(self._mat[:n]))

    def ranked(
        self, query: np.ndarray, first: int, latest: Times = NO_TIMES, exact: bool = False
    ) -> Iterator[list[tuple[str, float]]]:
        """Every key with its cosine to ``query``, best first, in blocks of growing size; only the keys
        whose times are each no later than ``latest``'s (a ``None`` bound: any).

        The first block has ``first`` keys, each next one four times more: a caller that filters the
        candidates pulls blocks until it has enough, paying a full sort only when the filter is very
        selective (``latest`` takes searches as of an early time, or of what was known then, out of that
        case: the rows not begun or not recorded never reach the caller). Ties are broken by key so
        results are deterministic (a tie across a block boundary may come out of key order, never twice
        and never lost).

        With an approximate index (and not ``exact``), the first blocks are the index's candidates scored
        exactly (:data:`.ann.CANDIDATES` of them, or more when ``latest`` leaves a share of the rows),
        in blocks growing the same way; the blocks after them are exact, without the keys already given.
        A search that would ask the index for every row is exact (a walk over every node can only miss).
        """
        n = len(self._keys)
        if n == 0:
            return
        q = normalized(query)
        if q.shape[0] != self.dim:
            raise StoreError(f"query vector has dimension {q.shape[0]}, the stored vectors {self.dim}")
        excluded = None
        for column, bound in enumerate(latest):
            if bound is not None:
                late = self._times[:n, column] > bound
                excluded = late if excluded is None else excluded | late
        wanted = n if excluded is None else n - int(np.count_nonzero(excluded))
        seen: set[str] = set()
        index = None if exact else self.approximate()
        count = max(first, ann.CANDIDATES) * n // max(wanted, 1)
        if index is not None and wanted >= ann.MIN_SHARE * n and count < n:
            # (asked for every row, the graph walk can only lose some: brute force is exact and no slower)
            proposed, start, size = self._proposed(index, q, count, excluded), 0, max(1, first)
            while start < len(proposed):
                block = proposed[start : start + size]
                seen.update(key for key, _ in block)
                yield block
                start, size = start + size, size * 4
        yield from self._exact(q, max(1, first), excluded, wanted, seen)

    def _proposed(
        self, index: ann.Ann, q: np.ndarray, count: int, excluded: np.ndarray | None
    ) -> list[tuple[str, float]]:
        """The index's ``count`` candidates not ``excluded``, scored exactly, best first."""
        keys = [self._by_label.get(int(label)) for label in index.candidates(q, count)]
        rows = np.array([self._pos[key] for key in keys if key is not None], dtype=np.intp)
        if excluded is not None:
            rows = rows[~excluded[rows]]
        scores = self._mat[rows] @ q
        return sorted(
            ((self._keys[i], float(s)) for i, s in zip(rows, scores, strict=True)),
            key=lambda ks: (-ks[1], ks[0]),
        )

    def _exact(
        self, q: np.ndarray, size: int, excluded: np.ndarray | None, wanted: int, seen: set[str]
    ) -> Iterator[list[tuple[str, float]]]:
        n = len(self._keys)
        scores, top = scored(self._mat[:n], q, size + len(seen), excluded)
        while len(seen) < wanted:
            size = min(n, size)
            if len(top) < size:  # a later block: the first one came with the scores
                top = best(scores, size)
            block = sorted(
                (
                    (self._keys[i], float(scores[i]))
                    for i in top
                    if self._keys[i] not in seen and (excluded is None or not excluded[i])
                ),
                key=lambda ks: (-ks[1], ks[0]),
            )
            seen.update(key for key, _ in block)
            yield block
            size *= 4

    def _grow(self, needed: int) -> None:
        capacity = self._mat.shape[0]
        if needed <= capacity:
            return
        size = max(needed, capacity * 2, 64)
        bigger = np.empty((size, self.dim), dtype=np.float32)
        bigger[:capacity] = self._mat
        self._mat = bigger  # a build under way keeps reading the old matrix
        times = np.empty((size, 2), dtype=np.int64)
        times[:capacity] = self._times
        self._times = times
        labels = np.empty(size, dtype=np.int64)
        labels[:capacity] = self._labels
        self._labels = labels
