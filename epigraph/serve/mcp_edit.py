"""The MCP tools that change the graph by hand: corrections (``add_fact`` .. ``delete_group``), a
group's dump out and in (``export_group``, ``load_group``) and forgetting (``forget``, ``list_forgotten``,
``retention``); registered by ``mcp.build_server``."""

from __future__ import annotations

from typing import Any, Literal

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError

from . import editing, forgetting
from .mcp_tools import GroupArg, GroupOf, Tools, guarded
from .schemas import LimitExceeded, Timestamp
from .service import ServerState


def correcting_tools(server: Tools, state: ServerState, group: GroupOf) -> None:
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


def moving_tools(server: Tools, state: ServerState, group: GroupOf) -> None:
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


def forgetting_tools(server: Tools, state: ServerState, group: GroupOf) -> None:
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
