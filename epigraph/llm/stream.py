"""One streamed chat completion: SDK chunks in, protocol ``StreamChunk`` values out.

A :class:`StreamSession` holds a limiter slot for as long as the HTTP stream is open. Opening it
(``enter_slot`` + ``start``) reads until the first *visible* text (think blocks removed) so that
everything before the first yielded chunk can still be retried; :meth:`StreamSession.chunks` then
yields the rest and ends with exactly one ``done`` chunk: usage and finish_reason, or a typed error.
The slot and the connection are released before that last chunk is handed over, so a consumer that
stops at ``done`` leaks nothing.
"""

from __future__ import annotations

import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from typing import Any

from ..errors import LLMUnavailable
from ..prompts.protocol import ChatRequest, StreamChunk, Usage
from .failures import Failure, typed_error
from .limiter import Limiter, Slot
from .profiles import EndpointProfile, ThinkStripper

UsageFn = Callable[[Any, ChatRequest, str], Awaitable[Usage]]
Classify = Callable[[Exception], Failure]


class _EndedEarly(LLMUnavailable):
    """The server closed the stream cleanly but before a finish_reason."""

    def __init__(self) -> None:
        super().__init__("the stream ended before the model finished (no finish_reason)")


class StreamSession:
    def __init__(
        self, request: ChatRequest, profile: EndpointProfile, usage: UsageFn, limiter: Limiter, estimate: int
    ) -> None:
        self.request, self.profile = request, profile
        self._usage_fn = usage
        self._limiter = limiter
        self._slot: Slot = limiter.slot(estimate)
        self._in_slot = False
        self._sdk_stream: Any = None
        self._iterator: AsyncIterator[Any] | None = None
        self._stripper = ThinkStripper() if profile.strip_think else None
        self._raw: list[str] = []
        self._pending: list[str] = []
        self._server_usage: Any = None
        self.finish_reason: str | None = None
        self.ended = False

    @property
    def slot(self) -> Slot:
        return self._slot

    async def enter_slot(self) -> None:
        await self._slot.__aenter__()
        self._in_slot = True

    async def start(self, sdk_stream: Any) -> None:
        """Adopt the SDK stream and read up to the first visible text (or the end)."""
        self._sdk_stream = sdk_stream
        self._iterator = sdk_stream.__aiter__()
        while not self._pending and not self.ended:
            await self._pull()
        if self.ended and self.finish_reason is None and not self._pending:
            raise _EndedEarly()  # nothing delivered yet, so this may still be retried

    async def close(self) -> None:
        """Close the connection and give the slot back; safe to call more than once."""
        stream, self._sdk_stream = self._sdk_stream, None
        if stream is not None:
            try:
                await stream.close()
            except Exception:  # the connection is already broken; nothing left to release
                pass
        if self._in_slot:
            self._in_slot = False
            await self._slot.__aexit__(None, None, None)

    async def chunks(
        self, attempts: int, started: float, classify: Classify, what: str
    ) -> AsyncGenerator[StreamChunk, None]:
        """The visible text chunks, then exactly one ``done`` chunk."""
        yielded = 0
        while True:
            for text in self._pending:
                yield StreamChunk(text=text, attempts=attempts)
                yielded += 1
            self._pending.clear()
            if self.ended:
                break
            try:
                await self._pull()
            except Exception as exc:  # becomes the final chunk: errors never escape a stream
                yield await self._fail(exc, classify, what, attempts, started, yielded)
                return
        tail = self._stripper.finish() if self._stripper else ""
        if tail:
            yield StreamChunk(text=tail, attempts=attempts)
            yielded += 1
        if self.finish_reason is None:
            yield await self._fail(_EndedEarly(), classify, what, attempts, started, yielded)
            return
        yield await self._finish(attempts, started)

    async def _pull(self) -> None:
        assert self._iterator is not None
        try:
            chunk = await self._iterator.__anext__()
        except StopAsyncIteration:
            self.ended = True
            return
        self._absorb(chunk)

    def _absorb(self, chunk: Any) -> None:
        if getattr(chunk, "usage", None) is not None:
            self._server_usage = chunk.usage
        for choice in chunk.choices or ():
            delta = getattr(choice, "delta", None)
            content = getattr(delta, "content", None) if delta is not None else None
            if content:
                self._raw.append(content)
                visible = self._stripper.feed(content) if self._stripper else content
                if visible:
                    self._pending.append(visible)
            if choice.finish_reason:
                self.finish_reason = choice.finish_reason

    async def _finish(self, attempts: int, started: float) -> StreamChunk:
        usage = await self._usage_fn(self._server_usage, self.request, "".join(self._raw))
        self._slot.settle(usage.input_tokens + usage.output_tokens)
        await self.close()
        return StreamChunk(
            done=True,
            usage=usage,
            finish_reason=self.finish_reason,
            latency_s=time.monotonic() - started,
            attempts=attempts,
        )

    async def _fail(
        self, exc: Exception, classify: Classify, what: str, attempts: int, started: float, yielded: int
    ) -> StreamChunk:
        await self.close()
        failure = classify(exc)
        self._limiter.record(failure, retrying=False)
        elapsed = time.monotonic() - started
        message = (
            f"{what} failed mid-stream after {yielded} chunk{'s' if yielded != 1 else ''}: {failure.detail} "
            f"(after {attempts} attempt{'s' if attempts != 1 else ''} in {elapsed:.1f} s; "
            "not retried: text was already delivered)"
        )
        error = typed_error(failure, message, attempts)
        if failure.chain:
            error.__cause__ = exc
        return StreamChunk(done=True, error=error, attempts=attempts, latency_s=elapsed)
