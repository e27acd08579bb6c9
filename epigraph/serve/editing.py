"""Corrections by hand, export and load, as the HTTP routes and MCP tools both do them (``service``'s
rule: one behaviour, two transports). Groups are already authorized by the caller; every correction
names its ``author`` (a person: ``alice`` or ``person:alice``) and runs under the group's worker lock, so
no episode of the group is ingested halfway through it.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import asdict
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..edit import UNSET
from ..edit.build import MaybeTime
from ..edit.refs import require_correction
from ..errors import UsageError
from ..present.corrections import correction_dict, correction_record
from ..transfer import read
from .schemas import Timestamp
from .service import ServerState


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Authored(_Body):
    author: str = Field(min_length=1, max_length=160, description="who makes it: alice, or person:alice")
    reason: str = Field(default="", max_length=2000, description="why (kept with the correction)")


class FactIn(Authored):
    """A fact added by hand between two entities named by uuid, name or alias."""

    source: str = Field(min_length=1, max_length=1000)
    relation: str = Field(min_length=1, max_length=64, description="e.g. WORKS_AT, or 'works at'")
    target: str = Field(min_length=1, max_length=1000)
    text: str | None = Field(
        default=None, max_length=2000, description="its sentence (default: from its ends)"
    )
    valid_at: Timestamp | None = Field(default=None, description="when it began (naive: UTC)")
    invalid_at: Timestamp | None = Field(default=None, description="when it ended")
    create: bool = Field(default=False, description="create the entities no entity is named so")
    retires: list[str] = Field(default_factory=list, max_length=100, description="facts it ends")


class RetireIn(Authored):
    at: Timestamp | None = Field(default=None, description="when it stopped being true (default: now)")


class FactEdit(Authored):
    """The fields to change; a time sent as null is cleared, one left out stays."""

    text: str | None = Field(default=None, max_length=2000)
    relation: str | None = Field(default=None, max_length=64)
    valid_at: Timestamp | None = None
    invalid_at: Timestamp | None = None

    def time(self, name: str) -> MaybeTime:
        value: Timestamp | None = getattr(self, name)
        return value if name in self.model_fields_set else UNSET


class MergeIn(Authored):
    keep: str = Field(min_length=1, max_length=1000, description="the entity that stays")
    merge: str = Field(min_length=1, max_length=1000, description="the entity folded into it")


class UnmergeIn(Authored):
    entity: str = Field(min_length=1, max_length=1000, description="undo the latest merge into it")


class RenameIn(Authored):
    entity: str = Field(min_length=1, max_length=1000)
    name: str = Field(min_length=1, max_length=1000)
    keep_alias: bool = Field(default=True, description="keep the old name as an alias")


class UndoIn(Authored):
    correction: str = Field(min_length=1, max_length=256, description="the correction's uuid")


async def add_fact(state: ServerState, group_id: str, body: FactIn) -> dict[str, Any]:
    async with state.workers.lock(group_id):
        made = await state.kg.add_fact(
            body.source, body.relation, body.target, text=body.text, valid_at=body.valid_at,
            invalid_at=body.invalid_at, create=body.create, retires=body.retires, author=body.author,
            reason=body.reason, group_id=group_id,
        )  # fmt: skip
    return correction_record(made)


async def retire_fact(state: ServerState, group_id: str, uuid: str, body: RetireIn) -> dict[str, Any]:
    async with state.workers.lock(group_id):
        made = await state.kg.retire_fact(
            uuid, at=body.at, author=body.author, reason=body.reason, group_id=group_id
        )
    return correction_record(made)


async def edit_fact(state: ServerState, group_id: str, uuid: str, body: FactEdit) -> dict[str, Any]:
    async with state.workers.lock(group_id):
        made = await state.kg.edit_fact(
            uuid, text=body.text, relation=body.relation, valid_at=body.time("valid_at"),
            invalid_at=body.time("invalid_at"), author=body.author, reason=body.reason, group_id=group_id,
        )  # fmt: skip
    return correction_record(made)


async def delete_fact(
    state: ServerState, group_id: str, uuid: str, author: str, reason: str = ""
) -> dict[str, Any]:
    async with state.workers.lock(group_id):
        made = await state.kg.delete_fact(uuid, author=author, reason=reason, group_id=group_id)
    return correction_record(made)


async def merge(state: ServerState, group_id: str, body: MergeIn) -> dict[str, Any]:
    async with state.workers.lock(group_id):
        made = await state.kg.merge_entities(
            body.keep, body.merge, author=body.author, reason=body.reason, group_id=group_id
        )
    return correction_record(made)


async def unmerge(state: ServerState, group_id: str, body: UnmergeIn) -> dict[str, Any]:
    async with state.workers.lock(group_id):
        made = await state.kg.unmerge_entities(
            body.entity, author=body.author, reason=body.reason, group_id=group_id
        )
    return correction_record(made)


async def rename(state: ServerState, group_id: str, body: RenameIn) -> dict[str, Any]:
    async with state.workers.lock(group_id):
        made = await state.kg.rename_entity(
            body.entity, body.name, keep_alias=body.keep_alias, author=body.author, reason=body.reason,
            group_id=group_id,
        )  # fmt: skip
    return correction_record(made)


async def undo(state: ServerState, group_id: str, body: UndoIn) -> dict[str, Any]:
    async with state.workers.lock(group_id):
        made = await state.kg.undo(body.correction, author=body.author, reason=body.reason, group_id=group_id)
    return correction_record(made)


async def corrections(
    state: ServerState, group_id: str, entity: str | None = None, limit: int = 50
) -> dict[str, Any]:
    found = await state.kg.corrections(entity=entity, limit=limit, group_id=group_id)
    return {"group_id": group_id, "corrections": [correction_dict(c) for c in found]}


async def correction(state: ServerState, group_id: str, uuid: str) -> dict[str, Any]:
    return correction_record(await require_correction(state.kg.store, group_id, uuid))


async def delete_group(state: ServerState, group_id: str, confirm: str | None) -> dict[str, Any]:
    if confirm != group_id:
        raise UsageError(
            f"deleting group {group_id!r} removes everything in it and cannot be undone: confirm with the "
            "group's id (confirm=GROUP); export it first"
        )
    async with state.workers.lock(group_id):
        held = await state.kg.delete_group(group_id)
    return {"group_id": group_id, "deleted": asdict(held)}


def export_lines(state: ServerState, group_id: str, vectors: bool) -> AsyncIterator[str]:
    return state.kg.export_lines(groups=[group_id], vectors=vectors)


async def load(state: ServerState, group_id: str, text: str) -> dict[str, Any]:
    """Load a dump's one group as ``group_id`` (checked whole first: InputError naming the line)."""
    dump = await asyncio.to_thread(read, text.splitlines(), "body")
    async with state.workers.lock(group_id):
        report = await state.kg.load(dump, into=group_id)
    return {"group_id": group_id, **asdict(report)}
