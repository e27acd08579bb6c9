"""``epigraph mcp``: the graph as an MCP server (the official MCP Python SDK), over stdio or streamable
HTTP, with the same keys, groups, limits and intake as the HTTP API.

Tools: ``add_episodes``, ``episode_status``, ``search``, ``read_entity``, ``ask``, ``remove_episode``,
``communities``, ``update_communities``, ``conversations``, ``conversation``, ``update_conversations``;
corrections by hand (``add_fact``, ``retire_fact``, ``edit_fact``, ``delete_fact``, ``merge_entities``,
``unmerge_entities``, ``rename_entity``, ``undo_correction``, ``list_corrections``, ``delete_group``),
``export_group`` / ``load_group`` (a dump as text, up to ``Limits.max_dump_bytes``) and forgetting
(``forget``: a preview unless ``apply``; ``list_forgotten``; ``retention``: show, set, clear, apply).
Over HTTP the key comes with each request (``Authorization: Bearer KEY``); over stdio the host that
starts the server sets ``EPIGRAPH_API_KEY``. A refusal is a tool error naming 401/403, nothing more.
Every tool's ``group_id`` defaults to the server's own group when it was started with one (``--group``
/ ``EPIGRAPH_GROUP``), and is required otherwise.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from ..ask import AskMode
from ..client import KnowledgeGraph
from ..config import Settings
from ..graph.changes import ChangeKind
from ..version import __version__
from . import service
from .auth import AuthError, BadGroup, Keys, key_from_headers
from .intake import GroupRegistry, Intake
from .mcp_edit import correcting_tools, forgetting_tools, moving_tools
from .mcp_tools import GroupArg, GroupOf, Tools, guarded
from .schemas import AskIn, EpisodeIn, Limits, Timestamp
from .service import ServerState, running

INSTRUCTIONS = (
    "A temporal knowledge graph of chat episodes, one graph per group. Add episodes (they are ingested "
    "in the background: check episode_status), search facts/entities/episodes (as_of: what was true "
    "then; known_at: what the graph knew then), read an entity, ask a question (a cited answer)."
)


def build_server(
    state: ServerState, stdio_key: str | None = None, default_group: str | None = None
) -> MCPServer:
    """The MCP server's tools over ``state``; ``stdio_key``: the key of a stdio session;
    ``default_group``: the server's own group (``--group`` / ``EPIGRAPH_GROUP``), which a tool call
    without ``group_id`` uses (without one, every tool requires ``group_id``). The key is checked for
    it like for any group."""
    mcp_server: MCPServer = MCPServer("epigraph", instructions=INSTRUCTIONS, version=__version__)
    server = Tools(mcp_server, group_required=default_group is None)

    def group(ctx: Context, group_id: str | None) -> str:
        headers = ctx.headers
        key = key_from_headers({k.lower(): v for k, v in headers.items()}) if headers else stdio_key
        chosen = default_group if group_id is None else group_id
        if chosen is None:
            raise ToolError(
                "422 group_id: required (this server was started without --group / EPIGRAPH_GROUP)"
            )
        try:
            return state.keys.group(key, chosen)
        except AuthError as exc:
            raise ToolError(f"{exc.status}: {exc.detail}") from None
        except BadGroup as exc:
            raise ToolError(f"422 group_id: {exc}") from None

    _writing_tools(server, state, group)
    _reading_tools(server, state, group)
    _overview_tools(server, state, group)
    correcting_tools(server, state, group)
    moving_tools(server, state, group)
    forgetting_tools(server, state, group)
    return mcp_server


def _writing_tools(server: Tools, state: ServerState, group: GroupOf) -> None:
    @server.tool()
    async def add_episodes(
        *, group_id: GroupArg = None, episodes: list[EpisodeIn], ctx: Context
    ) -> dict[str, Any]:
        """Add episodes to a group, in order; returns their ids once each is stored (status pending)."""
        accepted = await guarded(service.add(state, group(ctx, group_id), episodes))
        return accepted.model_dump()

    @server.tool()
    async def episode_status(*, group_id: GroupArg = None, uuid: str, ctx: Context) -> dict[str, Any]:
        """An episode's status (pending, done, failed), error and ingestion report."""
        return await guarded(service.episode(state, group(ctx, group_id), uuid))

    @server.tool()
    async def remove_episode(*, group_id: GroupArg = None, uuid: str, ctx: Context) -> dict[str, Any]:
        """Delete an episode; facts only it supported go, facts it retired come back."""
        return await guarded(service.remove(state, group(ctx, group_id), uuid))


