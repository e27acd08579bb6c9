"""In-memory BM25 over the postings of an FTS5 index: the embedded store's fulltext ranking.

FTS5 stays the persistent index and the tokenizer (``fts``); this module holds a copy of one index's
postings (for each stemmed term: the rows holding it and how often) with every row's length, and ranks
a query by exactly the formula of FTS5's ``bm25()``: per term ``idf * tf * (k1 + 1) / (tf + k1 * (1 - b
+ b * len / avglen))`` with ``idf = ln((N - n + 0.5) / (n + 0.5))`` (1e-6 when not positive), ``tf``
summed over the columns with their weights, lengths in tokens over all columns, k1 = 1.2, b = 0.75.

Why not ``bm25()`` itself: for its IDF it walks every row of every query word on each call, and each
ranked row costs more on top, so a query over common words either ranked a bounded window of rows
(recency-biased) or was slow. Here the document counts are the postings' lengths, scoring is a few numpy
passes over them, and each term's scores are kept until the index next changes: every matching row is
ranked (figures: docs/decisions/2026-11-24-embedded-store.md).

A row may carry two times (facts: their ``start_key`` and ``created_at``, as the vector index holds them,
``vectors.Times``): a search as of a time, or of what was known then, leaves the rows begun or recorded
later out of its ranking, before any of them is read from SQLite (ties rank the newest row first, so
without it a search as of the middle of a long history read every tied row after that time first).

Rows change by generation: replacing or removing a row bumps its generation, and its old postings
(tagged with the old one) stop counting; they are dropped the next time their term is ranked. The
store feeds changes after COMMIT only (``Db.term_index``), so a ranking never sees an uncommitted row.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .vectors import NO_TIMES, UNBOUNDED, Times

K1 = 1.2
B = 0.75
"""FTS5's bm25() constants."""

COMMON_SHARE = 0.2
"""A word in more than this share of the rows is "very common": left out while a rarer word remains
(its IDF is near zero and it only inflates the rows to rank)."""

COMMON_MIN_ROWS = 32
"""In a small index no word counts as very common below this many rows."""

COLUMN_BITS = 2
"""Token keys are ``row id << COLUMN_BITS | column`` (an index has at most 4 columns)."""


@dataclass(frozen=True, slots=True)
class Tokens:
    """Tokens of some rows as FTS5 produced them: ``terms[i]`` occurs once per entry of ``keys`` whose
    ``term_of`` is ``i``, in the row and column the key encodes (``row << COLUMN_BITS | column``)."""

    terms: list[str]
    keys: np.ndarray
    term_of: np.ndarray


@dataclass(slots=True)
class _Postings:
    rows: np.ndarray  # int64 row ids
    tf: np.ndarray  # float64 column-weighted term frequency
    gen: np.ndarray  # int64 generation of the row when these postings were made
    scores: np.ndarray | None = None  # each row's BM25 score for the term, as of ``scored_at``
    scored_at: int = -1  # the index's ``_version`` the scores were computed at
    checked_at: int = -1  # the ``_version`` at which every posting was found current


