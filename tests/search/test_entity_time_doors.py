"""Issue 63, item 1, through every door on both stores: as of 2023-06-01 (Dana at Acme said in 2023,
"left Acme and joined Initech" in 2024), a search and the entity view show no entity, alias, summary or
count from after it, and say so where a summary is held back; known at 2020, nothing at all. The doors:
the Python API, the command line (JSON and the terminal's tables), HTTP and MCP (the served page:
``tests/explore/test_entity_time_page.py``)."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from mcp import Client

from epigraph import KnowledgeGraph
from epigraph.cli.app import main
from epigraph.config import Settings
from epigraph.errors import EntityNotFound
from epigraph.graph.store import GraphStore
from epigraph.serve import Keys, Limits, create_app
from epigraph.serve.intake import GroupRegistry, Intake
from epigraph.serve.mcp import build_server
from epigraph.serve.service import ServerState
from epigraph.testing import HashEmbedder
from tests.support.dana import ASKED, DANA_SUMMARY, Dana, write_dana
from tests.support.doors import http_json
from tests.support.stores import DIM, second_store

WHEN = ASKED.date().isoformat()
QUERY = "Dana Acme Initech"


@dataclass
class Built:
    kg: KnowledgeGraph
    world: Dana


@pytest.fixture
async def built(store: GraphStore) -> Built:
    group = f"dana-{os.urandom(4).hex()}"
    world = await write_dana(store, group)
    kg = KnowledgeGraph(Settings(db_path=":memory:", embedder="hash"), store=store,
                        embedder=HashEmbedder(dim=DIM), group_id=group)  # fmt: skip
    await kg.open()
    return built_of(kg, world)


def built_of(kg: KnowledgeGraph, world: Dana) -> Built:
    return Built(kg, world)


Door = Callable[[Built, str, dict[str, str]], Awaitable[dict[str, Any]]]
"""A read through one door as JSON: (the graph, "search" or "entity", its arguments) -> its answer."""


def check_search(found: dict[str, Any]) -> None:
    """A search as of 2023-06-01 (``SearchResults.to_dict``)."""
    entities = {e["entity"]["name"]: e["entity"] for e in found["entities"]}
    assert "Initech" not in entities and "Dana" in entities  # Initech was first named in 2024
    dana = entities["Dana"]
    assert dana["summary"] == "" and dana["aliases"] == []
    assert "after the time asked; not shown" in dana["summary_note"]
    assert dana["summary_withheld"].startswith("2024-03-01")
    for fact in found["facts"]:  # a fact valid then names Initech: its name only
        for end in (fact["source"], fact["target"]):
            assert end["summary"] != DANA_SUMMARY and (end["name"] != "Initech" or end["aliases"] == [])


def check_entity(found: dict[str, Any]) -> None:
    """``entity Dana`` as of 2023-06-01 (``EntityView.to_dict``)."""
    assert found["entity"]["summary"] == "" and found["entity"]["aliases"] == []
    assert "after the time asked; not shown" in found["summary_note"]
    assert found["mentions"] == len(found["episodes"]) == 1  # not "2" above a list of one
    # facts keep their own rule (valid then): "consults for Initech since 2021", said in 2024, holds
    assert {f["text"] for f in found["current"]} == {"Dana works at Acme", "Dana consults for Initech"}


async def through(door: Door, built: Built) -> None:
    check_search(await door(built, "search", {"as_of": WHEN}))
    nothing = await door(built, "search", {"known_at": "2020-01-01"})
    assert nothing["facts"] == [] and nothing["entities"] == []  # no facts, and no entity either
    check_entity(await door(built, "entity", {"as_of": WHEN}))
    now = await door(built, "entity", {})
    assert now["entity"]["summary"] == DANA_SUMMARY and now["mentions"] == 2 and "summary_note" in now
    assert now["summary_note"] is None


# --- the doors -----------------------------------------------------------------------------------------


async def python_door(built: Built, read: str, args: dict[str, str]) -> dict[str, Any]:
    if read == "search":
        return (await built.kg.search(QUERY, **args)).to_dict()  # type: ignore[arg-type]
    return (await built.kg.entity("Dana", **args)).to_dict()  # type: ignore[arg-type]


def _cli_argv(built: Built, read: str, args: dict[str, str], as_json: bool) -> list[str]:
    flags = [x for k, v in args.items() for x in (f"--{k.replace('_', '-')}", v)]
    what = ["search", QUERY] if read == "search" else ["entity", "Dana"]
    return [*(["--json"] if as_json else []), "--group", built.kg.group_id, *what, *flags]


async def _cli(built: Built, argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    store = second_store(built.kg.store)  # the CLI runs in a thread, on its own loop

    def factory(settings: Settings) -> KnowledgeGraph:
        return KnowledgeGraph(settings, store=store, embedder=HashEmbedder(dim=DIM))

    code = await asyncio.to_thread(main, argv, environ={"EPIGRAPH_EMBEDDER": "hash"}, kg_factory=factory)
    captured = capsys.readouterr()
    return code, captured.out + captured.err


async def http_door(built: Built, read: str, args: dict[str, str]) -> dict[str, Any]:
    path = "search" if read == "search" else "entities/Dana"
    return await http_json(built.kg, path, {**args, **({"q": QUERY} if read == "search" else {})})


async def mcp_call(built: Built, tool: str, args: dict[str, Any]) -> tuple[bool, Any]:
    kg = built.kg
    state = ServerState(kg, Keys({}), Limits(), Intake(kg, GroupRegistry(None)))
    async with Client(build_server(state)) as client:
        result = await client.call_tool(tool, {"group_id": kg.group_id, **args})
    text = "".join(getattr(block, "text", "") for block in result.content)
    if result.is_error:
        return False, text
    return True, result.structured_content if result.structured_content is not None else json.loads(text)


async def mcp_door(built: Built, read: str, args: dict[str, str]) -> dict[str, Any]:
    tool, more = ("search", {"query": QUERY}) if read == "search" else ("read_entity", {"name": "Dana"})
    ok, found = await mcp_call(built, tool, {**more, **args})
    assert ok, found
    return dict(found)


# --- the tests -----------------------------------------------------------------------------------------


async def test_in_python(built: Built) -> None:
    await through(python_door, built)
    with pytest.raises(EntityNotFound, match=r"as of 2023-06-01.*nothing said by then names it"):
        await built.kg.entity("Initech", as_of=WHEN)
    view = await built.kg.entity("Dana", as_of=WHEN)
    cell = view._repr_html_()  # a notebook cell
    assert "after the time asked; not shown" in cell and "mentioned in 1 episodes" in cell
    assert DANA_SUMMARY not in cell


async def test_on_the_command_line(built: Built, capsys: pytest.CaptureFixture[str]) -> None:
    async def door(b: Built, read: str, args: dict[str, str]) -> dict[str, Any]:
        code, out = await _cli(b, _cli_argv(b, read, args, as_json=True), capsys)
        assert code == 0, out
        found: dict[str, Any] = json.loads(out)
        return found

    await through(door, built)
    code, out = await _cli(built, _cli_argv(built, "entity", {"as_of": WHEN}, as_json=False), capsys)
    assert code == 0 and "after the time asked; not shown" in out and DANA_SUMMARY not in out, out
    assert "mentioned in 1 episodes" in out and "Episodes mentioning it (1)" in out
    code, out = await _cli(built, _cli_argv(built, "search", {"as_of": WHEN}, as_json=False), capsys)
    assert code == 0 and "after the time asked; not shown" in out and DANA_SUMMARY not in out, out
    argv = ["--group", built.kg.group_id, "entity", "Initech", "--as-of", WHEN]
    code, out = await _cli(built, argv, capsys)
    assert code != 0 and "nothing said by then names it" in out


async def test_over_http(built: Built) -> None:
    await through(http_door, built)
    app = create_app(built.kg, close_graph=False)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client:
        url = f"/v1/groups/{built.kg.group_id}/entities/Initech"
        response = await client.get(url, params={"as_of": WHEN})
    assert response.status_code == 404 and "nothing said by then names it" in response.text


async def test_over_mcp(built: Built) -> None:
    await through(mcp_door, built)
    ok, text = await mcp_call(built, "read_entity", {"name": "Initech", "as_of": WHEN})
    assert not ok and "nothing said by then names it" in text
