"""Corrections by hand, export and load, as the HTTP routes and MCP tools both do them (``service``'s
rule: one behaviour, two transports). Groups are already authorized by the caller; every correction
names its ``author`` (a person: ``alice`` or ``person:alice``) and runs under the group's lock of the
ingestion queue (``KnowledgeGraph`` takes it), so no episode of the group is ingested halfway through it.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import asdict
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ..edit import UNSET
from ..edit.build import MaybeTime
from ..graph.corrections import AUTHOR_GIVEN
from ..present.corrections import correction_dict, correction_record
from ..transfer import read
from .schemas import NOT_BLANK, Timestamp
from .service import ServerState, group


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


AUTHOR = "who makes it: a person's name (alice), or kind:name (person:alice)"
RELATION = r"^[A-Za-z][A-Za-z0-9]*(?:[ _-][A-Za-z0-9]+)*$"
"""A relation as words (``works at``, ``WORKS_AT``): made SCREAMING_SNAKE_CASE, never refused then."""
NAME = "[^" + "".join(f"\\u{c:04x}" for c in range(0x10000) if chr(c).isspace()) + ".,;:!?\"'`()\\[\\]{}]"
"""A pattern: one character an entity name keeps once normalized (``model.normalize_name`` strips
whitespace and outer punctuation), so a name that matches it names something."""
Ref = Annotated[str, Field(min_length=1, max_length=1000, pattern=NOT_BLANK)]
"""An entity as a person names it: a uuid, a name or an alias (a ref naming none: 404)."""
NewName = Annotated[str, Field(min_length=1, max_length=1000, pattern=NAME)]
"""A name an entity may get (created by ``create``, or by a rename)."""


class Authored(_Body):
    author: str = Field(min_length=1, max_length=161, pattern=AUTHOR_GIVEN, description=AUTHOR)
    reason: str = Field(default="", max_length=2000, description="why (kept with the correction)")


class FactIn(Authored):
    """A fact added by hand between two entities named by uuid, name or alias."""

    source: NewName
    relation: str = Field(min_length=1, max_length=64, pattern=RELATION, description="WORKS_AT, or works at")
    target: NewName
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
    """The fields to change (at least one); a time sent as null is cleared, one left out stays."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "anyOf": [{"required": [name]} for name in ("text", "relation", "valid_at", "invalid_at")]
        },
    )

    text: str | None = Field(default=None, max_length=2000, pattern=NOT_BLANK)
    relation: str | None = Field(default=None, max_length=64, pattern=RELATION)
    valid_at: Timestamp | None = None
    invalid_at: Timestamp | None = None

    @model_validator(mode="after")
    def _changes_something(self) -> FactEdit:
        if not self.model_fields_set & {"text", "relation", "valid_at", "invalid_at"}:
            raise ValueError("nothing to change: give text, relation, valid_at or invalid_at")
        return self

    def time(self, name: str) -> MaybeTime:
        value: Timestamp | None = getattr(self, name)
        return value if name in self.model_fields_set else UNSET


class MergeIn(Authored):
    keep: Ref = Field(description="the entity that stays")
    merge: Ref = Field(description="the entity folded into it")


class UnmergeIn(Authored):
    entity: Ref = Field(description="undo the latest merge into it")


class RenameIn(Authored):
    entity: Ref
    name: NewName
    keep_alias: bool = Field(default=True, description="keep the old name as an alias")


class UndoIn(Authored):
    correction: str = Field(min_length=1, max_length=256, description="the correction's uuid")


async def add_fact(state: ServerState, group_id: str, body: FactIn) -> dict[str, Any]:
    made = await group(state, group_id).corrections.add_fact(
        body.source, body.relation, body.target, text=body.text, valid_at=body.valid_at,
        invalid_at=body.invalid_at, create=body.create, retires=body.retires, author=body.author,
        reason=body.reason,
    )  # fmt: skip
    return correction_record(made)


async def retire_fact(state: ServerState, group_id: str, uuid: str, body: RetireIn) -> dict[str, Any]:
    made = await group(state, group_id).corrections.retire_fact(
        uuid, at=body.at, author=body.author, reason=body.reason
    )
    return correction_record(made)


async def edit_fact(state: ServerState, group_id: str, uuid: str, body: FactEdit) -> dict[str, Any]:
    made = await group(state, group_id).corrections.edit_fact(
        uuid, text=body.text, relation=body.relation, valid_at=body.time("valid_at"),
        invalid_at=body.time("invalid_at"), author=body.author, reason=body.reason,
    )  # fmt: skip
    return correction_record(made)


async def delete_fact(
    state: ServerState, group_id: str, uuid: str, author: str, reason: str = ""
) -> dict[str, Any]:
    made = await group(state, group_id).corrections.delete_fact(uuid, author=author, reason=reason)
    return correction_record(made)


async def merge(state: ServerState, group_id: str, body: MergeIn) -> dict[str, Any]:
    made = await group(state, group_id).corrections.merge_entities(
        body.keep, body.merge, author=body.author, reason=body.reason
    )
    return correction_record(made)


async def unmerge(state: ServerState, group_id: str, body: UnmergeIn) -> dict[str, Any]:
    made = await group(state, group_id).corrections.unmerge_entities(
        body.entity, author=body.author, reason=body.reason
    )
    return correction_record(made)


async def rename(state: ServerState, group_id: str, body: RenameIn) -> dict[str, Any]:
    made = await group(state, group_id).corrections.rename_entity(
        body.entity, body.name, keep_alias=body.keep_alias, author=body.author, reason=body.reason,
    )  # fmt: skip
    return correction_record(made)


async def undo(state: ServerState, group_id: str, body: UndoIn) -> dict[str, Any]:
    corrections = group(state, group_id).corrections
    made = await corrections.undo(body.correction, author=body.author, reason=body.reason)
    return correction_record(made)


async def corrections(
    state: ServerState, group_id: str, entity: str | None = None, limit: int = 50
) -> dict[str, Any]:
    async with state.intake.priority.foreground():
        found = await group(state, group_id).corrections.history(entity=entity, limit=limit)
    return {"group_id": group_id, "corrections": [correction_dict(c) for c in found]}


async def correction(state: ServerState, group_id: str, uuid: str) -> dict[str, Any]:
    async with state.intake.priority.foreground():
        return correction_record(await group(state, group_id).corrections.get(uuid))


async def delete_group(state: ServerState, group_id: str) -> dict[str, Any]:
    """Everything in the group (the caller made sure it is meant: confirm=yes, or the group's id)."""
    held = await group(state, group_id).delete_group()
    return {"group_id": group_id, "deleted": asdict(held)}


def export_lines(state: ServerState, group_id: str, vectors: bool) -> AsyncIterator[str]:
    return group(state, group_id).transfer.export_lines(vectors=vectors)


async def load(state: ServerState, group_id: str, text: str) -> dict[str, Any]:
    """Load a dump's one group as ``group_id`` (checked whole first: InputError naming the line)."""
    dump = await asyncio.to_thread(read, text.splitlines(), "body")
    report = await group(state, group_id).transfer.load(dump, into=group_id)
    return {"group_id": group_id, **asdict(report)}
