"""The clustering rules (pure): the weighted fact graph, Louvain clusters, stable ids, incremental updates."""

from __future__ import annotations

import itertools

import networkx as nx

from epigraph.overview.clusters import detect, incremental, match, needs_rebuild, weighted_graph


def clique(names: str) -> list[tuple[str, str]]:
    return list(itertools.combinations(names, 2))


TWO_GROUPS = [*clique("abcd"), *clique("wxyz"), ("d", "w")]


def test_the_graph_counts_facts_per_pair_in_either_direction_and_skips_loops() -> None:
    graph = weighted_graph([("a", "b"), ("b", "a"), ("a", "b"), ("a", "a"), ("c", "b")])
    assert sorted(graph.nodes) == ["a", "b", "c"]
    assert graph["a"]["b"]["weight"] == 3 and graph["b"]["c"]["weight"] == 1


def test_two_dense_groups_joined_by_one_fact_are_two_clusters_whatever_the_fact_order() -> None:
    expected = [frozenset("abcd"), frozenset("wxyz")]
    assert detect(weighted_graph(TWO_GROUPS)) == expected
    assert detect(weighted_graph(reversed(TWO_GROUPS))) == expected
    assert detect(weighted_graph([(b, a) for a, b in TWO_GROUPS])) == expected


def test_clusters_below_the_minimum_size_are_left_out() -> None:
    edges = [*clique("abc"), ("x", "y")]
    assert detect(weighted_graph(edges)) == [frozenset("abc"), frozenset("xy")]
    assert detect(weighted_graph(edges), min_size=3) == [frozenset("abc")]
    assert detect(nx.Graph()) == []


def test_a_cluster_keeps_the_id_of_the_community_it_continues() -> None:
    old = {
        "grows": frozenset("abc"),
        "splits": frozenset("pqrstu"),
        "a": frozenset("jk"),
        "b": frozenset("lm"),
    }
    new = [frozenset("abcde"), frozenset("pqrs"), frozenset("tu"), frozenset("jklm"), frozenset("zz1")]
    taken = match(old, new)
    assert taken[0] == "grows"  # every old member is there
    assert taken[1] == "splits" and 2 not in taken  # the larger part continues it
    assert taken[3] in ("a", "b") and list(taken.values()).count(taken[3]) == 1  # a merge keeps one id
    assert 4 not in taken


def test_half_of_the_members_is_not_enough_to_continue() -> None:
    assert match({"c": frozenset("abcd")}, [frozenset("abxy")]) == {}
    assert match({"c": frozenset("abcd")}, [frozenset("abcx")]) == {0: "c"}


def test_new_entities_join_the_community_they_have_most_facts_with() -> None:
    old = {"left": frozenset("abcd"), "right": frozenset("wxyz")}
    # n1 has two facts with the right group, one with the left; n2 only knows n1; q-r know nothing clustered
    edges = [*TWO_GROUPS, ("n1", "w"), ("n1", "x"), ("n1", "a"), ("n2", "n1"), *clique(["q", "r", "s"])]
    update = incremental(weighted_graph(edges), old)
    assert update.clusters == [
        ("right", frozenset({"w", "x", "y", "z", "n1", "n2"})),
        ("left", frozenset("abcd")),
        (None, frozenset({"q", "r", "s"})),
    ]
    assert update.joined == 5


def test_members_that_fell_apart_or_left_are_dropped_and_small_ones_dissolve() -> None:
    old = {"broken": frozenset("abcdef"), "pair": frozenset("xy"), "kept": frozenset("pqr")}
    # a-b-c still hold together, d-e apart, f gone; y is gone, so "pair" falls below two members
    edges = [("a", "b"), ("b", "c"), ("d", "e"), ("x", "p"), *clique("pqr")]
    update = incremental(weighted_graph(edges), old)
    assert update.clusters == [
        ("kept", frozenset("pqrx")),  # x, left alone, joins the community it has a fact with
        ("broken", frozenset("abc")),
        (None, frozenset("de")),
    ]


def test_an_update_never_moves_the_members_it_keeps() -> None:
    """However Louvain would cluster the grown graph, kept members stay where they were."""
    old = {"one": frozenset("abcdw"), "two": frozenset("xyz")}
    update = incremental(weighted_graph([*TWO_GROUPS, ("n", "z")]), old)
    assert dict((u, m) for u, m in update.clusters if u) == {
        "one": frozenset("abcdw"),
        "two": frozenset("xyzn"),
    }


def test_much_change_asks_for_a_rebuild() -> None:
    old = {"left": frozenset("abcd"), "right": frozenset("wxyz")}
    assert needs_rebuild(weighted_graph(TWO_GROUPS), {}, 0.5)
    assert not needs_rebuild(weighted_graph([*TWO_GROUPS, ("n", "a")]), old, 0.5)
    grown = weighted_graph([*TWO_GROUPS, *((f"n{i}", "a") for i in range(5))])
    assert needs_rebuild(grown, old, 0.5)  # 5 new entities for 8 clustered
