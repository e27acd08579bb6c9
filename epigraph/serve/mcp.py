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

import functools
import inspect
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar, cast

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from ..ask import AskMode
from ..client import KnowledgeGraph
from ..config import Settings
from ..errors import ConflictError, NotFound, UsageError
from ..graph.changes import ChangeKind
from ..version import __version__
from . import editing, forgetting, service
from .auth import AuthError, BadGroup, Keys, key_from_headers
from .intake import GroupRegistry, Intake
from .schemas import AskIn, EpisodeIn, LimitExceeded, Limits, Timestamp
from .service import ServerState, running

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
    except ConflictError as exc:
        raise ToolError(f"409: {exc}") from None


GroupOf = Callable[[Context, str | None], str]


def build_server(
    state: ServerState, stdio_key: str | None = None, default_group: str | None = None
) -> MCPServer:
    """The MCP server's tools over ``state``; ``stdio_key``: the key of a stdio session;
    ``default_group``: the server's own group (``--group`` / ``EPIGRAPH_GROUP``), which a tool call
    without ``group_id`` uses (without one, every tool requires ``group_id``). The key is checked for
    it like for any group."""
    mcp_server: MCPServer = MCPServer("epigraph", instructions=INSTRUCTIONS, version=__version__)
    server = _Tools(mcp_server, group_required=default_group is None)

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
    _correcting_tools(server, state, group)
    _moving_tools(server, state, group)
    _forgetting_tools(server, state, group)
    return mcp_server


GroupArg = Annotated[
    str | None, Field(description="the group (default: the server's own, when it was started with --group)")
]
"""Every tool's ``group_id``: optional when the server has a group, else required (``_Tools``)."""
F = TypeVar("F", bound=Callable[..., Any])


class _Tools:
    """Registers the tools on ``server``, with ``group_id`` required in their schema when
    ``group_required`` (a server without a group of its own)."""

    def __init__(self, server: MCPServer, *, group_required: bool) -> None:
        self.server, self.group_required = server, group_required

    def tool(self) -> Callable[[F], F]:
        def register(fn: F) -> F:
            self.server.tool()(_group_required(fn) if self.group_required else fn)
            return fn

        return register


def _group_required(fn: F) -> F:
    """``fn`` as a tool whose ``group_id`` has no default (its schema then lists it as required)."""
    signature = inspect.signature(fn, eval_str=True)
    required = Annotated[str, Field(description="the group")]
    parameters = [
        p.replace(annotation=required, default=inspect.Parameter.empty) if p.name == "group_id" else p
        for p in signature.parameters.values()
    ]

    @functools.wraps(fn)
    async def tool(**kwargs: Any) -> Any:
        return await fn(**kwargs)

    tool.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
    return cast(F, tool)


def _writing_tools(server: _Tools, state: ServerState, group: GroupOf) -> None:
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


def _reading_tools(server: _Tools, state: ServerState, group: GroupOf) -> None:
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


def _overview_tools(server: _Tools, state: ServerState, group: GroupOf) -> None:
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


