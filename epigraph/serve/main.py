"""``epigraph serve`` and ``epigraph mcp``: build the graph from the settings, check the keys, run."""

from __future__ import annotations

import sys
from pathlib import Path

from ..client import KnowledgeGraph
from ..config import Settings, api_keys
from .auth import Keys, check_exposure


def groups_file(settings: Settings, given: str | None) -> Path | None:
    """Where the server records the groups to resume: ``given``, else beside the embedded store's file
    (``<db>.groups``), else ``./epigraph-serve.groups`` (Neo4j); None for a graph in memory."""
    if given:
        return Path(given)
    if settings.store_kind == "embedded":
        return None if settings.db_path == ":memory:" else Path(settings.db_path + ".groups")
    return Path("epigraph-serve.groups")


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
    app = create_app(kg, keys=keys, groups_file=groups_file(settings, groups), publish=publish)
    # open event streams never end by themselves: give them 5 s at shutdown, then close them
    config = uvicorn.Config(
        app, host=host, port=port, log_level="info", lifespan="on", timeout_graceful_shutdown=5
    )
    await uvicorn.Server(config).serve()
    return 0


async def mcp(settings: Settings, transport: str, host: str, port: int, groups: str | None = None) -> int:
    from .mcp import run_mcp

    keys = keys_for(settings, host if transport == "http" else "127.0.0.1")
    await run_mcp(settings, keys, transport, host, port, groups_file(settings, groups))
    return 0
