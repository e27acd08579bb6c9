"""The SVG drawing: deterministic layout, well-formed self-contained output, escaping."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from epigraph.present.draw import Edge, GraphDrawing, Node, layout

SVG = "{http://www.w3.org/2000/svg}"


def star(n: int = 6) -> GraphDrawing:
    nodes = (
        Node("c", "Center"),
        *(Node(f"n{i}", f"Node {i}", group="Person" if i % 2 else "") for i in range(n)),
    )
    edges = tuple(Edge("c", f"n{i}", "KNOWS", title=f"c knows {i}", retired=i == 0) for i in range(n))
    return GraphDrawing(nodes=nodes, edges=edges, center="c", title="star")


def test_layout_is_deterministic_and_in_the_unit_square() -> None:
    ids = ["a", "b", "c", "d"]
    edges = [("a", "b"), ("b", "c"), ("c", "d")]
    first = layout(ids, edges, center="b")
    assert first == layout(ids, edges, center="b")
    assert all(0.0 <= x <= 1.0 and 0.0 <= y <= 1.0 for x, y in first.values())
    assert len({(round(x, 3), round(y, 3)) for x, y in first.values()}) == 4  # no two nodes on one spot


def test_layout_edge_cases() -> None:
    assert layout([], []) == {}
    assert layout(["only"], [("only", "only")]) == {"only": (0.5, 0.5)}
    assert set(layout(["a", "b"], [("a", "zzz")])) == {"a", "b"}  # edges to unknown nodes are ignored


def test_svg_is_well_formed_and_self_contained() -> None:
    svg = star().to_svg()
    root = ET.fromstring(svg)
    assert root.tag == f"{SVG}svg"
    assert len(root.findall(f".//{SVG}g[@class='node']")) == 7
    legend = [t.text for t in root.findall(f".//{SVG}g[@class='legend']/{SVG}text")]
    assert legend == ["Person", "retired"]
    assert len(root.findall(f".//{SVG}g[@class='edge']")) == 6
    assert "stroke-dasharray" in svg  # the retired edge
    assert "<script" not in svg and "http" not in svg.replace("http://www.w3.org/2000/svg", "")


def test_text_is_escaped() -> None:
    drawing = GraphDrawing(
        nodes=(Node("x", '<b>&"evil"</b>'), Node("y", "y")), edges=(Edge("x", "y", "R<&>", title="a < b"),)
    )
    root = ET.fromstring(drawing.to_svg())  # parses: nothing leaked as markup
    texts = [t.text for t in root.iter(f"{SVG}text")]
    assert '<b>&"evil"</b>' in texts and "R<&>" in texts


def test_parallel_edges_and_self_loops_draw() -> None:
    drawing = GraphDrawing(
        nodes=(Node("a", "A"), Node("b", "B")),
        edges=(Edge("a", "b", "ONE"), Edge("a", "b", "TWO"), Edge("b", "a", "BACK"), Edge("a", "a", "SELF")),
    )
    root = ET.fromstring(drawing.to_svg())
    paths = [
        p.get("d")
        for p in root.iter(f"{SVG}path")
        if p.get("d", "").startswith("M") and "Q" in p.get("d", "")
    ]
    assert len(set(paths)) == 3  # three distinct curves between a and b


def test_empty_drawing() -> None:
    assert "nothing to draw" in GraphDrawing(nodes=(), edges=()).to_svg()


def test_save_svg_and_html(tmp_path: Path) -> None:
    drawing = star()
    svg = drawing.save(tmp_path / "g.svg")
    page = drawing.save(tmp_path / "g.html")
    ET.fromstring(svg.read_text())
    html = page.read_text()
    assert html.startswith("<!DOCTYPE html>") and "<svg" in html and "<script" not in html
    assert drawing._repr_svg_() == drawing.to_svg()
    with pytest.raises(ValueError):
        drawing.save(tmp_path / "g.png")
