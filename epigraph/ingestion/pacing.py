"""Paced ingestion: every store call and LLM call (and streamed chunk) of the queue waits its turn first.

A :class:`Pacer` decides when background work may take its next step; ``KnowledgeGraph`` builds its
ingestion queue over a :class:`PacedStore` and a :class:`PacedLLM` paced by its :class:`Priority`: reads
first. Searches and ingestion share one process (one event loop and, embedded store, one SQLite worker
thread); ingestion in the server is background work (an add is answered ``202`` once stored), a search is
someone waiting. So the server runs the reads someone waits for inside :meth:`Priority.foreground`, and
each store and LLM call of the queue (and each streamed chunk) takes a :meth:`Priority.turn` first: while
a read is in flight no new ingestion step starts, so the read's own steps find the event loop free. A
turn waits at most ``max_wait_s``, so a steady stream of reads slows ingestion down but never stops it;
with no read in flight (the library, the command line, a Kafka worker) a turn returns at once. The
foreground also marks the read's store calls (:func:`epigraph.graph.priority.foreground`): the embedded
store runs them before the ingestion calls already queued. Each call still runs whole.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
from collections.abc import AsyncIterator, Callable
from typing import Any, Protocol, TypeVar, cast

from ..graph import priority as store_priority
from ..prompts.protocol import LLM, ChatRequest, Completion, StreamChunk

S = TypeVar("S")

MAX_WAIT_S = 0.1
"""The longest one ingestion step waits for reads to finish before it goes ahead anyway."""


class Pacer(Protocol):
    async def turn(self) -> None:
        """Return when background work may take its next step."""


class PacedStore:
    """A store whose every coroutine method takes a :meth:`Pacer.turn` first (other attributes pass
    through unchanged). It has exactly the methods of the store it wraps, so it implements the same
    roles (a runtime_checkable Protocol's ``isinstance`` looks the methods up: they come through
    ``__getattr__``); :func:`paced` gives it the wrapped store's type."""

    def __init__(self, store: Any, pacer: Pacer) -> None:
        self._store, self._pacer = store, pacer

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._store, name)
        if not inspect.iscoroutinefunction(attr):
            return attr
        return _after_turn(self._pacer, attr)


def paced(store: S, pacer: Pacer) -> S:
    """``store`` (any role of it) with every coroutine method taking a :meth:`Pacer.turn` first."""
    return cast(S, PacedStore(store, pacer))


def _after_turn(pacer: Pacer, method: Callable[..., Any]) -> Callable[..., Any]:
    async def call(*args: Any, **kwargs: Any) -> Any:
        await pacer.turn()
        return await method(*args, **kwargs)

    call.__name__ = method.__name__
    return call


class PacedLLM:
    """An LLM that takes a :meth:`Pacer.turn` before each call and each streamed chunk."""

    def __init__(self, llm: LLM, pacer: Pacer) -> None:
        self._llm, self._pacer = llm, pacer

    async def complete(self, request: ChatRequest) -> Completion:
        await self._pacer.turn()
        return await self._llm.complete(request)

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamChunk]:
        await self._pacer.turn()
        chunks = self._llm.stream(request)
        try:
            async for chunk in chunks:
                yield chunk
                await self._pacer.turn()
        finally:
            aclose = getattr(chunks, "aclose", None)
            if aclose is not None:
                await aclose()


class Priority:
    """Reads first: how many foreground requests are in flight; background work waits its turn."""

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
