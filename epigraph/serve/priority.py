"""Reads first: ingestion inside the server steps aside while searches are answered.

Searches and ingestion share one process: one event loop, and (embedded store) one SQLite worker thread.
Ingestion is background work (an add is answered ``202`` once stored); a search is someone waiting. So
the search and entity reads run inside :meth:`Priority.foreground`, and the ingestion workers reach the
store and the LLM through :class:`YieldingStore` and :class:`YieldingLLM`, which take a
:meth:`Priority.turn` before each call (and each streamed chunk): while a search is in flight, no new
ingestion step starts, so the search's own steps find the event loop free. A turn waits at most
``max_wait_s``, so a steady stream of searches slows ingestion down but never stops it. The foreground
also marks the search's store calls (:func:`epigraph.graph.priority.foreground`): the embedded store
runs them before the ingestion calls already queued. Each call still runs whole.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
from collections.abc import AsyncIterator, Callable
from typing import Any

from ..graph import priority as store_priority
from ..prompts.protocol import LLM, ChatRequest, Completion, StreamChunk

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


class YieldingStore:
    """A store whose every coroutine method takes a :meth:`Priority.turn` first (other attributes pass
    through unchanged). Used as a ``GraphStore`` by the server's ingestion workers."""

    def __init__(self, store: Any, priority: Priority) -> None:
        self._store, self._priority = store, priority

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._store, name)
        if not inspect.iscoroutinefunction(attr):
            return attr
        return _after_turn(self._priority, attr)


def _after_turn(priority: Priority, method: Callable[..., Any]) -> Callable[..., Any]:
    async def call(*args: Any, **kwargs: Any) -> Any:
        await priority.turn()
        return await method(*args, **kwargs)

    call.__name__ = method.__name__
    return call


class YieldingLLM:
    """An LLM that takes a :meth:`Priority.turn` before each call and each streamed chunk."""

    def __init__(self, llm: LLM, priority: Priority) -> None:
        self._llm, self._priority = llm, priority

    async def complete(self, request: ChatRequest) -> Completion:
        await self._priority.turn()
        return await self._llm.complete(request)

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamChunk]:
        await self._priority.turn()
        chunks = self._llm.stream(request)
        try:
            async for chunk in chunks:
                yield chunk
                await self._priority.turn()
        finally:
            aclose = getattr(chunks, "aclose", None)
            if aclose is not None:
                await aclose()