def _correcting_tools(server: _Tools, state: ServerState, group: GroupOf) -> None:
    @server.tool()
    async def add_fact(
        *, group_id: GroupArg = None, source: str, relation: str, target: str, author: str, ctx: Context,
        text: str | None = None, valid_at: Timestamp | None = None, invalid_at: Timestamp | None = None,
        create: bool = False, reason: str = "",
    ) -> dict[str, Any]:  # fmt: skip
        """Add a fact by hand between two entities (uuid, name or alias; create: make missing ones);
        author: the person (alice). Returns the correction."""
        body = editing.FactIn(
            source=source, relation=relation, target=target, author=author, text=text, valid_at=valid_at,
            invalid_at=invalid_at, create=create, reason=reason,
        )  # fmt: skip
        return await guarded(editing.add_fact(state, group(ctx, group_id), body))

    @server.tool()
    async def retire_fact(
        *,
        group_id: GroupArg = None,
        uuid: str,
        author: str,
        ctx: Context,
        at: Timestamp | None = None,
        reason: str = "",
    ) -> dict[str, Any]:
        """The fact stopped being true at ``at`` (default: now)."""
        body = editing.RetireIn(author=author, at=at, reason=reason)
        return await guarded(editing.retire_fact(state, group(ctx, group_id), uuid, body))

    @server.tool()
    async def edit_fact(
        *, group_id: GroupArg = None, uuid: str, author: str, ctx: Context, text: str | None = None,
        relation: str | None = None, valid_at: Timestamp | None = None, invalid_at: Timestamp | None = None,
        clear_valid_at: bool = False, clear_invalid_at: bool = False, reason: str = "",
    ) -> dict[str, Any]:  # fmt: skip
        """Correct a fact's text, relation or times in place (clear_*: remove a time)."""
        fields: dict[str, Any] = {"author": author, "reason": reason, "text": text, "relation": relation}
        for name, value, clear in (("valid_at", valid_at, clear_valid_at), ("invalid_at", invalid_at,
                                                                            clear_invalid_at)):  # fmt: skip
            if value is not None or clear:
                fields[name] = value
        body = editing.FactEdit.model_validate(fields)
        return await guarded(editing.edit_fact(state, group(ctx, group_id), uuid, body))

    @server.tool()
    async def delete_fact(
        *, group_id: GroupArg = None, uuid: str, author: str, ctx: Context, reason: str = ""
    ) -> dict[str, Any]:
        """Delete a fact (the facts it retired come back); undo restores it."""
        return await guarded(editing.delete_fact(state, group(ctx, group_id), uuid, author, reason))

    @server.tool()
    async def merge_entities(
        *, group_id: GroupArg = None, keep: str, merge: str, author: str, ctx: Context, reason: str = ""
    ) -> dict[str, Any]:
        """Fold the entity ``merge`` into ``keep`` (names, facts, mentions); undoable."""
        body = editing.MergeIn(keep=keep, merge=merge, author=author, reason=reason)
        return await guarded(editing.merge(state, group(ctx, group_id), body))

    @server.tool()
    async def unmerge_entities(
        *, group_id: GroupArg = None, entity: str, author: str, ctx: Context, reason: str = ""
    ) -> dict[str, Any]:
        """Undo the latest merge into the entity."""
        body = editing.UnmergeIn(entity=entity, author=author, reason=reason)
        return await guarded(editing.unmerge(state, group(ctx, group_id), body))

    @server.tool()
    async def rename_entity(
        *, group_id: GroupArg = None, entity: str, name: str, author: str, ctx: Context,
        keep_alias: bool = True, reason: str = "",
    ) -> dict[str, Any]:  # fmt: skip
        """Rename an entity (the old name stays an alias unless keep_alias is false)."""
        body = editing.RenameIn(entity=entity, name=name, keep_alias=keep_alias, author=author, reason=reason)
        return await guarded(editing.rename(state, group(ctx, group_id), body))

    @server.tool()
    async def undo_correction(
        *, group_id: GroupArg = None, correction: str, author: str, ctx: Context, reason: str = ""
    ) -> dict[str, Any]:
        """Apply a correction backwards (refused when the graph changed since)."""
        body = editing.UndoIn(correction=correction, author=author, reason=reason)
        return await guarded(editing.undo(state, group(ctx, group_id), body))

    @server.tool()
    async def list_corrections(
        *, group_id: GroupArg = None, ctx: Context, entity: str | None = None, limit: int = 50
    ) -> dict[str, Any]:
        """The corrections by hand, newest first (of one entity, if named): who, when, what, why."""
        return await guarded(
            editing.corrections(state, group(ctx, group_id), entity, max(1, min(limit, 1000)))
        )

    @server.tool()
    async def delete_group(*, group_id: GroupArg = None, confirm: str, ctx: Context) -> dict[str, Any]:
        """Delete everything in the group (not undoable): confirm must repeat the group's id."""
        chosen = group(ctx, group_id)
        if confirm != chosen:
            raise ToolError(f"422 confirm: deleting group {chosen!r} cannot be undone; confirm with its id")
        return await guarded(editing.delete_group(state, chosen))


