"""Streaming routes: ask (server-sent events of the dialog's chunks, or one JSON) and a group's
ingestion progress events. One JSON object per SSE ``data:`` line; a client that disconnects ends the
stream and the model call behind it (Starlette cancels the generator). When the server is told to stop,
an open stream ends at once: the events stream with a ``ServerStopping`` event, a dialog with an error
chunk of that type."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator, AsyncIterator, Iterator
from contextlib import aclosing, contextmanager
from typing import Any, TypeVar

from fastapi import APIRouter, Request
from fastapi.responses import StreamingResponse

from ..ask import AskChunk
from . import service
from .deps import ERRORS, Group, state_of
from .schemas import AskIn
from .service import ServerStopping

router = APIRouter(prefix="/groups/{group_id}", tags=["ask"])

T = TypeVar("T")

_HEADERS = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}
_SSE: dict[str, Any] = {"media_type": "text/event-stream", "headers": _HEADERS}


def sse(data: dict[str, Any] | str, event: str | None = None) -> str:
    """One server-sent event (``data`` is JSON on one line)."""
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False, default=str)
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {text}\n\n"


def error_chunk(exc: BaseException) -> AskChunk:
    """The final chunk of a dialog that failed outside the agent (it names the error type only)."""
    return AskChunk("error", content=f"the answer failed: {type(exc).__name__}", end_of_message=True,
                    end_of_dialog=True, data={"type": type(exc).__name__})  # fmt: skip


async def until_stopped(items: AsyncGenerator[T, None], stopping: asyncio.Event) -> AsyncGenerator[T, None]:
    """``items`` until they end or ``stopping`` is set (then ``ServerStopping``); closes ``items``. Each
    step runs as a task of its own: ``items`` must hold no task-bound scope across its yields."""
    stopped = asyncio.ensure_future(stopping.wait())
    following: asyncio.Future[T] | None = None
    try:
        while True:
            following = asyncio.ensure_future(anext(items))
            await asyncio.wait((following, stopped), return_when=asyncio.FIRST_COMPLETED)
            if not following.done():
                raise ServerStopping("the server is stopping")
            try:
                yield following.result()
            except StopAsyncIteration:
                return
    finally:
        stopped.cancel()
        if following is not None and not following.done():
            following.cancel()
            await asyncio.wait((following,))
        await items.aclose()


@contextmanager
def expires_when(stopping: asyncio.Event, deadline: asyncio.Timeout) -> Iterator[None]:
    """Bring ``deadline`` forward to now once ``stopping`` is set (it raises ``TimeoutError``)."""
    loop = asyncio.get_running_loop()
    watcher = asyncio.ensure_future(stopping.wait())
    watcher.add_done_callback(lambda w: None if w.cancelled() else deadline.reschedule(loop.time()))
    try:
        yield
    finally:
        watcher.cancel()


async def _dialog_events(
    chunks: AsyncIterator[AskChunk], limit_s: float, stopping: asyncio.Event
) -> AsyncIterator[str]:
    """The dialog as SSE; past ``limit_s`` seconds it ends with an error chunk (``TimeoutError``), and
    so it does when the server stops (``ServerStopping``)."""
    try:
        async with asyncio.timeout(limit_s) as deadline, aclosing(chunks) as dialog:  # type: ignore[type-var]
            with expires_when(stopping, deadline):
                async for chunk in dialog:
                    yield sse(chunk.to_json())
                    if chunk.end_of_dialog:
                        return
    except Exception as exc:
        stopped = isinstance(exc, TimeoutError) and stopping.is_set()
        yield sse(error_chunk(ServerStopping("the server is stopping") if stopped else exc).to_json())


_STOPPING: dict[int | str, dict[str, Any]] = {503: {"description": "stopping (`streaming=false`)"}}


@router.post("/ask", responses={**ERRORS, **_STOPPING, 200: {"content": {"text/event-stream": {}}}})
async def ask(request: Request, group_id: Group, body: AskIn) -> Any:
    """Answer a question from the group's graph, citing facts and episodes, by the path ``mode`` names
    (default: one context assembled without the model, the agent when that found nothing).
    ``streaming=true``: SSE, one chunk per event (thought, action, observation, answer or error;
    ``end_of_dialog`` on the last); ``streaming=false``: one JSON answer (504 past the time limit, 503
    if the server stops meanwhile)."""
    state = state_of(request)
    if not body.streaming:
        try:
            async with asyncio.timeout(state.limits.ask_timeout_s) as deadline:
                with expires_when(state.stopping, deadline):
                    return await service.answer(state, group_id, body)
        except TimeoutError:
            if state.stopping.is_set():
                raise ServerStopping("the server is stopping") from None
            raise
    chunks = service.ask(state, group_id, body)
    return StreamingResponse(_dialog_events(chunks, state.limits.ask_timeout_s, state.stopping), **_SSE)


@router.get("/events", responses={**ERRORS, 200: {"content": {"text/event-stream": {}}}})
async def events(request: Request, group_id: Group) -> StreamingResponse:
    """The group's ingestion progress as server-sent events (EpisodeSaved, EntityResolved, ...,
    EpisodeDone / EpisodeFailed), from now on; a ``KeepAlive`` after 15 s of silence; a last
    ``ServerStopping`` when the server stops."""
    state = state_of(request)

    async def stream() -> AsyncIterator[str]:
        yield sse({"type": "Subscribed", "group_id": group_id})
        try:
            async with aclosing(until_stopped(service.events(state, group_id), state.stopping)) as found:
                async for event in found:
                    yield sse(event)
        except ServerStopping:
            yield sse({"type": "ServerStopping"})

    return StreamingResponse(stream(), **_SSE)
