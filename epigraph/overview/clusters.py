"""Clusters of entities from the facts between them: networkx's Louvain, stable ids, incremental updates.

Pure: no I/O, no model. The graph is undirected, one node per entity that some fact touches, an edge's
weight the number of facts between its two entities (either direction); a fact from an entity to itself
adds nothing. Everything is deterministic: nodes and edges are added in sorted order and Louvain runs
with a fixed seed, so the same facts give the same clusters.

- :func:`detect`: Louvain modularity clusters (``networkx.community.louvain_communities``), those of at
  least ``min_size`` entities. Why networkx: docs/decisions/2026-11-26-communities-and-conversations.md.
- :func:`match`: which new cluster continues which old community (keeps its id): the one holding most
  of the old community's members, when that is more than half of them; each old id is used once.
- :func:`incremental`: the update after some episodes. Louvain reshuffles distant clusters when a node
  is added (its node order comes from the seed), so an update does not re-run it over everything: members
  that are still in the graph stay where they were (a community whose members fell apart keeps its
  largest connected part), each entity in no community joins the community it has the most facts with,
  and the entities connected to no community are clustered among themselves. Only communities whose
  members changed need a new summary. When more of the graph changed than ``rebuild_share`` of the
  entities already clustered, the caller rebuilds instead (:func:`needs_rebuild`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import networkx as nx

SEED = 7
"""Louvain's seed: a fixed one, so a build is repeatable."""


def weighted_graph(edges: Iterable[tuple[str, str]]) -> nx.Graph:
    """The undirected graph of ``edges`` (one per fact), weighted by the number of facts per pair."""
    weights: dict[tuple[str, str], int] = {}
    for a, b in edges:
        if a != b:
            pair = (a, b) if a < b else (b, a)
            weights[pair] = weights.get(pair, 0) + 1
    graph = nx.Graph()
    graph.add_nodes_from(sorted({u for pair in weights for u in pair}))
    graph.add_weighted_edges_from((a, b, w) for (a, b), w in sorted(weights.items()))
    return graph


def detect(graph: nx.Graph, *, min_size: int = 2, resolution: float = 1.0) -> list[frozenset[str]]:
    """Louvain clusters of ``graph`` with at least ``min_size`` entities, largest first (ties by their
    smallest uuid)."""
    if graph.number_of_nodes() == 0:
        return []
    found = nx.community.louvain_communities(graph, weight="weight", resolution=resolution, seed=SEED)
    return _ordered(frozenset(c) for c in found if len(c) >= min_size)


def _ordered(clusters: Iterable[frozenset[str]]) -> list[frozenset[str]]:
    return sorted(clusters, key=lambda c: (-len(c), min(c)))


def match(old: Mapping[str, frozenset[str]], new: Sequence[frozenset[str]]) -> dict[int, str]:
    """For each new cluster (by index) that continues an old community, that community's id.

    A cluster continues a community when it holds more than half of the community's members; the pairs
    are taken best first (most shared members, then the larger share of the cluster, then the id), each
    old id and each cluster at most once.
    """
    candidates = []
    for index, cluster in enumerate(new):
        for uuid, members in old.items():
            shared = len(cluster & members)
            if members and 2 * shared > len(members):
                candidates.append((-shared, -shared / len(cluster | members), uuid, index))
    taken: dict[int, str] = {}
    used: set[str] = set()
    for _, _, uuid, index in sorted(candidates):
        if index not in taken and uuid not in used:
            taken[index] = uuid
            used.add(uuid)
    return taken


@dataclass(frozen=True, slots=True)
class Update:
    """The communities after an incremental update: ``(id or None for a new one, members)``."""

    clusters: list[tuple[str | None, frozenset[str]]]
    joined: int
    """Entities that were in no community and joined one (or formed a new one)."""


def needs_rebuild(graph: nx.Graph, old: Mapping[str, frozenset[str]], rebuild_share: float) -> bool:
    """Whether an update should rebuild: no community yet, or the entities added to and gone from the
    graph since (those in no community, members no longer in it) are more than ``rebuild_share`` of the
    entities that are in a community."""
    clustered = set().union(*old.values()) if old else set()
    if not clustered:
        return True
    nodes = set(graph.nodes)
    changed = len(nodes - clustered) + len(clustered - nodes)
    return changed > rebuild_share * len(clustered)


def incremental(
    graph: nx.Graph, old: Mapping[str, frozenset[str]], *, min_size: int = 2, resolution: float = 1.0
) -> Update:
    """The communities ``old`` brought up to date with ``graph`` (see the module docstring)."""
    kept: dict[str, set[str]] = {}
    for uuid in sorted(old):
        present = old[uuid] & set(graph.nodes)
        parts = _ordered(frozenset(p) for p in nx.connected_components(graph.subgraph(present)))
        if parts and len(parts[0]) >= min_size:  # else it dissolves: its members are free to join others
            kept[uuid] = set(parts[0])
    owner = {member: uuid for uuid, members in kept.items() for member in members}
    loose = sorted(set(graph.nodes) - set(owner))
    joined = _join_by_weight(graph, loose, kept, owner)
    rest = graph.subgraph(sorted(set(loose) - joined))
    new = detect(nx.Graph(rest), min_size=min_size, resolution=resolution)
    clusters: list[tuple[str | None, frozenset[str]]] = [
        (uuid, frozenset(members)) for uuid, members in kept.items()
    ]
    clusters += [(None, cluster) for cluster in new]
    clusters.sort(key=lambda pair: (-len(pair[1]), min(pair[1])))
    return Update(clusters, len(joined) + sum(len(c) for c in new))


def _join_by_weight(
    graph: nx.Graph, loose: list[str], kept: dict[str, set[str]], owner: dict[str, str]
) -> set[str]:
    """Each loose entity joins the community it has the most facts with (ties: the smaller id), in passes
    until nothing moves, so an entity linked only through another new one follows it."""
    joined: set[str] = set()
    moved = True
    while moved:
        moved = False
        for node in loose:
            if node in owner:
                continue
            weights: dict[str, float] = {}
            for neighbour, data in graph[node].items():
                if neighbour in owner:
                    uuid = owner[neighbour]
                    weights[uuid] = weights.get(uuid, 0.0) + float(data.get("weight", 1))
            if weights:
                best = min(weights, key=lambda u: (-weights[u], u))
                kept[best].add(node)
                owner[node] = best
                joined.add(node)
                moved = True
    return joined
