"""Reads first: ingestion inside the server steps aside while searches are answered.

Searches and ingestion share one process: one event loop, and (embedded store) one SQLite worker thread.
Ingestion is background work (an add is answered ``202`` once stored); a search is someone waiting. So
the search and entity reads run inside :meth:`Priority.foreground`, and the ingestion queue is paced by
the :class:`Priority` (``Ingestor.pace``, see ``ingestion.pacing``): each store and LLM call of a run
(and each streamed chunk) takes a :meth:`Priority.turn` first. While a search is in flight, no new
ingestion step starts, so the search's own steps find the event loop free. A turn waits at most
``max_wait_s``, so a steady stream of searches slows ingestion down but never stops it. The foreground
also marks the search's store calls (:func:`epigraph.graph.priority.foreground`): the embedded store
runs them before the ingestion calls already queued. Each call still runs whole.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from ..graph import priority as store_priority

MAX_WAIT_S = 0.1
"""The longest one ingestion step waits for searches to finish before it goes ahead anyway."""


class Priority:
    """How many foreground requests are in flight; background work waits its turn."""

    def __init__(self, max_wait_s: float = MAX_WAIT_S) -> None:
        self.max_wait_s = max_wait_s
        self.active = 0
        self.yielded = 0
        """How many background steps waited for a foreground request (a measure of contention)."""
        self._idle = asyncio.Event()
        self._idle.set()

    @contextlib.asynccontextmanager
    async def foreground(self) -> AsyncIterator[None]:
        """Mark a request someone is waiting for; background steps wait until none is in flight."""
        self.active += 1
        self._idle.clear()
        try:
            with store_priority.foreground():
                yield
        finally:
            self.active -= 1
            if not self.active:
                self._idle.set()

    async def turn(self) -> None:
        """Return at once when no foreground request is in flight, else when the last one ends (at
        most ``max_wait_s`` later)."""
        if not self.active:
            return
        self.yielded += 1
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._idle.wait(), self.max_wait_s)