class TermIndex:
    """The postings of one FTS5 index (all groups) and BM25 ranking over them. Not thread-safe: the
    store's SQLite thread owns it."""

    def __init__(self, weights: Sequence[float]) -> None:
        if not 1 <= len(weights) <= 1 << COLUMN_BITS:
            raise ValueError(f"an index has 1 to {1 << COLUMN_BITS} columns, not {len(weights)}")
        self._weights = np.asarray(weights, dtype=np.float64)
        self._postings: dict[str, list[_Postings]] = {}
        self._length = np.zeros(0, dtype=np.float64)  # tokens per row id (0: absent or empty)
        self._present = np.zeros(0, dtype=bool)
        self._gen = np.zeros(0, dtype=np.int64)
        self._group = np.zeros(0, dtype=np.int32)  # group code per row id (``_codes``)
        self._times = np.full((0, 2), UNBOUNDED, dtype=np.int64)  # per row id: ``set_times``
        self._latest = np.full(2, UNBOUNDED, dtype=np.int64)  # no row's time is later: no bound to apply
        self._codes: dict[str, int] = {}
        self._total = np.zeros(0, dtype=np.float64)  # scratch of ``_scores``, all zero between calls
        self._rows = 0
        self._tokens = 0.0
        self._version = 0  # bumped by every change: scores depend on all rows (N, average length)

    def __len__(self) -> int:
        """How many rows the index holds (rows without any token included, as FTS5 counts them)."""
        return self._rows

    # --- changes ------------------------------------------------------------------------------------
    def replace(self, ids: Iterable[int] | None, present: Mapping[str, np.ndarray], tokens: Tokens) -> None:
        """Rows ``ids`` now are: the ``present`` ones (row ids among ``ids`` by group id) with exactly
        ``tokens``; the rest are gone (``ids=None``: the present rows, e.g. when loading). Their previous
        postings, if any, stop counting."""
        kept = np.concatenate([np.zeros(0, np.int64), *present.values()]).astype(np.int64)
        changed = np.unique(kept if ids is None else np.fromiter(ids, dtype=np.int64))
        codes = np.repeat([self._code(group) for group in present], [len(r) for r in present.values()])
        rows = tokens.keys >> COLUMN_BITS
        self._grow(int(max(changed.max(initial=-1), kept.max(initial=-1), rows.max(initial=-1))) + 1)
        old = changed[self._present[changed]]
        self._rows -= len(old)
        self._tokens -= float(self._length[old].sum())
        self._gen[changed] += 1
        self._times[changed] = UNBOUNDED
        self._length[changed] = 0.0
        self._present[changed] = False
        self._present[kept] = True
        self._group[kept] = codes
        self._rows += len(kept)
        counted, lengths = np.unique(rows, return_counts=True)  # O(tokens), not O(rows in the index)
        self._length[counted] += lengths
        self._tokens += float(lengths.sum())
        self._add_postings(tokens, rows)
        self._version += 1

    def set_times(self, rows: np.ndarray, times: np.ndarray) -> None:
        """The times (epoch microseconds, ``UNBOUNDED`` for none; one row of two per id) of present
        ``rows``, which :meth:`ranked`'s ``latest`` bounds; set again after each :meth:`replace` of them."""
        self._grow(int(rows.max(initial=-1)) + 1)
        self._times[rows] = times
        if len(times):
            self._latest = np.maximum(self._latest, times.max(axis=0))

    def _code(self, group_id: str) -> int:
        return self._codes.setdefault(group_id, len(self._codes))

    def _add_postings(self, tokens: Tokens, rows: np.ndarray) -> None:
        """One posting per (term, row) with the column-weighted count of its tokens, grouped by term."""
        if not len(rows):
            return
        term_of, keys = tokens.term_of, tokens.keys
        term_step, row_step = np.diff(term_of), np.diff(rows)
        if np.any((term_step < 0) | ((term_step == 0) & (row_step < 0))):
            order = np.lexsort((rows, term_of))  # FTS5 yields term, then row order: rarely needed
            term_of, rows, keys = term_of[order], rows[order], keys[order]
            term_step, row_step = np.diff(term_of), np.diff(rows)
        weights = self._weights[keys & ((1 << COLUMN_BITS) - 1)]
        starts = np.flatnonzero(np.r_[True, (term_step != 0) | (row_step != 0)])
        tf = np.add.reduceat(weights, starts)
        rows, term_of = rows[starts], term_of[starts]
        gen = self._gen[rows]
        bounds = np.flatnonzero(np.r_[True, np.diff(term_of) != 0, True])
        for lo, hi in itertools.pairwise(bounds.tolist()):
            chunk = _Postings(rows[lo:hi], tf[lo:hi], gen[lo:hi])
            self._postings.setdefault(tokens.terms[term_of[lo]], []).append(chunk)

    def _grow(self, size: int) -> None:
        have = self._length.shape[0]
        if size <= have:
            return
        more = max(size, 2 * have, 1024) - have
        self._length = np.concatenate([self._length, np.zeros(more, dtype=np.float64)])
        self._present = np.concatenate([self._present, np.zeros(more, dtype=bool)])
        self._gen = np.concatenate([self._gen, np.zeros(more, dtype=np.int64)])
        self._group = np.concatenate([self._group, np.zeros(more, dtype=np.int32)])
        self._times = np.concatenate([self._times, np.full((more, 2), UNBOUNDED, dtype=np.int64)])
        self._total = np.zeros(have + more, dtype=np.float64)

    # --- ranking ------------------------------------------------------------------------------------
    def document_count(self, term: str) -> int:
        """How many rows hold ``term`` (a stemmed token, as FTS5 stores it)."""
        postings = self._live(term)
        return 0 if postings is None else len(postings.rows)

    def ranked(
        self,
        terms: Sequence[str],
        first: int,
        groups: Iterable[str],
        latest: Times = NO_TIMES,
    ) -> Iterator[list[tuple[int, float]]]:
        """The rows of ``groups`` holding one of ``terms`` (stemmed tokens) with their BM25 scores over
        them, best first (ties: newest row first), in blocks: ``first`` rows, then four times more each
        time; only the rows whose times (:meth:`set_times`) are each no later than ``latest``'s (``None``:
        any). Statistics (row count, lengths, document counts) are those of the whole index, as FTS5's.

        Terms found in no row are ignored; very common ones (``COMMON_SHARE``) too while a rarer one
        remains.
        """
        codes = [self._codes[g] for g in set(groups) if g in self._codes]
        found = [p for t in dict.fromkeys(terms) if (p := self._live(t)) is not None]
        common = max(COMMON_SHARE * self._rows, COMMON_MIN_ROWS)
        kept = [p for p in found if len(p.rows) <= common] or found
        if not kept or not codes:
            return
        rows, scores = self._scores(kept)
        if len(self._codes) > 1:
            mine = np.isin(self._group[rows], codes)
            rows, scores = rows[mine], scores[mine]
        for column, bound in enumerate(latest):
            if bound is not None and bound < self._latest[column]:  # (a search of now: seldom any)
                begun = self._times[rows, column] <= bound
                rows, scores = rows[begun], scores[begun]
        lo, hi = 0, max(1, first)
        while lo < len(rows):
            block = _best(rows, scores, hi)[lo:]
            yield list(zip(rows[block].tolist(), scores[block].tolist(), strict=True))
            lo, hi = hi, hi * 4

    def _scores(self, postings: list[_Postings]) -> tuple[np.ndarray, np.ndarray]:
        """(rows, BM25 scores) of the rows holding at least one of the terms, unordered. A term's scores
        are kept until the index changes: a query over common words then costs little more than the
        sum over its terms."""
        average = self._tokens / self._rows if self._rows else 1.0
        parts = []
        for p in postings:
            if p.scores is None or p.scored_at != self._version:
                n = len(p.rows)
                idf = math.log((self._rows - n + 0.5) / (n + 0.5))
                idf = idf if idf > 0 else 1e-6
                norm = K1 * (1 - B + B * self._length[p.rows] / average)
                p.scores, p.scored_at = idf * p.tf * (K1 + 1) / (p.tf + norm), self._version
            parts.append(p.scores)
        if len(postings) == 1:
            return postings[0].rows, parts[0]
        # Summed in a dense array by row id (a term's rows are distinct; every score is positive, so the
        # rows holding a term are the nonzero entries): no sort of the matches. The array is all zero
        # between queries: only the entries a query touched are reset.
        total = self._total
        total[postings[0].rows] = parts[0]
        for p, part in zip(postings[1:], parts[1:], strict=True):
            total[p.rows] += part
        rows = np.flatnonzero(total != 0.0)  # a bool mask: flatnonzero on floats is slower
        scores = total[rows]
        total[rows] = 0.0
        return rows, scores

    def _live(self, term: str) -> _Postings | None:
        """The term's postings of current row generations, compacted into one chunk (None if none)."""
        chunks = self._postings.get(term)
        if chunks is None:
            return None
        merged = chunks[0]
        if len(chunks) == 1 and merged.checked_at == self._version:
            return merged
        if len(chunks) > 1:
            fields = ("rows", "tf", "gen")
            rows, tf, gen = (np.concatenate([getattr(c, f) for c in chunks]) for f in fields)
            merged = _Postings(rows, tf, gen)
        live = merged.gen == self._gen[merged.rows]
        if not live.all():
            merged = _Postings(merged.rows[live], merged.tf[live], merged.gen[live])
        if not len(merged.rows):
            del self._postings[term]
            return None
        merged.checked_at = self._version
        self._postings[term] = [merged]
        return merged


def _best(rows: np.ndarray, scores: np.ndarray, k: int) -> np.ndarray:
    """Positions of the ``k`` best rows, ordered by score, then newest (highest row id) first.

    Linear selection, then a sort of the ``k`` chosen: ties are common (similar short texts score
    alike), so the rows tied at the cut are chosen by id, not left to the partition's whim.
    """
    n = len(scores)
    if k < n:
        kth = np.partition(scores, n - k)[n - k]
        above = np.flatnonzero(scores > kth)
        tied = np.flatnonzero(scores == kth)
        need = k - len(above)
        if need < len(tied):
            tied = tied[np.argpartition(rows[tied], len(tied) - need)[len(tied) - need :]]
        chosen = np.concatenate([above, tied])
    else:
        chosen = np.arange(n)
    return chosen[np.lexsort((-rows[chosen], -scores[chosen]))]
