"""Routes of the big picture: a group's communities (now or as of a time) and its conversations with
their running summaries; each kind can be brought up to date on request (model calls), besides what the
ingestion queue does after each batch it drains (conversations; communities a group already has)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request

from . import service
from .deps import ERRORS, Group, state_of
from .schemas import ConversationKey, ConversationsUpdateIn, Timestamp

router = APIRouter(prefix="/groups/{group_id}", tags=["overview"])
_MODEL = {**ERRORS, 502: {"description": "the language model failed"}, 503: {"description": "no LLM"}}


@router.get("/communities", responses=ERRORS)
async def communities(
    request: Request, group_id: Group, as_of: Timestamp | None = None, known_at: Timestamp | None = None
) -> dict[str, Any]:
    """The group's communities, largest first, with their members. With ``as_of`` (event time) or
    ``known_at`` (system time): the clusters of the facts that held then, named by the stored
    communities they continue (``stored: false`` for one that continues none)."""
    return await service.communities(state_of(request), group_id, as_of=as_of, known_at=known_at)


@router.post("/communities/update", responses=_MODEL)
async def update_communities(request: Request, group_id: Group, rebuild: bool = False) -> dict[str, Any]:
    """Bring the communities up to date with the facts (only changed ones are summarized again), or
    ``rebuild`` them from scratch; answers the update's cost and the communities."""
    return await service.update_communities(state_of(request), group_id, rebuild=rebuild)


@router.get("/conversations", responses=ERRORS)
async def conversations(request: Request, group_id: Group) -> dict[str, Any]:
    """The group's conversations (episodes sharing a source), each with its running summary."""
    return await service.conversations(state_of(request), group_id)


@router.post("/conversations/update", responses=_MODEL)
async def update_conversations(
    request: Request, group_id: Group, body: ConversationsUpdateIn | None = None
) -> dict[str, Any]:
    """Fold new episodes into the summaries of the conversations named (default: every one behind)."""
    asked = body or ConversationsUpdateIn()
    return await service.update_conversations(state_of(request), group_id, asked.keys, rebuild=asked.rebuild)


@router.get("/conversations/{key:path}", responses={**ERRORS, 404: {"description": "no such conversation"}})
async def conversation(
    request: Request,
    group_id: Group,
    key: ConversationKey,
    limit: Annotated[int, Query(ge=1, le=1000, description="its latest episodes")] = 50,
) -> dict[str, Any]:
    """One conversation: its summary and its latest episodes in order, each with its previous and next."""
    return await service.conversation(state_of(request), group_id, key, limit=limit)
