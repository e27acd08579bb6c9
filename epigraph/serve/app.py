"""The HTTP API's app factory: ``create_app(kg, keys=..., limits=...)`` -> a FastAPI app (OpenAPI at
``/openapi.json``, docs at ``/docs`` and ``/redoc``, served offline by :mod:`.docs`), every route under
``/v1``.

The app owns the intake into the ingestion queue (:mod:`.intake`); its lifespan opens the graph, resumes
every group's ``pending`` episodes and, at shutdown, stops the queue's background runs (an interrupted
episode stays ``pending`` and is resumed at the next start). Errors map to status codes in
:mod:`.http_errors`; every body is ``{"detail": ..., "field": ...}``.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response

from ..client import KnowledgeGraph
from ..version import __version__
from . import (
    docs,
    http_errors,
    routes_ask,
    routes_edit,
    routes_episodes,
    routes_explore,
    routes_forget,
    routes_overview,
    routes_privacy,
    routes_read,
    routes_transfer,
    service,
)
from .auth import ALL_GROUPS, AuthError, Keys, key_from_headers
from .deps import API_VERSION, QUERY_CHECKED, state_of
from .intake import GroupRegistry, Intake
from .metrics import CONTENT_TYPE_LATEST, HttpMetrics, ServerMetrics
from .schemas import BodyLimit, Limits
from .service import ServerState, running

log = logging.getLogger("epigraph.serve")


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
    intake = Intake(kg, GroupRegistry(groups_file))
    state = ServerState(kg, keys or Keys({}), limits or Limits(), intake, publish=publish)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        async with running(state, close_graph=close_graph):
            yield

    unreadable = f"not an HTTP request the server reads (e.g. a URL over {state.limits.max_head_bytes} bytes)"
    app = FastAPI(
        title="epigraph",
        version=__version__,
        description="A temporal knowledge graph of chat episodes: add episodes, search, explore, ask.",
        lifespan=lifespan,
        docs_url=None,  # served from the package by .docs (FastAPI's pages load from a CDN)
        redoc_url=None,
        responses={400: {"description": unreadable, "content": {"text/plain": {}}}},
    )
    app.state.server = state
    metrics = ServerMetrics(intake)
    app.add_middleware(
        BodyLimit, max_bytes=state.limits.max_body_bytes, max_dump_bytes=state.limits.max_dump_bytes
    )
    app.add_middleware(HttpMetrics, metrics=metrics)  # outermost: every answer counted, refusals too
    http_errors.install(app)

    for router in (routes_episodes.router, routes_read.router, routes_overview.router, routes_ask.router,
                   routes_edit.router, routes_edit.group_router, routes_transfer.router,
                   routes_forget.router, routes_privacy.router):  # fmt: skip
        app.include_router(router, prefix=f"/{API_VERSION}", dependencies=QUERY_CHECKED)
    routes_explore.register(app)  # the page at / and its JSON (the interactive view)
    docs.register(app, app.title)
    _health(app)
    _metrics(app, metrics)
    return app


def _metrics(app: FastAPI, metrics: ServerMetrics) -> None:
    @app.get("/metrics", include_in_schema=False)
    async def prometheus(request: Request) -> Response:
        """Prometheus metrics (``serve.metrics``); with API keys, a key that may use every group."""
        principal = state_of(request).keys.principal(key_from_headers(request.headers))
        if not principal.open and ALL_GROUPS not in principal.groups:
            raise AuthError(403, "the metrics are the server's, across groups: a key for every group (*)")
        return Response(metrics.text(), media_type=CONTENT_TYPE_LATEST)


def _health(app: FastAPI) -> None:
    @app.get(f"/{API_VERSION}/health", tags=["health"], dependencies=QUERY_CHECKED)
    async def health() -> dict[str, str]:
        """The process answers."""
        return {"status": "ok"}

    @app.get(f"/{API_VERSION}/ready", tags=["health"], responses={503: {"description": "not ready"}},
             dependencies=QUERY_CHECKED)  # fmt: skip
    async def ready(request: Request) -> JSONResponse:
        """The graph is open and pending episodes were resumed."""
        body = service.readiness(state_of(request))
        return JSONResponse(body, status_code=200 if body["ready"] else 503)
