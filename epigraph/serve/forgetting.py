"""Forgetting, as the HTTP routes and MCP tools both do it (``service``'s rule: one behaviour, two
transports): a subject previewed or forgotten, the audit records, the group's retention (the passes
``epigraph serve`` runs on its schedule are ``service.retention_passes``).

Bodies carry no name back: a preview or a forgetting answers counts and ids (``ForgetResult.to_dict``);
the logs say which group and record, never whom.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from ..graph.forgetting import EpisodesChoice
from .schemas import NOT_BLANK
from .service import ServerState, group

PLAN = r"^[0-9a-f]{32}$"
"""A plan's digest, as a preview answers it."""
Spelling = Annotated[str, Field(min_length=1, max_length=1000, pattern=NOT_BLANK)]


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


NO_CONTROL = r"^[^\x00-\x1f\x7f-\x9f]+$"


class ApplyIn(_Body):
    apply: bool = Field(default=False, description="forget it (false: a preview, nothing changes)")
    expect: str | None = Field(
        default=None, pattern=PLAN, description="apply only this plan (a preview's digest)"
    )


class ForgetIn(ApplyIn):
    """A subject to forget: an entity's id, name or alias."""

    subject: Spelling = Field(description="the entity's id, name or alias (a name two entities share: 422)")
    episodes: EpisodesChoice = Field(
        default="redact", description="redact (the name taken out) or delete the episodes that mention it"
    )
    also: list[Spelling] = Field(
        default_factory=list, max_length=20, description="other spellings to take out"
    )
    placeholder: str | None = Field(
        default=None, min_length=1, max_length=64, pattern=NO_CONTROL,
        description="what replaces the name (default [forgotten])",
    )  # fmt: skip


class RetentionIn(_Body):
    days: int = Field(ge=1, le=36_500, description="keep the group's episodes this many days")


async def forget(state: ServerState, group_id: str, body: ForgetIn, call: str) -> dict[str, Any]:
    result = await group(state, group_id).forget(
        body.subject, episodes=body.episodes, also=body.also, placeholder=body.placeholder,
        apply=body.apply, expect=body.expect, call=call,
    )  # fmt: skip
    return result.to_dict()


async def forgotten(state: ServerState, group_id: str, name: str | None, limit: int) -> dict[str, Any]:
    async with state.intake.priority.foreground():
        records = await group(state, group_id).forget.history(name=name, limit=limit)
    return {"group_id": group_id, "forgotten": [r.model_dump(mode="json") for r in records]}


async def retention(state: ServerState, group_id: str) -> dict[str, Any]:
    policy = await group(state, group_id).forget.retention()
    return {"group_id": group_id, "retention": None if policy is None else policy.model_dump(mode="json")}


async def set_retention(state: ServerState, group_id: str, body: RetentionIn) -> dict[str, Any]:
    policy = await group(state, group_id).forget.set_retention(body.days)
    return {"group_id": group_id, "retention": policy.model_dump(mode="json")}


async def clear_retention(state: ServerState, group_id: str) -> dict[str, Any]:
    return {"group_id": group_id, "cleared": await group(state, group_id).forget.clear_retention()}


async def apply_retention(state: ServerState, group_id: str, body: ApplyIn, call: str) -> dict[str, Any]:
    forgetting = group(state, group_id).forget
    result = await forgetting.apply_retention(apply=body.apply, expect=body.expect, call=call)
    return result.to_dict()
