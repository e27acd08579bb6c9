"""Streaming routes: ask (server-sent events of the dialog's chunks, or one JSON) and a group's
ingestion progress events. One JSON object per SSE ``data:`` line; a client that disconnects ends the
stream and the model call behind it (Starlette cancels the generator)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import aclosing
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import StreamingResponse

from ..ask import AskChunk
from .app import Group, state_of
from .routes_episodes import _ERRORS
from .schemas import AskIn, LimitExceeded

router = APIRouter(prefix="/groups/{group_id}", tags=["ask"])

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


async def _dialog_events(chunks: AsyncIterator[AskChunk], limit_s: float) -> AsyncIterator[str]:
    """The dialog as SSE; past ``limit_s`` seconds it ends with an error chunk (``TimeoutError``)."""
    try:
        async with asyncio.timeout(limit_s), aclosing(chunks) as dialog:  # type: ignore[type-var]
            async for chunk in dialog:
                yield sse(chunk.to_json())
                if chunk.end_of_dialog:
                    return
    except Exception as exc:
        yield sse(error_chunk(exc).to_json())


@router.post("/ask", responses={**_ERRORS, 200: {"content": {"text/event-stream": {}}}})
async def ask(request: Request, group_id: Group, body: AskIn) -> Any:
    """Answer a question from the group's graph, citing facts and episodes. ``streaming=true``: SSE,
    one chunk per event (thought, action, observation, answer or error; ``end_of_dialog`` on the last);
    ``streaming=false``: one JSON answer."""
    state = state_of(request)
    if len(body.question) > state.limits.max_question_chars:
        raise LimitExceeded(422, "question", f"at most {state.limits.max_question_chars} characters")
    kwargs: dict[str, Any] = {"as_of": body.as_of, "known_at": body.known_at, "group_id": group_id}
    if not body.streaming:
        async with asyncio.timeout(state.limits.ask_timeout_s):
            answer = await state.kg.ask(body.question, streaming=False, **kwargs)
        return answer.to_dict()
    chunks = state.kg.ask(body.question, streaming=True, **kwargs)
    return StreamingResponse(_dialog_events(chunks, state.limits.ask_timeout_s), **_SSE)


@router.get("/events", responses={**_ERRORS, 200: {"content": {"text/event-stream": {}}}})
async def events(request: Request, group_id: Group) -> StreamingResponse:
    """The group's ingestion progress as server-sent events (EpisodeSaved, EntityResolved, ...,
    EpisodeDone / EpisodeFailed), from now on; a ``KeepAlive`` after 15 s of silence."""
    workers = state_of(request).workers

    async def stream() -> AsyncIterator[str]:
        yield sse({"type": "Subscribed", "group_id": group_id})
        found = workers.events(group_id)
        try:
            async for event in found:
                yield sse(event)
        finally:
            await found.aclose()

    return StreamingResponse(stream(), **_SSE)
