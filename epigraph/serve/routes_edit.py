"""Routes of corrections by hand: add, retire, edit or delete a fact; merge, unmerge or rename entities;
list, read and undo corrections; delete a whole group. Each answers the correction it recorded (its
records before and after, its author); 409 when the graph changed under it (nothing written)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse

from ..graph.corrections import AUTHOR_GIVEN
from . import editing
from .deps import ERRORS, Group, state_of
from .editing import AUTHOR, FactEdit, FactIn, MergeIn, RenameIn, RetireIn, UndoIn, UnmergeIn
from .schemas import NOT_BLANK

router = APIRouter(prefix="/groups/{group_id}", tags=["corrections"])

Responses = dict[int | str, dict[str, Any]]
_CHANGED: Responses = {
    409: {"description": "the graph changed under the correction, or an undo would lose a later change; "
          "nothing was written"}
}  # fmt: skip
_NO_FACT: Responses = {404: {"description": "no such fact in the group"}}
_NO_ENTITY: Responses = {404: {"description": "no such entity in the group"}}
_UNAVAILABLE: Responses = {503: {"description": "the graph store is unavailable"}}
_WRITES: Responses = {**ERRORS, **_CHANGED, **_UNAVAILABLE}


@router.post("/facts", status_code=201, responses={**_WRITES, **_NO_ENTITY})
async def add_fact(request: Request, group_id: Group, body: FactIn) -> JSONResponse:
    """Add a fact between two entities (by uuid, name or alias; ``create`` makes missing ones). It cites
    no episode: its source is the ``author``."""
    made = await editing.add_fact(state_of(request), group_id, body)
    return JSONResponse(made, status_code=201)


@router.post("/facts/{uuid}/retire", responses={**_WRITES, **_NO_FACT})
async def retire_fact(request: Request, group_id: Group, uuid: str, body: RetireIn) -> dict[str, Any]:
    """The fact stopped being true at ``at`` (default: now); the graph learns it now."""
    return await editing.retire_fact(state_of(request), group_id, uuid, body)


@router.patch("/facts/{uuid}", responses={**_WRITES, **_NO_FACT})
async def edit_fact(request: Request, group_id: Group, uuid: str, body: FactEdit) -> dict[str, Any]:
    """Correct a fact's text, relation or event time in place (a time sent as null is cleared)."""
    return await editing.edit_fact(state_of(request), group_id, uuid, body)


@router.delete("/facts/{uuid}", responses={**_WRITES, **_NO_FACT})
async def delete_fact(
    request: Request,
    group_id: Group,
    uuid: str,
    author: Annotated[str, Query(min_length=1, max_length=161, pattern=AUTHOR_GIVEN, description=AUTHOR)],
    reason: Annotated[str, Query(max_length=2000)] = "",
) -> dict[str, Any]:
    """Delete a fact; the facts it retired come back. The correction keeps it: undo restores it."""
    return await editing.delete_fact(state_of(request), group_id, uuid, author, reason)


@router.post("/entities/merge", responses={**_WRITES, **_NO_ENTITY})
async def merge_entities(request: Request, group_id: Group, body: MergeIn) -> dict[str, Any]:
    """Fold ``merge`` into ``keep``: names become aliases, facts and mentions move, summaries rewritten."""
    return await editing.merge(state_of(request), group_id, body)


@router.post("/entities/unmerge", responses={**_WRITES, **_NO_ENTITY})
async def unmerge_entities(request: Request, group_id: Group, body: UnmergeIn) -> dict[str, Any]:
    """Undo the latest merge into ``entity`` (exactly, while nothing it wrote changed since)."""
    return await editing.unmerge(state_of(request), group_id, body)


@router.post("/entities/rename", responses={**_WRITES, **_NO_ENTITY})
async def rename_entity(request: Request, group_id: Group, body: RenameIn) -> dict[str, Any]:
    """Rename an entity; the old name stays an alias unless ``keep_alias`` is false."""
    return await editing.rename(state_of(request), group_id, body)


@router.get("/corrections", responses={**ERRORS, **_NO_ENTITY, **_UNAVAILABLE})
async def corrections(
    request: Request,
    group_id: Group,
    entity: Annotated[
        str | None,
        Query(min_length=1, max_length=1000, pattern=NOT_BLANK, description="only those touching it"),
    ] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 50,
) -> dict[str, Any]:
    """The group's corrections by hand, newest first: who, when, what, why."""
    return await editing.corrections(state_of(request), group_id, entity, limit)


@router.post("/corrections/undo", responses={**_WRITES, 404: {"description": "no such correction"}})
async def undo(request: Request, group_id: Group, body: UndoIn) -> dict[str, Any]:
    """Apply a correction backwards, while the graph still holds what it wrote (409 otherwise)."""
    return await editing.undo(state_of(request), group_id, body)


@router.get("/corrections/{uuid}", responses={**ERRORS, 404: {"description": "no such correction"}})
async def correction(request: Request, group_id: Group, uuid: str) -> dict[str, Any]:
    """One correction in full: its records before and after, author, time, reason."""
    return await editing.correction(state_of(request), group_id, uuid)


group_router = APIRouter(tags=["corrections"])


@group_router.delete("/groups/{group_id}", responses={**ERRORS, **_UNAVAILABLE})
async def delete_group(
    request: Request,
    group_id: Group,
    confirm: Annotated[Literal["yes"], Query(description="yes: delete everything in the group")],
) -> dict[str, Any]:
    """Delete everything in the group (episodes, entities, facts, corrections): not undoable, so it
    takes ``confirm=yes``. Export it first."""
    return await editing.delete_group(state_of(request), group_id)