def _reading_tools(server: Tools, state: ServerState, group: GroupOf) -> None:
    @server.tool()
    async def search(
        *,
        group_id: GroupArg = None,
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
    async def read_entity(
        *, group_id: GroupArg = None, name: str, ctx: Context, as_of: Timestamp | None = None
    ) -> dict[str, Any]:
        """An entity by name, alias or uuid: summary, current facts, history, episodes; as_of: as it was
        then (aliases, mentions and the episodes said by then, the facts current then, the history by
        then; a summary written later withheld: summary_note says so)."""
        return await guarded(service.entity(state, group(ctx, group_id), name, as_of=as_of))

    @server.tool()
    async def changes(
        *, group_id: GroupArg = None, ctx: Context, since: Timestamp | None = None,
        until: Timestamp | None = None, kinds: list[ChangeKind] | None = None, limit: int = 1000,
    ) -> dict[str, Any]:  # fmt: skip
        """What changed in [since, until), grouped by entity: facts that started or ended (event time),
        were learned, retired, corrected, merged or forgotten (system time), with both times and their
        sources (a forgotten fact: its id and the forgetting that removed it, never its text)."""
        chosen = [k.value for k in kinds] if kinds else None
        found = service.changes(state, group(ctx, group_id), since=since, until=until, kinds=chosen,
                                limit=max(1, min(limit, 1000)))  # fmt: skip
        return await guarded(found)

    @server.tool()
    async def explain(*, group_id: GroupArg = None, subject: str, ctx: Context) -> dict[str, Any]:
        """Why the graph holds a fact (its id) or an entity (a name, alias or uuid), or refused a name:
        the chain from the message (the episode, the line of the model's reply) to what the graph holds
        now, in a few lines: what each stage decided, merges, retirements, corrections by hand."""
        return await guarded(service.explain(state, group(ctx, group_id), subject))

    @server.tool()
    async def ask(
        *, group_id: GroupArg = None, question: str, ctx: Context, as_of: Timestamp | None = None,
        known_at: Timestamp | None = None, mode: AskMode | None = None,
    ) -> dict[str, Any]:  # fmt: skip
        """Answer a question from the group's graph, citing the facts and episodes used. ``mode``:
        "context" (one context, one model call), "agent" (planned lookups) or "auto" (the context
        first, the agent when it found nothing; the default)."""
        chosen = group(ctx, group_id)

        async def answered() -> dict[str, Any]:  # a blank question is a ValueError: a tool error
            asked = AskIn(question=question, as_of=as_of, known_at=known_at, mode=mode)
            return await service.answer(state, chosen, asked)

        return await guarded(answered())


def _overview_tools(server: Tools, state: ServerState, group: GroupOf) -> None:
    @server.tool()
    async def communities(
        *,
        group_id: GroupArg = None,
        ctx: Context,
        as_of: Timestamp | None = None,
        known_at: Timestamp | None = None,
    ) -> dict[str, Any]:
        """The group's communities (groups of entities the facts connect), with names, summaries and
        members; as_of / known_at: the clusters of the facts that held then."""
        return await guarded(service.communities(state, group(ctx, group_id), as_of=as_of, known_at=known_at))

    @server.tool()
    async def update_communities(
        *, group_id: GroupArg = None, ctx: Context, rebuild: bool = False
    ) -> dict[str, Any]:
        """Bring the communities up to date (or rebuild them); costs model calls."""
        return await guarded(service.update_communities(state, group(ctx, group_id), rebuild=rebuild))

    @server.tool()
    async def conversations(*, group_id: GroupArg = None, ctx: Context) -> dict[str, Any]:
        """The group's conversations (episodes sharing a source), each with its running summary."""
        return await guarded(service.conversations(state, group(ctx, group_id)))

    @server.tool()
    async def conversation(
        *, group_id: GroupArg = None, key: str, ctx: Context, limit: int = 50
    ) -> dict[str, Any]:
        """One conversation: its summary and latest episodes in order (each with previous and next)."""
        found = service.conversation(state, group(ctx, group_id), key, limit=max(1, min(limit, 1000)))
        return await guarded(found)

    @server.tool()
    async def update_conversations(
        *, group_id: GroupArg = None, ctx: Context, keys: list[str] | None = None, rebuild: bool = False
    ) -> dict[str, Any]:
        """Fold new episodes into the summaries of the conversations named (default: every one behind)."""
        return await guarded(service.update_conversations(state, group(ctx, group_id), keys, rebuild=rebuild))


async def run_mcp(
    settings: Settings, keys: Keys, transport: str, host: str, port: int, groups_file: Path | None
) -> None:
    """Serve until stopped: ``transport`` is ``stdio`` or ``http`` (streamable HTTP at ``/mcp``)."""
    stdio_key = settings.api_key.get_secret_value() if settings.api_key else None
    kg = KnowledgeGraph(settings)
    state = ServerState(kg, keys, Limits(), Intake(kg, GroupRegistry(groups_file)))
    own_group = settings.group_id if "group_id" in settings.model_fields_set else None
    async with running(state):
        server = build_server(state, stdio_key, own_group)
        if transport == "stdio":
            await server.run_stdio_async()
        else:
            await server.run_streamable_http_async(host=host, port=port)
