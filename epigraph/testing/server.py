"""A local OpenAI-compatible HTTP server with scriptable faults, for tests, demos and offline work.

Pure stdlib (``asyncio.start_server`` and a small HTTP/1.1 implementation with keep-alive and chunked
streaming), bound to 127.0.0.1 on a free port. The real ``openai`` SDK talks to it over real HTTP::

    async with FakeOpenAIServer(lambda body: "hello") as srv:
        llm = OpenAIChat(model="fake", base_url=srv.base_url, api_key="k")
        ...
    srv.requests          # every request: method, path, headers (no Authorization), parsed body, times
    srv.max_in_flight     # the most requests it was answering at once

Endpoints: ``POST /v1/chat/completions`` (JSON, or SSE with ``stream=true``; a final usage chunk when
``stream_options.include_usage``), ``POST /v1/embeddings`` (deterministic unit vectors, float or base64),
``GET /v1/models``. A *handler* maps the parsed request body to a :class:`Reply` (or a plain string):
the reply text and any fault — 429 with ``Retry-After``, 5xx, a hang, a disconnect mid-stream, a
truncated reply, a missing usage block, slow chunks, a 400 — or tool calls (:class:`ToolCall`: an
agent's model asking for its tools, with or without text). :func:`script` plays replies in order;
:func:`reject_response_format` wraps a handler with a 400 for chosen ``response_format`` types.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import re
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from http import HTTPStatus
from typing import Any

from .http import (
    HTTPRequest,
    approx_tokens,
    embeddings_body,
    read_request,
    response_head,
    send_event,
    unit_vector,
)

__all__ = [
    "FakeOpenAIServer",
    "Handler",
    "RecordedRequest",
    "Reply",
    "ToolCall",
    "echo",
    "reject_response_format",
    "script",
    "unit_vector",
]


@dataclass(frozen=True)
class ToolCall:
    """A function call the reply asks for: the tool's ``name`` and its JSON ``arguments``."""

    name: str
    arguments: str = "{}"
    id: str = ""
    """The call's id (default: ``call-<n>``, numbered by the server)."""


@dataclass(frozen=True)
class Reply:
    """What the server answers to one request. The defaults are a plain, successful reply."""

    text: str = "ok"
    status: int = 200
    error_message: str = ""
    error_type: str = "server_error"
    error_param: str | None = None
    error_code: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    finish_reason: str = "stop"
    usage: bool = True
    """Include a usage block (False: the client must count tokens itself)."""
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    delay_s: float = 0.0
    """Wait before answering at all."""
    chunk_delay_s: float = 0.0
    """Streaming: wait before each content chunk."""
    chunk_delays: Sequence[float] | None = None
    """Streaming: the wait before each content chunk, one per chunk (overrides ``chunk_delay_s``)."""
    chunks: Sequence[str] | None = None
    """Streaming: the content pieces (default: the text split into words)."""
    disconnect_after: int | None = None
    """Drop the connection after this many content chunks (non-streaming: without answering)."""
    hang: bool = False
    """Never answer; keep the connection open until the client gives up."""
    raw_body: str | None = None
    """Send this verbatim as a 200 ``application/json`` body (a broken server)."""
    model: str | None = None
    tool_calls: Sequence[ToolCall] = ()
    """Function calls the reply asks for (then ``finish_reason`` is ``tool_calls`` and an empty
    ``text`` is no content at all)."""

    @classmethod
    def calling(cls, *calls: ToolCall, text: str = "") -> Reply:
        """A reply that asks for ``calls`` (an agent's model turn)."""
        return cls(text=text, tool_calls=calls, finish_reason="tool_calls")

    @classmethod
    def rate_limited(cls, retry_after: float | str | None = 1, *, retry_after_ms: int | None = None) -> Reply:
        headers: dict[str, str] = {}
        if retry_after is not None:
            headers["Retry-After"] = str(retry_after)
        if retry_after_ms is not None:
            headers["retry-after-ms"] = str(retry_after_ms)
        return cls(
            status=429, error_message="Rate limit reached", error_type="rate_limit_exceeded", headers=headers
        )

    @classmethod
    def server_error(cls, status: int = 500, message: str = "The server had an error") -> Reply:
        return cls(status=status, error_message=message)

    @classmethod
    def bad_request(cls, message: str, param: str | None = None) -> Reply:
        return cls(status=400, error_message=message, error_type="invalid_request_error", error_param=param)

    @classmethod
    def hanging(cls) -> Reply:
        return cls(hang=True)

    @classmethod
    def disconnect(cls, text: str = "partial reply that never ends", after: int = 2) -> Reply:
        return cls(text=text, disconnect_after=after)

    @classmethod
    def truncated(cls, text: str) -> Reply:
        return cls(text=text, finish_reason="length")


