"""The embedded store's vector matrices: the split product equals the plain one, ranking is exact."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from epigraph.graph.embedded import EmbeddedStore
from epigraph.graph.embedded.vectors import (
    PARALLEL_ROWS,
    UNBOUNDED,
    VectorIndex,
    normalized,
    normalized_rows,
    scored,
)
from tests.support.ann_world import clustered, top, write_facts
from tests.support.stores import DIM


@pytest.mark.parametrize("rows", [0, 1, PARALLEL_ROWS - 1, 2 * PARALLEL_ROWS + 7, 5 * PARALLEL_ROWS + 3])
def test_the_split_product_equals_the_plain_one(rows: int) -> None:
    rng = np.random.default_rng(rows)
    matrix = rng.standard_normal((rows, 16)).astype(np.float32)
    query = rng.standard_normal(16).astype(np.float32)
    np.testing.assert_array_equal(scored(matrix, query, 0)[0], np.einsum("ij,j->i", matrix, query))


@pytest.mark.parametrize(
    ("rows", "first"),
    [(0, 5), (3, 5), (3, 0), (PARALLEL_ROWS - 1, 40), (2 * PARALLEL_ROWS + 7, 40), (2 * PARALLEL_ROWS + 7, 0),
     (5 * PARALLEL_ROWS + 3, 25_000), (2 * PARALLEL_ROWS, 2 * PARALLEL_ROWS + 1)],
)  # fmt: skip
def test_the_best_rows_picked_per_slice_are_the_best_overall(rows: int, first: int) -> None:
    """Each slice picks its own best rows; merged, they are exactly the best ``first`` of the whole
    product (a ``first`` bigger than a slice, or than the matrix, yields every row)."""
    rng = np.random.default_rng(rows + first)
    matrix = rng.standard_normal((rows, 16)).astype(np.float32)
    query = rng.standard_normal(16).astype(np.float32)
    scores, top = scored(matrix, query, first)
    expected = np.einsum("ij,j->i", matrix, query)
    np.testing.assert_array_equal(scores, expected)
    assert len(top) == len(set(top.tolist())) == min(first, rows)
    assert sorted(expected[top].tolist(), reverse=True) == sorted(expected.tolist(), reverse=True)[: len(top)]


def test_a_large_index_ranks_exactly_like_brute_force() -> None:
    """Big enough for the split product: the top 10 are the float64 brute-force top 10."""
    rng = np.random.default_rng(7)
    data = rng.standard_normal((2 * PARALLEL_ROWS + 11, 8))
    index = VectorIndex(8)
    for i, row in enumerate(data):
        index.upsert(f"k{i:06d}", row)
    query = rng.standard_normal(8)
    best = next(index.ranked(query, first=10))
    unit = data / np.linalg.norm(data, axis=1, keepdims=True)
    truth = np.argsort(-(unit @ (query / np.linalg.norm(query))))[:10]
    assert [key for key, _ in best] == [f"k{i:06d}" for i in truth]


@pytest.mark.parametrize("rows", [40, 2 * PARALLEL_ROWS + 11])
def test_a_search_bounded_in_time_ranks_exactly_the_rows_within_the_bounds(rows: int) -> None:
    """``latest`` leaves out every row that began, or was recorded, after its bound (facts not begun or
    not known yet), keeps unbounded ones, and ranks the rest exactly as brute force over them alone; the
    first block is already theirs."""
    rng = np.random.default_rng(rows)
    data = rng.standard_normal((rows, 8))
    starts, recorded = rng.integers(0, 1000, size=rows), rng.integers(0, 1000, size=rows)
    index = VectorIndex(8)
    for i, v in enumerate(data):
        index.upsert(f"k{i}", v, (None if i % 7 == 0 else int(starts[i]), int(recorded[i])))
    query = rng.standard_normal(8)
    cos = data @ query / (np.linalg.norm(data, axis=1) * np.linalg.norm(query))
    for begun_by, known_by in [(-1, None), (10, None), (500, None), (None, 300), (700, 600), (None, -1)]:
        allowed = [
            i
            for i in range(rows)
            if (begun_by is None or i % 7 == 0 or starts[i] <= begun_by)
            and (known_by is None or recorded[i] <= known_by)
        ]
        expected = [f"k{i}" for i in sorted(allowed, key=lambda i: -cos[i])]
        blocks = list(index.ranked(query, 5, latest=(begun_by, known_by)))
        keys = [key for block in blocks for key, _ in block]
        scores = [score for block in blocks for _, score in block]
        assert sorted(keys) == sorted(expected) and len(keys) == len(set(keys))
        assert scores == sorted(scores, reverse=True)  # best first (float32: far-down near-ties may swap)
        assert keys[:20] == expected[:20]
        assert [key for key, _ in (blocks[0] if blocks else [])] == expected[:5]
    assert sum(len(b) for b in index.ranked(query, 5)) == rows  # without bounds: every row


def test_times_follow_their_row_through_removal_and_update() -> None:
    index = VectorIndex(2)
    index.upsert("early", np.array([1.0, 0.0]), (10, 10))
    index.upsert("late", np.array([0.9, 0.1]), (90, 20))
    index.upsert("open", np.array([0.0, 1.0]), (None, 30))
    index.remove("early")  # "open" moves into its row and keeps its own times

    def within(begun_by: int | None, known_by: int | None) -> list[str]:
        ranked = index.ranked(np.array([1.0, 0.0]), 1, latest=(begun_by, known_by))
        return [key for block in ranked for key, _ in block]

    assert within(50, None) == ["open"]
    assert within(None, 25) == ["late"]
    index.upsert("late", np.array([0.9, 0.1]), (40, 35))  # its valid_at moved earlier, recorded later
    assert within(50, None) == ["late", "open"]
    assert within(None, 32) == ["open"]


@pytest.mark.parametrize("rows", [1, 7, 1000, 70_000])
def test_a_vector_normalized_alone_and_among_others_is_the_same_bytes(rows: int) -> None:
    """A group's first load normalizes its rows at once, a write one at a time: a saved index compares
    their fingerprints (ann_file), so each row's bits must not depend on the rows beside it."""
    rng = np.random.default_rng(rows)
    matrix = rng.standard_normal((rows, 384)).astype(np.float32)
    matrix[0] = 0  # a zero row stays zero
    together = normalized_rows(matrix)
    for i in rng.integers(0, rows, 40).tolist():
        assert normalized(matrix[i]).tobytes() == together[i].tobytes()
    assert not together[0].any()
    np.testing.assert_allclose(np.linalg.norm(together[1:], axis=1), 1, rtol=1e-6)


