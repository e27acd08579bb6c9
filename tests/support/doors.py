"""One graph's reads through each door as JSON, so a test asks every door the same thing and compares:
the command line (``main`` in a thread, on its own loop and a second store on the same data), HTTP (the
app in process, over ``httpx.ASGITransport``) and MCP (the server in process, an in-memory client)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest
from mcp import Client

from epigraph import KnowledgeGraph
from epigraph.cli.app import main
from epigraph.config import Settings
from epigraph.serve import Keys, Limits, create_app
from epigraph.serve.intake import GroupRegistry, Intake
from epigraph.serve.mcp import build_server
from epigraph.serve.service import ServerState
from epigraph.testing import HashEmbedder
from tests.support.stores import DIM, second_store


async def cli_json(kg: KnowledgeGraph, argv: list[str], capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    """``epigraph --json --group G ARGV...`` on ``kg``'s data; its exit code must be 0."""
    store = second_store(kg.store)

    def factory(settings: Settings) -> KnowledgeGraph:
        return KnowledgeGraph(settings, store=store, embedder=HashEmbedder(dim=DIM))

    full = ["--json", "--group", kg.group_id, *argv]
    code = await asyncio.to_thread(main, full, environ={"EPIGRAPH_EMBEDDER": "hash"}, kg_factory=factory)
    out = capsys.readouterr().out
    assert code == 0, out
    found: dict[str, Any] = json.loads(out)
    return found


async def http_json(kg: KnowledgeGraph, path: str, params: Any = None) -> dict[str, Any]:
    """``GET /v1/groups/{kg's group}/{path}``; its status must be 200."""
    app = create_app(kg, close_graph=False)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client:
        response = await client.get(f"/v1/groups/{kg.group_id}/{path}", params=params)
    assert response.status_code == 200, response.text
    found: dict[str, Any] = response.json()
    return found


async def mcp_json(kg: KnowledgeGraph, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """The MCP tool ``tool`` called for ``kg``'s group; it must not be an error."""
    state = ServerState(kg, Keys({}), Limits(), Intake(kg, GroupRegistry(None)))
    async with Client(build_server(state)) as client:
        result = await client.call_tool(tool, {"group_id": kg.group_id, **arguments})
    assert not result.is_error, result.content
    text = "".join(getattr(block, "text", "") for block in result.content)
    found: dict[str, Any] = (
        result.structured_content if result.structured_content is not None else json.loads(text)
    )
    return found