ReplyLike = Reply | str
Handler = Callable[[dict[str, Any]], ReplyLike | Awaitable[ReplyLike]]
EmbedHandler = Callable[[dict[str, Any]], Awaitable[Reply | None] | Reply | None]


def echo(body: dict[str, Any]) -> Reply:
    """The default handler: answers with the last message's content."""
    messages = body.get("messages") or [{}]
    return Reply(text=str(messages[-1].get("content", "")))


def script(*replies: ReplyLike) -> Handler:
    """Answer with ``replies`` in order; the last one repeats."""
    if not replies:
        raise ValueError("script() needs at least one reply")
    queue = list(replies)

    def handler(body: dict[str, Any]) -> ReplyLike:
        return queue.pop(0) if len(queue) > 1 else queue[0]

    return handler


def reject_response_format(handler: Handler, types: Sequence[str] = ("json_schema",)) -> Handler:
    """``handler``, except that a ``response_format`` of one of ``types`` gets a 400 (like many servers)."""

    async def wrapped(body: dict[str, Any]) -> ReplyLike:
        kind = (body.get("response_format") or {}).get("type")
        if kind in types:
            return Reply.bad_request(f"response_format type '{kind}' is not supported", "response_format")
        return _as_reply(await _call(handler, body))

    return wrapped


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    """Lower-cased names; ``authorization`` is never recorded."""
    body: Any
    received_at: float
    """``time.monotonic()`` when the request was fully read."""
    status: int = 0
    finished_at: float | None = None
    chunks_sent: int = 0
    """Streaming: content chunks written to the client so far."""
    client_closed: bool = False
    """Streaming: the client closed the connection before the stream ended."""