def _moving_tools(server: _Tools, state: ServerState, group: GroupOf) -> None:
    @server.tool()
    async def export_group(
        *, group_id: GroupArg = None, ctx: Context, vectors: bool = False
    ) -> dict[str, Any]:
        """The group as a JSON Lines dump (docs/dump-format.md), from one consistent read."""
        chosen = group(ctx, group_id)

        async def collect() -> dict[str, Any]:
            lines, size = [], 0
            async for line in editing.export_lines(state, chosen, vectors):
                size += len(line) + 1
                if size > state.limits.max_dump_bytes:
                    over = f"the dump is over {state.limits.max_dump_bytes} bytes"
                    raise LimitExceeded(413, "dump", f"{over}: use GET .../export or `epigraph export`")
                lines.append(line)
            return {"group_id": chosen, "dump": "\n".join(lines) + "\n", "lines": len(lines)}

        return await guarded(collect())

    @server.tool()
    async def load_group(*, group_id: GroupArg = None, dump: str, ctx: Context) -> dict[str, Any]:
        """Load a one-group dump (the text export_group returns) into the empty group ``group_id``."""
        chosen = group(ctx, group_id)
        if len(dump.encode("utf-8")) > state.limits.max_dump_bytes:
            raise ToolError(f"413 dump: larger than {state.limits.max_dump_bytes} bytes")
        return await guarded(editing.load(state, chosen, dump))


def _forgetting_tools(server: _Tools, state: ServerState, group: GroupOf) -> None:
    @server.tool()
    async def forget(
        *, group_id: GroupArg = None, subject: str, ctx: Context,
        episodes: Literal["redact", "delete"] = "redact", also: list[str] | None = None, apply: bool = False,
        expect: str | None = None,
    ) -> dict[str, Any]:  # fmt: skip
        """Forget an entity (its id, name or alias): itself, its facts, its name in everything that stays;
        the episodes that mention it redacted (the name taken out) or deleted. A preview (counts and
        ids, nothing changes) unless ``apply``; ``expect``: forget only the plan a preview answered."""
        body = forgetting.ForgetIn(subject=subject, episodes=episodes, also=also or [], apply=apply,
                                   expect=expect)  # fmt: skip
        return await guarded(forgetting.forget(state, group(ctx, group_id), body, call="mcp"))

    @server.tool()
    async def list_forgotten(
        *, group_id: GroupArg = None, ctx: Context, name: str | None = None, limit: int = 50
    ) -> dict[str, Any]:
        """The audit records of what was forgotten, newest first (of a subject so called, if named)."""
        chosen = group(ctx, group_id)
        return await guarded(forgetting.forgotten(state, chosen, name or None, max(1, min(limit, 1000))))

    @server.tool()
    async def retention(
        *, group_id: GroupArg = None, ctx: Context, action: Literal["show", "set", "clear", "apply"] = "show",
        days: int | None = None, apply: bool = False, expect: str | None = None,
    ) -> dict[str, Any]:  # fmt: skip
        """The group's retention: show it, set it (``days``: how long episodes are kept), clear it, or
        apply it (the older episodes, and what only they support: a preview unless ``apply``)."""
        chosen = group(ctx, group_id)
        if action == "set":
            if days is None:
                raise ToolError("422 days: set takes days (how long the group keeps its episodes)")
            return await guarded(forgetting.set_retention(state, chosen, forgetting.RetentionIn(days=days)))
        if action == "clear":
            return await guarded(forgetting.clear_retention(state, chosen))
        if action == "apply":
            body = forgetting.ApplyIn(apply=apply, expect=expect)
            return await guarded(forgetting.apply_retention(state, chosen, body, call="mcp"))
        return await guarded(forgetting.retention(state, chosen))


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
