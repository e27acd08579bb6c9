"""What every route shares: the server's state, the authorized group of a request, the API version and
the error responses every group route documents. The routes import this module, never ``app`` (which
imports them)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, Request, Security
from fastapi import Path as PathParam
from fastapi.dependencies.models import Dependant
from fastapi.exceptions import RequestValidationError
from fastapi.routing import APIRoute
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from ..graph.model import GROUP_ID_RE
from .auth import key_from_headers
from .service import ServerState

API_VERSION = "v1"

ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"description": "no key or an unknown key"},
    403: {"description": "the key may not use this group"},
    413: {"description": "body or batch too large"},
    422: {"description": "invalid input, or a query parameter the route does not take; `field` names it"},
}
"""The error responses of every route under ``/groups/{group_id}`` (OpenAPI ``responses``)."""


def state_of(request: Request) -> ServerState:
    state: ServerState = request.app.state.server
    return state


_bearer = HTTPBearer(auto_error=False, description="an API key (or X-API-Key); it names its groups")


_Credentials = Annotated[HTTPAuthorizationCredentials | None, Security(_bearer)]


# Documented, and checked by ``Keys.group`` once the key is known (401 before 422 before 403)
_GROUP_ID = PathParam(
    description="the group: 1-128 characters of A-Z a-z 0-9 _ . : @ -",
    json_schema_extra={"pattern": f"^{GROUP_ID_RE.pattern}$", "minLength": 1, "maxLength": 128},
)


async def authorized_group(request: Request, group_id: Annotated[str, _GROUP_ID], _: _Credentials) -> str:
    """The path's group, once the request's key may use it (401 / 403 / 422 otherwise). A coroutine,
    though it never awaits: FastAPI runs a plain function dependency on its thread pool, two thread
    hops per request that wait for a core under load."""
    return state_of(request).keys.group(key_from_headers(request.headers), group_id)


Group = Annotated[str, Depends(authorized_group)]


_TAKES: dict[int, frozenset[str]] = {}


def _query_names(route: APIRoute) -> frozenset[str]:
    """The query parameters ``route`` declares (its dependencies' included), by their names in the URL."""
    names = _TAKES.get(id(route))
    if names is None:
        names = frozenset(_declared(route.dependant))
        _TAKES[id(route)] = names
    return names


def _declared(dependant: Dependant) -> list[str]:
    return [
        *(p.alias for p in dependant.query_params),
        *(n for d in dependant.dependencies for n in _declared(d)),
    ]


async def known_query(request: Request) -> None:
    """Refuse a query parameter the route does not take (422 naming it), on every ``/v1`` route: a
    misspelt or unsupported ``as_of`` silently ignored would answer another question than the one asked.
    (A coroutine for the reason :func:`authorized_group` gives.)"""
    route = request.scope.get("route")
    if not isinstance(route, APIRoute):
        return
    takes = _query_names(route)
    for name in request.query_params:
        if name not in takes:
            allowed = ", ".join(sorted(takes)) or "none"
            message = f"unknown query parameter {name!r} (this route takes: {allowed})"
            raise RequestValidationError(
                [{"type": "extra_forbidden", "loc": ("query", name), "msg": message}]
            )


QUERY_CHECKED = [Depends(known_query)]
"""The dependencies of every ``/v1`` route (its routers' and the health routes'): an unknown query
parameter is a 422 naming it, never ignored."""