def test_rows_added_at_once_are_the_rows_upserted_one_by_one() -> None:
    rng = np.random.default_rng(8)
    data = rng.standard_normal((300, 8)).astype(np.float32)
    times = np.stack([np.arange(300), np.arange(300) * 2]).T.astype(np.int64)
    times[5] = UNBOUNDED
    keys = [f"k{i:03d}" for i in range(300)]
    one_by_one, at_once = VectorIndex(8, exact_below=None), VectorIndex(8, exact_below=None)
    for key, row, (begins, recorded) in zip(keys, data, times.tolist(), strict=True):
        known = (None if begins == UNBOUNDED else begins, None if recorded == UNBOUNDED else recorded)
        one_by_one.upsert(key, row, known)
    at_once.extend(keys[:200], data[:200], times[:200])
    at_once.extend(keys[150:], data[150:] * 2, times[150:])  # 50 here already: one by one; x2 keeps the bits
    query = rng.standard_normal(8)
    for latest in [(None, None), (120, None), (None, 90)]:
        assert next(at_once.ranked(query, 300, latest)) == next(one_by_one.ranked(query, 300, latest))
    assert len(at_once) == 300


async def test_a_small_group_and_a_large_one_load_every_vector(tmp_path: Path) -> None:
    """A group with a good share of the table is read by a scan of it, a small one through its index
    (db.SCAN_SHARE): both give each fact's own vector."""
    store = EmbeddedStore(str(tmp_path / "graph.db"), exact_below=None)
    await store.setup(embedding_dim=DIM)
    rng = np.random.default_rng(9)
    groups = {"small": clustered(rng, 10, DIM), "large": clustered(rng, 100, DIM)}
    try:
        for group, vectors in groups.items():
            await write_facts(store, group, vectors)
        for group, vectors in groups.items():
            found = [(await top(store, group, v))[0] for v in vectors]
            assert found == [f"fact {k}" for k in range(len(vectors))]
    finally:
        await store.close()
