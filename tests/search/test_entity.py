"""entity_view(), closest names and an entity's neighbourhood (``explore.gather.entity_graph``, what
``kg.subgraph`` shows), on the small graph of tests/support/search_graph.py."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from rich.console import Console

from epigraph.errors import EntityNotFound
from epigraph.explore import GraphView
from epigraph.explore.gather import entity_graph
from epigraph.search import closest_names, entity_view
from tests.support.search_graph import Graph, t


async def test_entity_view_current_history_and_episodes(graph: Graph) -> None:
    view = await entity_view(graph.store, "g", "Alice")
    assert view.entity.uuid == graph.e("alice").uuid
    assert view.summary == "Alice is a person." and view.aliases == ["Ali"]
    assert {f.uuid for f in view.current} == {graph.f(k).uuid for k in ("rome", "works", "knows")}
    history = {r.fact.uuid: r for r in view.history}
    assert set(history) == {graph.f("paris").uuid, graph.f("berlin").uuid}
    paris = history[graph.f("paris").uuid]
    assert paris.retired_at == t(2021, 2) and paris.ended_at == t(2021)
    assert paris.by_fact is not None and paris.by_fact.uuid == graph.f("berlin").uuid
    assert paris.by_episode is not None and paris.by_episode.uuid == graph.episodes["e-berlin"].uuid
    berlin = history[graph.f("berlin").uuid]
    assert berlin.by_fact is not None and berlin.by_fact.uuid == graph.f("rome").uuid
    assert view.mentions == 5 and len(view.episodes) == 5
    assert view.episodes[0].uuid == graph.episodes["e-rome"].uuid  # newest first
    assert {e.name for e in view.neighbours.values()} >= {"Rome", "Paris", "Berlin", "Acme", "Bob"}


async def test_entity_view_by_alias_and_uuid(graph: Graph) -> None:
    by_alias = await entity_view(graph.store, "g", "ali")
    by_uuid = await entity_view(graph.store, "g", graph.e("alice").uuid)
    assert by_alias.entity.uuid == by_uuid.entity.uuid == graph.e("alice").uuid


async def test_entity_view_is_scoped_by_group(graph: Graph) -> None:
    other = await entity_view(graph.store, "other", "Alice")
    assert other.entity.uuid == graph.e("o_alice").uuid
    assert [f.uuid for f in other.current] == [graph.f("o_paris").uuid] and not other.history


async def test_unknown_entity_lists_the_closest_names(graph: Graph) -> None:
    with pytest.raises(EntityNotFound) as info:
        await entity_view(graph.store, "g", "Alise", embedder=graph.embedder)
    assert info.value.closest[0] == "Alice"
    assert "closest names: Alice" in str(info.value)
    with pytest.raises(EntityNotFound) as info:
        await entity_view(graph.store, "g", "Carol Smith")  # fulltext alone
    assert info.value.closest[0] == "Carol"
    with pytest.raises(EntityNotFound) as info:
        await entity_view(graph.store, "g", "zzz")
    assert info.value.closest == []


async def test_closest_names_never_cross_groups(graph: Graph) -> None:
    names = await closest_names(graph.store, ["other"], "Alise", graph.embedder)
    assert names and names[0] == "Alice" and set(names) <= {"Alice", "Paris"}


async def test_entity_view_exports(graph: Graph) -> None:
    view = await entity_view(graph.store, "g", "Alice")
    data = json.loads(view.to_json())
    assert data["entity"]["name"] == "Alice" and "name_embedding" not in data["entity"]
    assert {h["target_name"] for h in data["history"]} == {"Paris", "Berlin"}
    assert data["history"][0]["by_fact"] is not None and data["history"][0]["by_episode"] is not None
    console = Console(record=True, width=200)
    console.print(view)
    text = console.export_text()
    assert "Current facts" in text and "History" in text and "Alice lives in Rome." in text
    html = view._repr_html_()
    assert "<table" in html and "Alice lives in Paris." in html
    frame = view.to_pandas()
    assert frame["current"].sum() == 3 and len(frame) == 5
    nxg = view.to_networkx()
    assert nxg.number_of_edges() == 5 and nxg.nodes[graph.e("rome").uuid]["name"] == "Rome"


async def test_entity_view_draws(graph: Graph, tmp_path: Path) -> None:
    view = await entity_view(graph.store, "g", "Alice")
    drawing = view.draw()
    assert drawing.center == graph.e("alice").uuid and len(drawing.edges) == 5
    assert sum(e.retired for e in drawing.edges) == 2
    ET.fromstring(drawing.save(tmp_path / "alice.svg").read_text())
    assert "<svg" in drawing.save(tmp_path / "alice.html").read_text()
    assert len(view.draw(include_retired=False).edges) == 3


async def test_entity_graph_two_hops(graph: Graph) -> None:
    def names(view: GraphView) -> set[str]:
        drawn = [f for f in view.facts if f.uuid in view.shown]
        return {view.entities[u].name for f in drawn for u in (f.source_uuid, f.target_uuid)}

    one = await entity_graph(graph.store, "g", "Carol", around=0)
    assert names(one) == {"Carol", "Bob"}
    two = await entity_graph(graph.store, "g", "Carol", depth=2, around=0)
    assert names(two) == {"Carol", "Bob", "Alice", "Globex", "Berlin"}
    assert two.focus == (graph.e("carol").uuid,) and not two.show_retired
    everything = await entity_graph(graph.store, "g", "Alice", include_retired=True, around=0)
    assert everything.show_retired
    assert sum(e.retired for e in everything.drawing().edges) == 2
    ET.fromstring(everything.to_svg())
    with pytest.raises(EntityNotFound):
        await entity_graph(graph.store, "g", "Nobody")