class FakeOpenAIServer:
    """``async with FakeOpenAIServer(handler) as srv:`` serves on ``srv.base_url`` until the block ends."""

    def __init__(
        self,
        handler: Handler | None = None,
        *,
        api_key: str | None = None,
        models: Sequence[str] = ("fake-model",),
        embed_dim: int = 8,
        embed_handler: EmbedHandler | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.handler: Handler = handler or echo
        self.embed_handler = embed_handler
        self.api_key, self.models, self.embed_dim = api_key, list(models), embed_dim
        self.host, self.port = host, port
        self.requests: list[RecordedRequest] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.Task[None]] = set()
        self._ids = 0
        self._closing = False

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    @property
    def chat_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path.endswith("/chat/completions")]

    async def __aenter__(self) -> FakeOpenAIServer:
        self._server = await asyncio.start_server(self._on_connection, self.host, self.port)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        self._closing = True
        if self._server is not None:
            self._server.close()
        for task in list(self._connections):
            task.cancel()
        await asyncio.gather(*self._connections, return_exceptions=True)
        if self._server is not None:
            await self._server.wait_closed()

    # -- HTTP ----------------------------------------------------------------------------------

    async def _on_connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._connections.add(task)
        try:
            while (request := await read_request(reader)) is not None:
                if not await self._dispatch(request, reader, writer):
                    break
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError):
            pass
        except asyncio.CancelledError:
            if not self._closing:
                raise
            # Our own shutdown: end quietly (3.11's stream callback logs a cancelled connection task).
        finally:
            writer.close()
            if task is not None:
                self._connections.discard(task)

    async def _dispatch(
        self, request: HTTPRequest, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> bool:
        """Answer one request; False when the connection must be dropped."""
        body = json.loads(request.body) if request.body.strip() else None
        headers = {k: v for k, v in request.headers.items() if k != "authorization"}
        record = RecordedRequest(request.method, request.path, headers, body, time.monotonic())
        self.requests.append(record)
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            return await self._route(request, body, record, reader, writer)
        finally:
            self.in_flight -= 1
            record.finished_at = time.monotonic()

    async def _route(
        self,
        request: HTTPRequest,
        body: Any,
        record: RecordedRequest,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> bool:
        given = request.headers.get("authorization", "").removeprefix("Bearer ").strip()
        if self.api_key is not None and given != self.api_key:
            # Like some real servers, echo the key: the client must never repeat it.
            reply = Reply(
                status=401,
                error_message=f"Incorrect API key provided: {given}.",
                error_type="invalid_request_error",
                error_code="invalid_api_key",
            )
            return await self._send_error(writer, record, reply)
        route = (request.method, request.path.split("?")[0].rstrip("/"))
        if route == ("POST", "/v1/chat/completions"):
            reply = _as_reply(await _call(self.handler, body or {}))
            return await self._chat(reply, body or {}, record, reader, writer)
        if route == ("POST", "/v1/embeddings"):
            fault = await _call(self.embed_handler, body or {}) if self.embed_handler else None
            if fault is not None and (fault.status != 200 or fault.hang or fault.delay_s):
                return await self._chat(replace(fault, disconnect_after=None), {}, record, reader, writer)
            return await self._send_json(writer, record, 200, self._embeddings(body or {}))
        if route == ("GET", "/v1/models"):
            data = [{"id": m, "object": "model", "created": 0, "owned_by": "epigraph"} for m in self.models]
            return await self._send_json(writer, record, 200, {"object": "list", "data": data})
        return await self._send_error(writer, record, Reply(status=404, error_message="no such route"))

    async def _chat(
        self,
        reply: Reply,
        body: dict[str, Any],
        record: RecordedRequest,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> bool:
        if reply.delay_s:
            await asyncio.sleep(reply.delay_s)
        if reply.hang:
            await reader.read()  # until the client hangs up
            return False
        if reply.status != 200:
            return await self._send_error(writer, record, reply)
        if reply.raw_body is not None:
            return await self._send_bytes(writer, record, 200, reply.raw_body.encode(), reply.headers)
        if body.get("stream"):
            return await self._stream(reply, body, record, writer)
        if reply.disconnect_after is not None:
            return False
        return await self._send_json(writer, record, 200, self._completion(reply, body), reply.headers)

    async def _stream(
        self, reply: Reply, body: dict[str, Any], record: RecordedRequest, writer: asyncio.StreamWriter
    ) -> bool:
        status_line = response_head(
            200,
            {
                "Content-Type": "text/event-stream",
                "Cache-Control": "no-cache",
                "Transfer-Encoding": "chunked",
                **reply.headers,
            },
        )
        writer.write(status_line)
        record.status = 200
        base = self._chunk_base(reply, body)
        await send_event(writer, {**base, "choices": [_delta({"role": "assistant", "content": ""})]})
        pieces = list(reply.chunks) if reply.chunks is not None else re.findall(r"\s*\S+\s*", reply.text)
        for index, piece in enumerate(pieces):
            if reply.disconnect_after is not None and index >= reply.disconnect_after:
                return False
            delay = reply.chunk_delays[index] if reply.chunk_delays is not None else reply.chunk_delay_s
            if delay:
                await asyncio.sleep(delay)
            try:
                await send_event(writer, {**base, "choices": [_delta({"content": piece})]})
            except ConnectionError:
                record.client_closed = True
                raise
            record.chunks_sent += 1
        if calls := self._calls(reply).get("tool_calls"):
            indexed = [{"index": n, **call} for n, call in enumerate(calls)]
            await send_event(writer, {**base, "choices": [_delta({"tool_calls": indexed})]})
        await send_event(writer, {**base, "choices": [_delta({}, reply.finish_reason)]})
        if reply.usage and (body.get("stream_options") or {}).get("include_usage"):
            await send_event(writer, {**base, "choices": [], "usage": self._usage(reply, body)})
        await send_event(writer, "[DONE]")
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        return True

    # -- bodies ---------------------------------------------------------------------------------

    def _next_id(self, prefix: str) -> str:
        self._ids += 1
        return f"{prefix}-{self._ids}"

    def _usage(self, reply: Reply, body: dict[str, Any]) -> dict[str, int]:
        prompt_text = " ".join(str(m.get("content", "")) for m in body.get("messages") or [])
        prompt = reply.prompt_tokens if reply.prompt_tokens is not None else approx_tokens(prompt_text)
        completion = (
            reply.completion_tokens if reply.completion_tokens is not None else approx_tokens(reply.text)
        )
        return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}

    def _completion(self, reply: Reply, body: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self._next_id("chatcmpl"),
            "object": "chat.completion",
            "created": int(time.time()),
            "model": reply.model or body.get("model") or self.models[0],
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": reply.text, **self._calls(reply)},
                    "finish_reason": reply.finish_reason,
                    "logprobs": None,
                }
            ],
        }
        if reply.usage:
            out["usage"] = self._usage(reply, body)
        return out

    def _calls(self, reply: Reply) -> dict[str, Any]:
        """The message's ``tool_calls`` (and no content when the reply has no text); none: nothing."""
        if not reply.tool_calls:
            return {}
        calls = [
            {
                "id": call.id or self._next_id("call"),
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments},
            }
            for call in reply.tool_calls
        ]
        return {"tool_calls": calls, **({} if reply.text else {"content": None})}

    def _chunk_base(self, reply: Reply, body: dict[str, Any]) -> dict[str, Any]:
        return {
            "id": self._next_id("chatcmpl"),
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": reply.model or body.get("model") or self.models[0],
        }

    def _embeddings(self, body: dict[str, Any]) -> dict[str, Any]:
        raw = body.get("input", "")
        inputs = [raw] if isinstance(raw, str) else [str(item) for item in raw]
        return embeddings_body(
            inputs,
            dim=int(body.get("dimensions") or self.embed_dim),
            as_base64=body.get("encoding_format") == "base64",
            model=body.get("model") or self.models[0],
        )

    # -- writing --------------------------------------------------------------------------------

    async def _send_error(self, writer: asyncio.StreamWriter, record: RecordedRequest, reply: Reply) -> bool:
        error = {
            "message": reply.error_message or HTTPStatus(reply.status).phrase,
            "type": reply.error_type,
            "param": reply.error_param,
            "code": reply.error_code,
        }
        return await self._send_json(writer, record, reply.status, {"error": error}, reply.headers)

    async def _send_json(
        self,
        writer: asyncio.StreamWriter,
        record: RecordedRequest,
        status: int,
        payload: Any,
        headers: Mapping[str, str] | None = None,
    ) -> bool:
        return await self._send_bytes(writer, record, status, json.dumps(payload).encode(), headers or {})

    async def _send_bytes(
        self,
        writer: asyncio.StreamWriter,
        record: RecordedRequest,
        status: int,
        data: bytes,
        headers: Mapping[str, str],
    ) -> bool:
        record.status = status
        writer.write(
            response_head(
                status, {"Content-Type": "application/json", "Content-Length": str(len(data)), **headers}
            )
            + data
        )
        await writer.drain()
        return True


def _delta(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
    return {"index": 0, "delta": delta, "finish_reason": finish_reason, "logprobs": None}


def _as_reply(value: ReplyLike) -> Reply:
    return Reply(text=value) if isinstance(value, str) else value


async def _call(handler: Callable[[dict[str, Any]], Any], body: dict[str, Any]) -> Any:
    result = handler(body)
    return await result if inspect.isawaitable(result) else result
