"""The pure ranking functions: exact examples plus hypothesis properties."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from epigraph.search.fusion import (
    Normalization,
    dedupe,
    mmr,
    normalize,
    rerank_by_distance,
    rerank_by_mentions,
    rrf,
    score_fusion,
)

KEYS = st.sampled_from([f"d{i}" for i in range(12)])
RANKED = st.lists(KEYS, max_size=10, unique=True)
LISTS = st.lists(RANKED, min_size=1, max_size=5)
SCORES = st.floats(min_value=-50, max_value=50, allow_nan=False, allow_infinity=False)
SCORED = st.lists(st.tuples(KEYS, SCORES), max_size=10, unique_by=lambda t: t[0]).map(
    lambda xs: sorted(xs, key=lambda t: -t[1])
)


# --- RRF ------------------------------------------------------------------------------------------------


def test_rrf_textbook_example() -> None:
    fused = dict(rrf([["a", "b", "c"], ["b", "a"]], k=60))
    assert fused["a"] == pytest.approx(1 / 61 + 1 / 62)
    assert fused["b"] == pytest.approx(1 / 62 + 1 / 61)
    assert fused["c"] == pytest.approx(1 / 63)


def test_rrf_ties_break_by_best_rank_then_key() -> None:
    # a and b have equal scores; both have best rank 1: the key decides, whatever the list order
    assert [k for k, _ in rrf([["a", "b"], ["b", "a"]])] == ["a", "b"]
    assert [k for k, _ in rrf([["b", "a"], ["a", "b"]])] == ["a", "b"]


def test_rrf_small_k_rewards_the_top() -> None:
    lists = [["x", "m", "y"], ["y", "m", "x"], ["m", "z", "w"]]
    assert rrf(lists, k=60)[0][0] == "m"  # consistent middle wins with a flat curve
    assert rrf(lists, k=0)[0][0] == "m"  # 1 + 1/2 + 1/2 vs 1 + 1/3
    assert rrf([["x", "m"], ["y", "m"]], k=0)[0][0] in ("x", "y")  # 1 > 1/2 + 1/2? no: equal -> rank


def test_rrf_repeated_key_counts_once_at_its_best_rank() -> None:
    assert dict(rrf([["a", "b", "a"]], k=0)) == {"a": 1.0, "b": 0.5}


def test_rrf_weights() -> None:
    fused = rrf([["a"], ["b"]], k=0, weights=[1.0, 2.0])
    assert fused == [("b", 2.0), ("a", 1.0)]
    with pytest.raises(ValueError):
        rrf([["a"]], weights=[1.0, 2.0])
    with pytest.raises(ValueError):
        rrf([["a"]], weights=[-1.0])
    with pytest.raises(ValueError):
        rrf([["a"]], k=-1)


def test_rrf_empty() -> None:
    assert rrf([]) == []
    assert rrf([[], []]) == []


@given(LISTS, st.randoms(use_true_random=False), st.floats(min_value=0, max_value=100))
def test_rrf_is_invariant_to_the_order_of_the_lists(lists: list[list[str]], rnd: object, k: float) -> None:
    shuffled = list(lists)
    rnd.shuffle(shuffled)  # type: ignore[attr-defined]
    assert rrf(lists, k=k) == rrf(shuffled, k=k)


@given(LISTS, st.floats(min_value=0, max_value=100))
def test_rrf_first_everywhere_stays_first(lists: list[list[str]], k: float) -> None:
    lists = [["top", *[x for x in ranked if x != "top"]] for ranked in lists]
    assert rrf(lists, k=k)[0][0] == "top"


@given(LISTS, st.floats(min_value=0, max_value=100))
def test_rrf_returns_each_key_once_sorted_by_score(lists: list[list[str]], k: float) -> None:
    fused = rrf(lists, k=k)
    keys = [key for key, _ in fused]
    assert len(keys) == len(set(keys)) == len({x for ranked in lists for x in ranked})
    scores = [s for _, s in fused]
    assert scores == sorted(scores, reverse=True)
    assert all(s > 0 for s in scores)


@given(LISTS, st.floats(min_value=0, max_value=100))
def test_rrf_more_lists_never_lower_a_score(lists: list[list[str]], k: float) -> None:
    base = dict(rrf(lists[:-1], k=k))
    more = dict(rrf(lists, k=k))
    assert all(more[key] >= score for key, score in base.items())


@given(RANKED, st.floats(min_value=0, max_value=100))
def test_rrf_of_one_list_keeps_its_order(ranked: list[str], k: float) -> None:
    assert [key for key, _ in rrf([ranked], k=k)] == ranked


# --- normalization and score fusion -------------------------------------------------------------------


def test_normalize_methods() -> None:
    assert normalize([3.0, 2.0, 1.0], "minmax") == [1.0, 0.5, 0.0]
    assert normalize([4.0, 2.0, 1.0], Normalization.MAX) == [1.0, 0.5, 0.25]
    z = normalize([3.0, 2.0, 1.0], "zscore")
    assert z[1] == pytest.approx(0.0) and z[0] == pytest.approx(-z[2])
    d = normalize([3.0, 2.0, 1.0], "dbsf")
    assert all(0 <= v <= 1 for v in d) and d[0] > d[1] > d[2]
    assert normalize([], "minmax") == []


def test_normalize_constant_scores() -> None:
    assert normalize([2.0, 2.0], "minmax") == [1.0, 1.0]
    assert normalize([2.0, 2.0], "zscore") == [0.0, 0.0]
    assert normalize([2.0, 2.0], "dbsf") == [1.0, 1.0]
    assert normalize([-1.0, -2.0], "max") == [1.0, 0.0]


@pytest.mark.filterwarnings("error::RuntimeWarning")
def test_max_normalization_of_a_tiny_max_beside_large_negatives_is_quiet() -> None:
    """The division overflows for the negatives; they clip to 0 without a numpy warning."""
    assert normalize([5e-324, -1e300, 0.0], "max") == [1.0, 0.0, 0.0]


def test_normalize_rejects_non_finite_and_unknown() -> None:
    with pytest.raises(ValueError):
        normalize([1.0, math.nan])
    with pytest.raises(ValueError):
        normalize([1.0], "softmax")


@given(st.lists(SCORES, min_size=1, max_size=20), st.sampled_from(list(Normalization)))
def test_normalize_keeps_the_order(scores: list[float], method: Normalization) -> None:
    out = normalize(scores, method)
    assert len(out) == len(scores)
    for i in range(len(scores)):
        for j in range(len(scores)):
            if scores[i] > scores[j] and method is not Normalization.MAX:
                assert out[i] >= out[j]


@given(st.lists(SCORES, min_size=1, max_size=20))
def test_minmax_is_in_unit_interval(scores: list[float]) -> None:
    out = normalize(scores, "minmax")
    assert all(0.0 <= v <= 1.0 for v in out) and max(out) == 1.0


def test_score_fusion_example() -> None:
    bm25 = [("a", 10.0), ("b", 5.0), ("c", 0.0)]
    cosine = [("c", 0.9), ("a", 0.5), ("d", 0.1)]
    fused = dict(score_fusion([bm25, cosine], weights=[0.5, 0.5]))
    assert fused["a"] == pytest.approx(0.5 * 1.0 + 0.5 * 0.5)
    assert fused["b"] == pytest.approx(0.5 * 0.5 + 0.0)  # missing from cosine: that list's floor (0)
    assert fused["c"] == pytest.approx(0.0 + 0.5 * 1.0)
    assert fused["d"] == pytest.approx(0.0 + 0.0)
    assert [k for k, _ in score_fusion([bm25, cosine], weights=[0.5, 0.5])] == ["a", "c", "b", "d"]


def test_score_fusion_weight_zero_ignores_a_list() -> None:
    fused = score_fusion([[("a", 1.0), ("b", 0.0)], [("b", 1.0), ("a", 0.0)]], weights=[1.0, 0.0])
    assert [k for k, _ in fused] == ["a", "b"]


def test_score_fusion_zscore_missing_gets_the_list_floor() -> None:
    fused = dict(score_fusion([[("a", 3.0), ("b", 2.0), ("c", 1.0)], [("d", 1.0)]], method="zscore"))
    assert fused["d"] == pytest.approx(min(normalize([3.0, 2.0, 1.0], "zscore")) + 0.0)


@given(
    st.lists(SCORED, min_size=1, max_size=4),
    st.randoms(use_true_random=False),
    st.sampled_from(list(Normalization)),
)
def test_score_fusion_is_invariant_to_the_order_of_the_lists(
    lists: list[list[tuple[str, float]]], rnd: object, method: Normalization
) -> None:
    shuffled = list(lists)
    rnd.shuffle(shuffled)  # type: ignore[attr-defined]
    assert score_fusion(lists, method=method) == score_fusion(shuffled, method=method)


@given(st.lists(SCORED, min_size=1, max_size=4), st.sampled_from(list(Normalization)))
def test_score_fusion_top_scorer_everywhere_stays_first(
    lists: list[list[tuple[str, float]]], method: Normalization
) -> None:
    lists = [[("top", 1000.0), *[x for x in ranked if x[0] != "top"]] for ranked in lists]
    assume(all(len(ranked) > 1 and ranked[1][1] < 1000.0 for ranked in lists))
    assert score_fusion(lists, method=method)[0][0] == "top"


# --- MMR ------------------------------------------------------------------------------------------------


def _unit(*xs: float) -> list[float]:
    v = np.asarray(xs, dtype=float)
    return list(v / np.linalg.norm(v))


def test_mmr_lambda_one_is_a_relevance_sort() -> None:
    vectors = [_unit(1, 0), _unit(1, 0.01), _unit(0, 1)]
    out = mmr(["a", "b", "c"], vectors, _unit(1, 0), lambda_=1.0)
    assert [k for k, _ in out] == ["a", "b", "c"]


def test_mmr_prefers_diversity_below_one() -> None:
    vectors = [_unit(1, 0), _unit(1, 0.01), _unit(0, 1)]
    keys = ["a", "a-duplicate", "other"]
    relevance = [1.0, 0.95, 0.5]
    assert [k for k, _ in mmr(keys, vectors, _unit(1, 0), lambda_=1.0, relevance=relevance)] == keys
    out = mmr(keys, vectors, _unit(1, 0), lambda_=0.5, relevance=relevance)
    assert [k for k, _ in out] == ["a", "other", "a-duplicate"]


def test_mmr_with_given_relevance_and_limit() -> None:
    vectors = [_unit(1, 0), _unit(0, 1), _unit(1, 1)]
    out = mmr(["x", "y", "z"], vectors, _unit(1, 0), lambda_=1.0, relevance=[0.1, 0.9, 0.5], limit=2)
    assert [k for k, _ in out] == ["y", "z"]


def test_mmr_validates() -> None:
    with pytest.raises(ValueError):
        mmr(["a"], [[1.0]], [1.0], lambda_=1.5)
    with pytest.raises(ValueError):
        mmr(["a", "a"], [[1.0], [1.0]], [1.0])
    with pytest.raises(ValueError):
        mmr(["a", "b"], [[1.0], [1.0]], [1.0], relevance=[1.0])
    assert mmr([], np.zeros((0, 3)), [1.0, 0, 0]) == []


@settings(max_examples=60)
@given(
    st.integers(min_value=1, max_value=8),
    st.integers(min_value=0, max_value=2**31 - 1),
    st.floats(min_value=0, max_value=1),
    st.integers(min_value=0, max_value=10),
)
def test_mmr_returns_a_prefix_of_a_permutation(n: int, seed: int, lam: float, limit: int) -> None:
    rng = np.random.default_rng(seed)
    vectors = rng.normal(size=(n, 4))
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    keys = [f"k{i}" for i in range(n)]
    relevance = list(rng.random(n))
    out = mmr(keys, vectors, vectors[0], lambda_=lam, limit=limit, relevance=relevance)
    picked = [k for k, _ in out]
    assert len(picked) == min(limit, n) and len(set(picked)) == len(picked)
    if picked and lam > 1e-9:  # the first pick is the most relevant (lambda * rel must not underflow)
        assert picked[0] == keys[int(np.argmax(relevance))]


# --- node distance and mentions ------------------------------------------------------------------------


def test_rerank_by_distance_closest_first_unknown_last() -> None:
    out = rerank_by_distance(["far", "unknown", "near", "center"], {"far": 3, "near": 1, "center": 0})
    assert [k for k, _ in out] == ["center", "near", "far", "unknown"]
    assert dict(out) == {"center": 1.0, "near": 0.5, "far": 0.25, "unknown": 0.0}


def test_rerank_by_distance_ties_keep_input_order() -> None:
    assert [k for k, _ in rerank_by_distance(["b", "a", "c"], {"a": 1, "b": 1, "c": 1})] == ["b", "a", "c"]


def test_rerank_by_mentions_is_descending() -> None:
    out = rerank_by_mentions(["rare", "often", "never", "some"], {"rare": 1, "often": 9, "some": 3})
    assert [k for k, _ in out] == ["often", "some", "rare", "never"]
    assert out[0] == ("often", 9.0)


@given(st.lists(KEYS, unique=True), st.dictionaries(KEYS, st.integers(0, 50)))
def test_rerank_by_mentions_properties(keys: list[str], counts: dict[str, int]) -> None:
    out = rerank_by_mentions(keys, counts)
    assert sorted(k for k, _ in out) == sorted(keys)
    values = [s for _, s in out]
    assert values == sorted(values, reverse=True)
    # stable: equal counts keep the input order
    for (a, sa), (b, sb) in itertools.pairwise(out):
        if sa == sb:
            assert keys.index(a) < keys.index(b)


@given(st.lists(KEYS, unique=True), st.dictionaries(KEYS, st.integers(0, 5)))
def test_rerank_by_distance_properties(keys: list[str], distance: dict[str, int]) -> None:
    out = rerank_by_distance(keys, distance)
    assert sorted(k for k, _ in out) == sorted(keys)
    values = [s for _, s in out]
    assert values == sorted(values, reverse=True)


def test_dedupe_keeps_first() -> None:
    assert dedupe([("a", 3.0), ("b", 2.0), ("a", 1.0)]) == [("a", 3.0), ("b", 2.0)]
