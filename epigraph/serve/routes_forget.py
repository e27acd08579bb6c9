"""Routes of forgetting: a subject previewed or forgotten (``POST .../forget``), the audit records
(``GET .../forgotten``) and the group's retention (``GET``/``PUT``/``DELETE .../retention``,
``POST .../retention/apply``). A forgetting answers what goes or is rewritten (counts and ids, never a
name) and its plan's digest; ``apply: true`` forgets it in one transaction (``expect``: only that plan,
409 when the group changed since)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request

from . import forgetting
from .deps import ERRORS, Group, state_of
from .forgetting import ApplyIn, ForgetIn, RetentionIn
from .schemas import NOT_BLANK

router = APIRouter(prefix="/groups/{group_id}", tags=["forgetting"])

Responses = dict[int | str, dict[str, Any]]
_WRITES: Responses = {
    **ERRORS,
    409: {
        "description": "the group changed since the plan given (expect) was previewed; nothing was written"
    },
    503: {"description": "the graph store is unavailable"},
}
_NO_ENTITY: Responses = {404: {"description": "no entity of that id, name or alias in the group"}}


@router.post("/forget", responses={**_WRITES, **_NO_ENTITY})
async def forget(request: Request, group_id: Group, body: ForgetIn) -> dict[str, Any]:
    """Forget an entity: itself, its aliases and vectors, every fact with it as an end, its name in
    everything that stays; the episodes that mention it redacted or deleted. A preview unless
    ``apply``."""
    return await forgetting.forget(state_of(request), group_id, body, call="http")


@router.get("/forgotten", responses={**ERRORS, 503: _WRITES[503]})
async def forgotten(
    request: Request,
    group_id: Group,
    name: Annotated[
        str | None,
        Query(min_length=1, max_length=1000, pattern=NOT_BLANK, description="only those that forgot it"),
    ] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 50,
) -> dict[str, Any]:
    """The audit records of what was forgotten, newest first (the subject only as a salted hash)."""
    return await forgetting.forgotten(state_of(request), group_id, name, limit)


@router.get("/retention", responses={**ERRORS, 503: _WRITES[503]})
async def retention(request: Request, group_id: Group) -> dict[str, Any]:
    """The group's retention policy (null: it keeps everything)."""
    return await forgetting.retention(state_of(request), group_id)


@router.put("/retention", responses={**ERRORS, 503: _WRITES[503]})
async def set_retention(request: Request, group_id: Group, body: RetentionIn) -> dict[str, Any]:
    """Keep the group's episodes ``days`` days: older ones, and what only they support, are forgotten by
    the server's retention passes (or ``POST .../retention/apply``)."""
    return await forgetting.set_retention(state_of(request), group_id, body)


@router.delete("/retention", responses={**ERRORS, 503: _WRITES[503]})
async def clear_retention(request: Request, group_id: Group) -> dict[str, Any]:
    """Keep everything again."""
    return await forgetting.clear_retention(state_of(request), group_id)


@router.post("/retention/apply", responses={**_WRITES, 404: {"description": "the group has no policy"}})
async def apply_retention(request: Request, group_id: Group, body: ApplyIn) -> dict[str, Any]:
    """The episodes the policy forgets now: a preview, or forgotten with ``apply``."""
    return await forgetting.apply_retention(state_of(request), group_id, body, call="http")
