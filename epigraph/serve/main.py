"""``epigraph serve`` and ``epigraph mcp``: build the graph from the settings, check the keys, run."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from types import FrameType

from ..client import KnowledgeGraph
from ..config import Settings, api_keys
from .auth import Keys, check_exposure
from .schemas import Limits


def groups_file(settings: Settings, given: str | None) -> Path | None:
    """Where the server records the groups to resume: ``given``, else beside the embedded store's file
    (``<db>.groups``), else ``./epigraph-serve.groups`` (Neo4j); None for a graph in memory."""
    if given:
        return Path(given)
    if settings.store_kind == "embedded":
        return None if settings.db_path == ":memory:" else Path(settings.db_path + ".groups")
    return Path("epigraph-serve.groups")


KEEP_ALIVE_S = 75
"""How long an idle connection stays open. uvicorn's default (5 s) is the idle time after which httpx
drops a pooled connection too: a client reusing one just as the server closed it got a read error (the
serve bench's mixed load: docs/decisions/2026-11-25-serve.md). A server must keep a connection longer
than its clients do (75 s, as common proxies)."""


def keys_for(settings: Settings, host: str) -> Keys:
    """The keys, checked against the address; says at start whether keys are on (never the keys)."""
    keys = Keys(api_keys(settings))
    print(f"epigraph: {check_exposure(keys, host)}", file=sys.stderr, flush=True)
    return keys


async def serve(
    settings: Settings, host: str, port: int, groups: str | None = None, *, publish: bool = False
) -> int:
    """``publish``: added episodes go to Kafka (``settings.kafka_bootstrap``), not to this server's
    ingestion."""
    import uvicorn

    from .app import create_app

    keys = keys_for(settings, host)
    kg = KnowledgeGraph(settings)
    limits = Limits()
    app = create_app(kg, keys=keys, limits=limits, groups_file=groups_file(settings, groups), publish=publish)
    loop, stopping = asyncio.get_running_loop(), app.state.server.stopping

    class Server(uvicorn.Server):
        def handle_exit(self, sig: int, frame: FrameType | None) -> None:
            # uvicorn tells the app nothing until every connection closed: the open event streams
            # end now (a signal handler runs between two steps of the loop: set the event on it)
            loop.call_soon_threadsafe(stopping.set)
            super().handle_exit(sig, frame)

    # a request still running 5 s into shutdown is cancelled
    config = uvicorn.Config(
        app, host=host, port=port, log_level="info", lifespan="on", timeout_graceful_shutdown=5,
        h11_max_incomplete_event_size=limits.max_head_bytes, timeout_keep_alive=KEEP_ALIVE_S,
    )  # fmt: skip
    await Server(config).serve()
    return 0


async def mcp(settings: Settings, transport: str, host: str, port: int, groups: str | None = None) -> int:
    from .mcp import run_mcp

    keys = keys_for(settings, host if transport == "http" else "127.0.0.1")
    await run_mcp(settings, keys, transport, host, port, groups_file(settings, groups))
    return 0
