"""The interactive view, served: the page at ``/`` (search box, ask box, the same view a notebook shows)
and the JSON it fetches under ``/v1/groups/{group_id}/explore`` (the shape of
:mod:`epigraph.explore.payload`, merged into the picture by the page).

The page itself holds no data and needs no key; every fetch it makes goes through the same key and
group checks as the rest of the API (the page asks for the key when keys are on). Ask answers stream
from the existing SSE route (``POST /v1/groups/{group_id}/ask``) and the page lights up the cited facts.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, FastAPI, Query, Request
from fastapi.responses import HTMLResponse

from ..explore import page, payload
from ..explore.gather import AROUND
from . import service
from .deps import API_VERSION, ERRORS, QUERY_CHECKED, Group, state_of
from .schemas import EntityName, SearchText

router = APIRouter(prefix=f"/{API_VERSION}/groups/{{group_id}}/explore", tags=["explore"])
_NOT_FOUND = {**ERRORS, 404: {"description": "no such entity"}}


def register(app: FastAPI) -> None:
    """Add the page and its JSON routes to the app (``create_app`` calls this)."""
    app.include_router(router, dependencies=QUERY_CHECKED)
    app.add_api_route("/", index, methods=["GET"], response_class=HTMLResponse, include_in_schema=False)


async def index(request: Request, group: Annotated[str | None, Query(max_length=256)] = None) -> HTMLResponse:
    """The page: a search box, an ask box and the interactive view (``?q=...`` searches at once)."""
    state = state_of(request)
    api = {
        "base": f"/{API_VERSION}",
        "group": group or service.default_group(state),
        "keys": state.keys.enabled,
    }
    empty = payload.build({}, [], title="epigraph")
    html = page.document(empty, api=api, title="epigraph")
    return HTMLResponse(html, headers={"Cache-Control": "no-store"})


@router.get("/search", responses=ERRORS)
async def search(
    request: Request,
    group_id: Group,
    q: SearchText,
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
) -> dict[str, Any]:
    """What a search finds (retired facts too) and the neighbourhood around it, as the view's data."""
    return await service.explore_search(state_of(request), group_id, q, limit=limit)


@router.get("/entity/{name:path}", responses=_NOT_FOUND)
async def entity(
    request: Request,
    group_id: Group,
    name: EntityName,
    depth: Annotated[int, Query(ge=1, le=3)] = 1,
    around: Annotated[int, Query(ge=0, le=1000, description="neighbourhood facts to embed")] = AROUND,
) -> dict[str, Any]:
    """An entity's neighbourhood (a name, an alias or a uuid) as the view's data; ``around=0`` when
    the page expands a node."""
    return await service.explore_entity(state_of(request), group_id, name, depth=depth, around=around)


@router.get("/facts", responses=ERRORS)
async def facts(
    request: Request,
    group_id: Group,
    ids: Annotated[str, Query(min_length=1, max_length=20_000, description="fact uuids, comma-separated")],
) -> dict[str, Any]:
    """Just these facts and their endpoints (the page asks for the facts an answer cited)."""
    uuids = [u for u in (part.strip() for part in ids.split(",")) if u][:200]
    return await service.explore_facts(state_of(request), group_id, uuids)
