"""The HTTP API's app factory: ``create_app(kg, keys=..., limits=...)`` -> a FastAPI app (OpenAPI at
``/openapi.json``, docs at ``/docs``), every route under ``/v1``.

The app owns the ingestion workers (:mod:`.worker`); its lifespan opens the graph, resumes every group's
``pending`` episodes and, at shutdown, stops the workers (an interrupted episode stays ``pending`` and is
resumed at the next start). Errors map to status codes here, one place: bad input 422, unknown things 404,
the LLM failing 502, the store failing 503; every body is ``{"detail": ..., "field": ...}``.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Request, Security
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from ..client import KnowledgeGraph
from ..errors import LLMError, NotFound, StoreError
from .auth import AuthError, BadGroup, Keys, key_from_headers
from .schemas import BodyLimit, LimitExceeded, Limits, error_body
from .service import ServerState, running
from .worker import GroupRegistry, Workers

log = logging.getLogger("epigraph.serve")

API_VERSION = "v1"


def state_of(request: Request) -> ServerState:
    state: ServerState = request.app.state.server
    return state


_bearer = HTTPBearer(auto_error=False, description="an API key (or X-API-Key); it names its groups")


_Credentials = Annotated[HTTPAuthorizationCredentials | None, Security(_bearer)]


async def authorized_group(request: Request, group_id: str, _: _Credentials) -> str:
    """The path's group, once the request's key may use it (401 / 403 / 422 otherwise). A coroutine,
    though it never awaits: FastAPI runs a plain function dependency on its thread pool, two thread
    hops per request that wait for a core under load."""
    return state_of(request).keys.group(key_from_headers(request.headers), group_id)


Group = Annotated[str, Depends(authorized_group)]


def create_app(
    kg: KnowledgeGraph,
    *,
    keys: Keys | None = None,
    limits: Limits | None = None,
    groups_file: Path | None = None,
    close_graph: bool = True,
    publish: bool = False,
) -> FastAPI:
    """The API over ``kg``. ``groups_file``: where the groups to resume are recorded (None: nowhere,
    for a graph in memory); ``close_graph``: close ``kg`` when the app stops; ``publish``: added episodes
    go to Kafka (``kg.settings.kafka_bootstrap``) for ``epigraph worker`` processes."""
    workers = Workers(kg, GroupRegistry(groups_file))
    state = ServerState(kg, keys or Keys({}), limits or Limits(), workers, publish=publish)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        async with running(state, close_graph=close_graph):
            yield

    app = FastAPI(
        title="epigraph",
        version="0.1.0",
        description="A temporal knowledge graph of chat episodes: add episodes, search, explore, ask.",
        lifespan=lifespan,
    )
    app.state.server = state
    app.add_middleware(BodyLimit, max_bytes=state.limits.max_body_bytes)
    _error_handlers(app)
    from . import routes_ask, routes_episodes, routes_explore, routes_read

    app.include_router(routes_episodes.router, prefix=f"/{API_VERSION}")
    app.include_router(routes_read.router, prefix=f"/{API_VERSION}")
    app.include_router(routes_ask.router, prefix=f"/{API_VERSION}")
    routes_explore.register(app)  # the page at / and its JSON (the interactive view)
    _health(app)
    return app


def _health(app: FastAPI) -> None:
    @app.get(f"/{API_VERSION}/health", tags=["health"])
    async def health() -> dict[str, str]:
        """The process answers."""
        return {"status": "ok"}

    @app.get(f"/{API_VERSION}/ready", tags=["health"], responses={503: {"description": "not ready"}})
    async def ready(request: Request) -> JSONResponse:
        """The graph is open and pending episodes were resumed."""
        state = state_of(request)
        body = {"ready": state.ready, "llm": state.kg.llm is not None}
        return JSONResponse(body, status_code=200 if state.ready else 503)


def _json_error(status: int, field: str | None, message: str) -> JSONResponse:
    return JSONResponse(error_body(field, message), status_code=status)


def _error_handlers(app: FastAPI) -> None:
    @app.exception_handler(AuthError)
    async def auth_error(_: Request, exc: AuthError) -> JSONResponse:
        headers = {"WWW-Authenticate": "Bearer"} if exc.status == 401 else None
        return JSONResponse(error_body(None, exc.detail), status_code=exc.status, headers=headers)

    @app.exception_handler(BadGroup)
    async def bad_group(_: Request, exc: BadGroup) -> JSONResponse:
        return _json_error(422, "group_id", str(exc))

    @app.exception_handler(LimitExceeded)
    async def limit(_: Request, exc: LimitExceeded) -> JSONResponse:
        return _json_error(exc.status, exc.field, exc.message)

    @app.exception_handler(RequestValidationError)
    async def invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        errors: list[Any] = list(exc.errors())
        first = errors[0] if errors else {}
        field = ".".join(str(p) for p in first.get("loc", ())[1:]) or None
        message = "; ".join(f"{'.'.join(str(p) for p in e.get('loc', ()))}: {e.get('msg')}" for e in errors)
        return _json_error(422, field, message[:2000])

    @app.exception_handler(NotFound)
    async def not_found(_: Request, exc: NotFound) -> JSONResponse:
        return _json_error(404, None, str(exc))

    @app.exception_handler(LLMError)
    async def llm_error(_: Request, exc: LLMError) -> JSONResponse:
        return _json_error(502, None, f"the language model failed: {type(exc).__name__}")

    @app.exception_handler(StoreError)
    async def store_error(_: Request, exc: StoreError) -> JSONResponse:
        log.error("store error: %s", exc)
        return _json_error(503, None, "the graph store is unavailable")

    @app.exception_handler(ValueError)
    async def value_error(_: Request, exc: ValueError) -> JSONResponse:
        return _json_error(422, None, str(exc).splitlines()[0] if str(exc) else type(exc).__name__)

    @app.exception_handler(TimeoutError)
    async def timeout(_: Request, exc: TimeoutError) -> JSONResponse:
        return _json_error(504, None, "the request took longer than its time limit")

    @app.exception_handler(OverflowError)
    async def overflow(_: Request, exc: OverflowError) -> JSONResponse:
        return _json_error(422, None, f"a value is out of range: {exc}")
