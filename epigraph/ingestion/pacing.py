"""Paced ingestion: every store call and LLM call (and streamed chunk) of a run waits its turn first.

A :class:`Pacer` decides when background work may take its next step; the ingestion queue
(:meth:`~epigraph.ingestion.ingestor.Ingestor.pace`) runs its episodes through :class:`PacedStore` and
:class:`PacedLLM`. The server's pacer lets searches go first (``epigraph.serve.priority``).
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Callable
from typing import Any, Protocol

from ..prompts.protocol import LLM, ChatRequest, Completion, StreamChunk


class Pacer(Protocol):
    async def turn(self) -> None:
        """Return when background work may take its next step."""


class PacedStore:
    """A store whose every coroutine method takes a :meth:`Pacer.turn` first (other attributes pass
    through unchanged). Used as a ``GraphStore``."""

    def __init__(self, store: Any, pacer: Pacer) -> None:
        self._store, self._pacer = store, pacer

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._store, name)
        if not inspect.iscoroutinefunction(attr):
            return attr
        return _after_turn(self._pacer, attr)


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
