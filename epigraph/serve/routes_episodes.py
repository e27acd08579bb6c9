"""Routes that write: add episodes (one or a batch; 202 once stored ``pending``), read one episode's
status and report, delete one, retry the failed ones."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from . import service
from .deps import ERRORS, Group, state_of
from .schemas import Accepted, EpisodeBatch, EpisodeId, EpisodeIn

router = APIRouter(prefix="/groups/{group_id}/episodes", tags=["episodes"])
ADDING = {**ERRORS, 409: {"description": "an episode's id is taken by an episode with other content; "
                          "nothing of the request was stored"}}  # fmt: skip


async def _accept(request: Request, group_id: str, episodes: list[EpisodeIn]) -> JSONResponse:
    accepted = await service.add(state_of(request), group_id, episodes)
    return JSONResponse(accepted.model_dump(), status_code=202)


@router.post("", status_code=202, response_model=Accepted, responses=ADDING)
async def add_episode(request: Request, group_id: Group, episode: EpisodeIn) -> JSONResponse:
    """Add one episode: answered once it is stored ``pending``; ingested in order with the group's
    others."""
    return await _accept(request, group_id, [episode])


@router.post("/batch", status_code=202, response_model=Accepted, responses=ADDING)
async def add_episodes(request: Request, group_id: Group, batch: EpisodeBatch) -> JSONResponse:
    """Add a batch of episodes, in order: answered once every one is stored ``pending``."""
    return await _accept(request, group_id, batch.episodes)


@router.post("/retry", status_code=202, response_model=Accepted, responses=ERRORS)
async def retry_failed(request: Request, group_id: Group) -> JSONResponse:
    """Run the group's failed episodes again, in order (they are ``pending`` when this answers)."""
    again = await service.retry_failed(state_of(request), group_id)
    return JSONResponse(again.model_dump(), status_code=202)


@router.get("/{uuid:path}", responses={**ERRORS, 404: {"description": "no such episode in the group"}})
async def get_episode(request: Request, group_id: Group, uuid: EpisodeId) -> dict[str, Any]:
    """One episode: content, status (pending, done, failed), error and ingestion report."""
    return await service.episode(state_of(request), group_id, uuid)


@router.delete("/{uuid:path}", responses={**ERRORS, 404: {"description": "no such episode in the group"}})
async def delete_episode(request: Request, group_id: Group, uuid: EpisodeId) -> dict[str, Any]:
    """Delete an episode: facts only it supported go, facts it retired come back, summaries refresh."""
    return await service.remove(state_of(request), group_id, uuid)
