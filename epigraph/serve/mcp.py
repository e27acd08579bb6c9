"""``epigraph mcp``: the graph as an MCP server (the official MCP Python SDK), over stdio or streamable
HTTP, with the same keys, groups, limits and ingestion workers as the HTTP API.

Tools: ``add_episodes``, ``episode_status``, ``search``, ``read_entity``, ``ask``, ``remove_episode``,
``communities``, ``update_communities``, ``conversations``, ``conversation``, ``update_conversations``.
Over HTTP the key comes with each request (``Authorization: Bearer KEY``); over stdio the host that
starts the server sets ``EPIGRAPH_API_KEY``. A refusal is a tool error naming 401/403, nothing more.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Literal, TypeVar

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from ..ask import AskMode
from ..client import KnowledgeGraph
from ..config import Settings
from ..errors import NotFound, UsageError
from . import service
from .auth import AuthError, BadGroup, Keys, key_from_headers
from .schemas import EpisodeIn, LimitExceeded, Limits, Timestamp
from .service import ServerState, running
from .worker import GroupRegistry, Workers

T = TypeVar("T")

INSTRUCTIONS = (
    "A temporal knowledge graph of chat episodes, one graph per group. Add episodes (they are ingested "
    "in the background: check episode_status), search facts/entities/episodes (as_of: what was true "
    "then; known_at: what the graph knew then), read an entity, ask a question (a cited answer)."
)


async def guarded(call: Awaitable[T]) -> T:
    """The call's result; an anticipated failure becomes a ``ToolError`` the model can read."""
    try:
        return await call
    except LimitExceeded as exc:
        raise ToolError(f"{exc.status} {exc.field}: {exc.message}") from None
    except (NotFound, UsageError, ValueError) as exc:
        raise ToolError(str(exc)) from None


GroupOf = Callable[[Context, str], str]


def build_server(state: ServerState, stdio_key: str | None = None) -> MCPServer:
    """The MCP server's tools over ``state``; ``stdio_key``: the key of a stdio session."""
    server: MCPServer = MCPServer("epigraph", instructions=INSTRUCTIONS)

    def group(ctx: Context, group_id: str) -> str:
        headers = ctx.headers
        key = key_from_headers({k.lower(): v for k, v in headers.items()}) if headers else stdio_key
        try:
            return state.keys.group(key, group_id)
        except AuthError as exc:
            raise ToolError(f"{exc.status}: {exc.detail}") from None
        except BadGroup as exc:
            raise ToolError(f"422 group_id: {exc}") from None

    _writing_tools(server, state, group)
    _reading_tools(server, state, group)
    _overview_tools(server, state, group)
    return server


def _writing_tools(server: MCPServer, state: ServerState, group: GroupOf) -> None:
    @server.tool()
    async def add_episodes(group_id: str, episodes: list[EpisodeIn], ctx: Context) -> dict[str, Any]:
        """Add episodes to a group, in order; returns their ids once each is stored (status pending)."""
        accepted = await guarded(service.add(state, group(ctx, group_id), episodes))
        return accepted.model_dump()

    @server.tool()
    async def episode_status(group_id: str, uuid: str, ctx: Context) -> dict[str, Any]:
        """An episode's status (pending, done, failed), error and ingestion report."""
        return await guarded(service.episode(state, group(ctx, group_id), uuid))

    @server.tool()
    async def remove_episode(group_id: str, uuid: str, ctx: Context) -> dict[str, Any]:
        """Delete an episode; facts only it supported go, facts it retired come back."""
        return await guarded(service.remove(state, group(ctx, group_id), uuid))


def _reading_tools(server: MCPServer, state: ServerState, group: GroupOf) -> None:
    @server.tool()
    async def search(
        group_id: str,
        query: str,
        ctx: Context,
        scope: Literal["all", "facts", "entities", "episodes", "communities"] = "all",
        as_of: Timestamp | None = None,
        known_at: Timestamp | None = None,
        limit: int = 10,
    ) -> dict[str, Any]:
        """Hybrid search of the group's facts, entities and episodes (or its communities)."""
        found = service.search(
            state, group(ctx, group_id), query, scope=scope, as_of=as_of, known_at=known_at, limit=limit
        )
        return await guarded(found)

    @server.tool()
    async def read_entity(group_id: str, name: str, ctx: Context) -> dict[str, Any]:
        """An entity by name, alias or uuid: summary, current facts, history, episodes."""
        return await guarded(service.entity(state, group(ctx, group_id), name))

    @server.tool()
    async def ask(
        group_id: str, question: str, ctx: Context, as_of: Timestamp | None = None,
        known_at: Timestamp | None = None, mode: AskMode | None = None,
    ) -> dict[str, Any]:  # fmt: skip
        """Answer a question from the group's graph, citing the facts and episodes used. ``mode``:
        "context" (one context, one model call), "agent" (planned lookups) or "auto" (the context
        first, the agent when it found nothing; the default)."""
        answer = await guarded(
            state.kg.ask(
                question, streaming=False, as_of=as_of, known_at=known_at, group_id=group(ctx, group_id),
                mode=mode,
            )
        )  # fmt: skip
        return answer.to_dict()


def _overview_tools(server: MCPServer, state: ServerState, group: GroupOf) -> None:
    @server.tool()
    async def communities(
        group_id: str, ctx: Context, as_of: Timestamp | None = None, known_at: Timestamp | None = None
    ) -> dict[str, Any]:
        """The group's communities (groups of entities the facts connect), with names, summaries and
        members; as_of / known_at: the clusters of the facts that held then."""
        return await guarded(service.communities(state, group(ctx, group_id), as_of=as_of, known_at=known_at))

    @server.tool()
    async def update_communities(group_id: str, ctx: Context, rebuild: bool = False) -> dict[str, Any]:
        """Bring the communities up to date (or rebuild them); costs model calls."""
        return await guarded(service.update_communities(state, group(ctx, group_id), rebuild=rebuild))

    @server.tool()
    async def conversations(group_id: str, ctx: Context) -> dict[str, Any]:
        """The group's conversations (episodes sharing a source), each with its running summary."""
        return await guarded(service.conversations(state, group(ctx, group_id)))

    @server.tool()
    async def conversation(group_id: str, key: str, ctx: Context, limit: int = 50) -> dict[str, Any]:
        """One conversation: its summary and latest episodes in order (each with previous and next)."""
        found = service.conversation(state, group(ctx, group_id), key, limit=max(1, min(limit, 1000)))
        return await guarded(found)

    @server.tool()
    async def update_conversations(
        group_id: str, ctx: Context, keys: list[str] | None = None, rebuild: bool = False
    ) -> dict[str, Any]:
        """Fold new episodes into the summaries of the conversations named (default: every one behind)."""
        return await guarded(service.update_conversations(state, group(ctx, group_id), keys, rebuild=rebuild))


async def run_mcp(
    settings: Settings, keys: Keys, transport: str, host: str, port: int, groups_file: Path | None
) -> None:
    """Serve until stopped: ``transport`` is ``stdio`` or ``http`` (streamable HTTP at ``/mcp``)."""
    stdio_key = settings.api_key.get_secret_value() if settings.api_key else None
    kg = KnowledgeGraph(settings)
    state = ServerState(kg, keys, Limits(), Workers(kg, GroupRegistry(groups_file)))
    async with running(state):
        server = build_server(state, stdio_key)
        if transport == "stdio":
            await server.run_stdio_async()
        else:
            await server.run_streamable_http_async(host=host, port=port)
