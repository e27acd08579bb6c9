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
