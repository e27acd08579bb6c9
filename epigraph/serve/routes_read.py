"""Routes that read: search, an entity's view and history, episodes of a time range, what changed in a
window, group stats."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request

from ..graph.changes import ChangeKind
from ..graph.model import EpisodeStatus
from . import service
from .deps import ERRORS, Group, state_of
from .schemas import EntityName, FactId, RecipeName, SearchScope, SearchText, Timestamp

router = APIRouter(prefix="/groups/{group_id}", tags=["reading"])

Limit = Annotated[int, Query(ge=1, le=100, description="results per kind")]


@router.get("/search", responses=ERRORS)
async def search(
    request: Request,
    group_id: Group,
    q: SearchText,
    scope: SearchScope = "all",
    recipe_name: Annotated[RecipeName | None, Query(alias="recipe")] = None,
    as_of: Timestamp | None = None,
    known_at: Timestamp | None = None,
    include_retired: bool = False,
    limit: Limit = 10,
) -> dict[str, Any]:
    """Hybrid search of facts, entities and episodes (``scope``), or by a named ``recipe``; facts true
    now unless ``as_of`` (event time) or ``known_at`` (what the graph knew then) say otherwise."""
    return await service.search(
        state_of(request), group_id, q, scope=scope, recipe_name=recipe_name, as_of=as_of,
        known_at=known_at, include_retired=include_retired, limit=limit,
    )  # fmt: skip


@router.get("/facts/{uuid}/explain", responses={**ERRORS, 404: {"description": "no such fact"}})
async def explain_fact(request: Request, group_id: Group, uuid: FactId) -> dict[str, Any]:
    """Why the group holds this fact: the chain from the message to what the graph holds now, in a few
    lines (the episodes that said it and the line of the model's reply, what decided it, the words that
    dated it, what retired it, corrections by hand)."""
    return await service.explain(state_of(request), group_id, uuid, "fact")


@router.get(
    "/entities/{name:path}/explain", responses={**ERRORS, 404: {"description": "no such entity or name"}}
)
async def explain_entity(request: Request, group_id: Group, name: EntityName) -> dict[str, Any]:
    """Why the group holds this entity (a name, alias or uuid), or refused the name: the episodes that
    named it and how each name was resolved (new, the same name, merged by the resolve call and the
    candidates shown), the names a gate refused or repaired, merges and renames by hand."""
    return await service.explain(state_of(request), group_id, name, "entity")


@router.get("/entities/{name:path}/history", responses={**ERRORS, 404: {"description": "no such entity"}})
async def entity_history(
    request: Request, group_id: Group, name: EntityName, as_of: Timestamp | None = None
) -> dict[str, Any]:
    """An entity's retired facts: when each ended, which fact and episode retired it (``as_of``: those
    that had ended by then)."""
    data = await service.entity(state_of(request), group_id, name, as_of=as_of)
    return {"entity": data["entity"], "history": data["history"], "as_of": data["as_of"]}


@router.get("/entities/{name:path}", responses={**ERRORS, 404: {"description": "no such entity"}})
async def entity(
    request: Request, group_id: Group, name: EntityName, as_of: Timestamp | None = None
) -> dict[str, Any]:
    """An entity by name, alias or uuid: summary, aliases, current facts, history, episodes; ``as_of``:
    as it was then (its aliases, mentions and the episodes said by then, the facts current then, the
    history by then; a summary written later withheld, ``summary_note`` saying so; 404 when nothing said
    by then names it)."""
    return await service.entity(state_of(request), group_id, name, as_of=as_of)


@router.get("/episodes", responses=ERRORS)
async def episodes(
    request: Request,
    group_id: Group,
    since: Timestamp | None = None,
    until: Timestamp | None = None,
    status: EpisodeStatus | None = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> dict[str, Any]:
    """Episodes whose reference time is in ``[since, until)``, newest first."""
    return await service.episodes(
        state_of(request), group_id, since=since, until=until, status=status, limit=limit
    )


@router.get("/changes", responses=ERRORS)
async def changes(
    request: Request,
    group_id: Group,
    since: Timestamp | None = None,
    until: Timestamp | None = None,
    kind: Annotated[list[ChangeKind] | None, Query(description="only these kinds (repeatable)")] = None,
    limit: Annotated[
        int, Query(ge=1, le=1000, description="facts, corrections and forgettings read, at most")
    ] = 1000,
) -> dict[str, Any]:
    """What changed in ``[since, until)`` (half-open; an unset side is no bound), grouped by entity:
    facts that started or ended (event time), were learned, retired, corrected, merged or forgotten
    (system time), each with both axes' times and its sources (episode ids and names, the correction;
    a forgotten fact: its id and its forgetting's audit record, never its text)."""
    kinds = [k.value for k in kind] if kind else None
    return await service.changes(
        state_of(request), group_id, since=since, until=until, kinds=kinds, limit=limit
    )


@router.get("/stats", responses=ERRORS)
async def stats(request: Request, group_id: Group) -> dict[str, Any]:
    """Counts of the group's episodes (and how many are pending / failed), entities and facts."""
    return await service.stats(state_of(request), group_id)
