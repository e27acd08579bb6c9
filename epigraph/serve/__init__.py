"""The graph as a service: ``epigraph serve`` (HTTP API, :mod:`.app`) and ``epigraph mcp`` (MCP server,
:mod:`.mcp`), with API keys scoped to groups (:mod:`.auth`), limits (:mod:`.schemas`) and an intake into
the graph's ingestion queue whose episodes survive restarts (:mod:`.intake`). Needs the ``serve``
extra: ``pip install 'epigraph[serve]'``."""

from __future__ import annotations

from .app import create_app
from .auth import Keys
from .schemas import Limits

__all__ = ["Keys", "Limits", "create_app"]
