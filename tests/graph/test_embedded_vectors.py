"""The embedded store's vector matrices: the split product equals the plain one, ranking is exact."""

from __future__ import annotations

import numpy as np
import pytest

from epigraph.graph.embedded.vectors import PARALLEL_ROWS, VectorIndex, scored


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
