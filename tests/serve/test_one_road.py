"""One road from a transport to the graph: the HTTP routes and the MCP tools reach the graph only through
the service layer (``serve/service.py``, ``serve/editing.py``), which applies the priority rules (reads
someone waits on go first). Checked by reading the transports' source, as ``tests/test_layers.py`` does."""

from __future__ import annotations

import ast
from pathlib import Path

import epigraph

PACKAGE = Path(epigraph.__file__).parent
SERVE = PACKAGE / "serve"
TRANSPORTS = sorted([*SERVE.glob("routes_*.py"), SERVE / "mcp.py", SERVE / "app.py"])
GRAPH_NAMES = {"kg", "store"}
"""What a transport never touches: the graph (``state.kg``, a local ``kg``) or its store."""


def reaches_the_graph(source: str) -> list[str]:
    """Where ``source`` touches the graph or its store other than by passing it on: ``x.kg``, ``x.store``,
    ``kg.anything``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr in GRAPH_NAMES:
            found.append(f"line {node.lineno}: .{node.attr}")
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "kg":
            found.append(f"line {node.lineno}: kg.{node.attr}")
    return sorted(found, key=lambda where: int(where.split(":")[0].removeprefix("line ")))


def test_the_transports_are_found() -> None:
    names = {p.name for p in TRANSPORTS}
    assert {"mcp.py", "app.py", "routes_read.py", "routes_ask.py", "routes_explore.py"} <= names


def test_routes_and_tools_reach_the_graph_only_through_the_service_layer() -> None:
    touching = {p.name: found for p in TRANSPORTS if (found := reaches_the_graph(p.read_text("utf-8")))}
    assert touching == {}


def test_the_checker_sees_a_route_that_goes_around_the_service() -> None:
    around = (
        "async def stats(request, group_id):\n"
        "    state = state_of(request)\n"
        "    counts = await state.kg.stats(group_id=group_id)\n"
        "    return await state.kg.store.episodes(group_id)\n"
        "async def page(kg):\n"
        "    return kg.group_id\n"
    )
    assert reaches_the_graph(around) == [
        "line 3: .kg",
        "line 4: .store",
        "line 4: .kg",
        "line 6: kg.group_id",
    ]
    assert (
        reaches_the_graph("async def ok(request):\n    return await service.stats(state_of(request), 'g')\n")
        == []
    )


def test_no_unnamed_limit_for_every_record() -> None:
    """A read of "all of them" names its bound (``ingestion.runner.ALL``); no literal ``limit=1_000_000``."""
    literal = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.keyword) and node.arg == "limit" and isinstance(node.value, ast.Constant):
                if isinstance(node.value.value, int) and node.value.value >= 100_000:
                    literal.append(f"{path.relative_to(PACKAGE)}:{node.value.lineno}")
    assert literal == []
