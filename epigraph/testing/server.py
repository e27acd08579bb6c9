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
:func:`reject_response_format` wraps a handler with a 400 for chosen ``response_format`` types. The
replies and handlers are ``replies`` (re-exported here), the response bodies ``bodies``; the wire is
``http``.

A hosted provider's behaviour, per model (``terms={"gpt-4o-mini": Terms(...)}``, :mod:`.terms`): rate
limits enforced with 429s and reported in ``x-ratelimit-*`` headers on every answer, a latency model
(time to first token, prompt and output tokens per second, jitter, slow replies) applied to every reply
that sets no delay of its own, and a rate of 500s. ``embed_vectors`` computes embeddings (a real model's,
say) instead of the deterministic unit vectors; ``routes`` adds GET routes of your own (JSON answers).
"""

from __future__ import annotations

import asyncio
import inspect
import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from http import HTTPStatus
from typing import Any

from .bodies import Bodies, delta, pieces_of
from .http import (
    HTTPRequest,
    approx_tokens,
    embeddings_body,
    read_request,
    response_head,
    send_event,
    unit_vector,
)
from .replies import (
    EmbedHandler,
    Handler,
    Reply,
    ToolCall,
    as_reply,
    call_handler,
    echo,
    reject_response_format,
    script,
)
from .terms import Latency, RateLimits, Terms

EmbedVectors = Callable[[list[str], int], Any]
"""(texts, dimensions) -> one vector per text (a sequence of sequences of floats, or an awaitable of
one: a model's encoder run off the event loop)."""

__all__ = [
    "EmbedVectors",
    "FakeOpenAIServer",
    "Handler",
    "Latency",
    "RateLimits",
    "RecordedRequest",
    "Reply",
    "Terms",
    "ToolCall",
    "echo",
    "reject_response_format",
    "script",
    "unit_vector",
]


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
        terms: Mapping[str, Terms] | None = None,
        embed_vectors: EmbedVectors | None = None,
        routes: Mapping[str, Callable[[], Any]] | None = None,
    ) -> None:
        """``terms``: model name -> how it is served (limits, latency, 5xx rate); other models are
        served at once, unlimited. ``routes``: path (``/sim/stats``) -> a function whose JSON-able
        result a GET of that path answers."""
        self.handler: Handler = handler or echo
        self.embed_handler = embed_handler
        self.terms = dict(terms or {})
        self.embed_vectors = embed_vectors
        self.routes = dict(routes or {})
        self.api_key, self.models, self.embed_dim = api_key, list(models), embed_dim
        self.host, self.port = host, port
        self.requests: list[RecordedRequest] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.Task[None]] = set()
        self._bodies = Bodies(self.models[0])
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
        body = body if isinstance(body, dict) else {}
        if route == ("POST", "/v1/chat/completions"):
            terms = self.terms.get(str(body.get("model")))
            refused, headers = self._admit(terms, body)
            if refused is not None:
                return await self._send_error(writer, record, refused)
            reply = as_reply(await call_handler(self.handler, body))
            return await self._chat(self._served(reply, body, terms, headers), body, record, reader, writer)
        if route == ("POST", "/v1/embeddings"):
            return await self._embed(body, record, reader, writer)
        if route[0] == "GET" and route[1] in self.routes:
            return await self._send_json(writer, record, 200, self.routes[route[1]]())
        if route == ("GET", "/v1/models"):
            data = [{"id": m, "object": "model", "created": 0, "owned_by": "epigraph"} for m in self.models]
            return await self._send_json(writer, record, 200, {"object": "list", "data": data})
        return await self._send_error(writer, record, Reply(status=404, error_message="no such route"))

    async def _embed(
        self,
        body: dict[str, Any],
        record: RecordedRequest,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> bool:
        terms = self.terms.get(str(body.get("model")))
        refused, headers = self._admit(terms, body)
        if refused is not None:
            return await self._send_error(writer, record, refused)
        fault = await call_handler(self.embed_handler, body) if self.embed_handler else None
        if fault is not None and (fault.status != 200 or fault.hang):
            return await self._chat(replace(fault, disconnect_after=None), {}, record, reader, writer)
        payload = await self._embeddings(body)
        wait = fault.delay_s if fault is not None and fault.delay_s else self._embed_wait(terms, payload)
        if wait:
            await asyncio.sleep(wait)
        extra = fault.headers if fault is not None else {}
        return await self._send_json(writer, record, 200, payload, {**headers, **extra})

    # -- a provider's terms -----------------------------------------------------------------------

    def _admit(self, terms: Terms | None, body: dict[str, Any]) -> tuple[Reply | None, dict[str, str]]:
        """(a 429 or 500 to answer instead, or None; the rate-limit headers every answer carries)."""
        if terms is None:
            return None, {}
        headers: dict[str, str] = {}
        if terms.limits is not None:
            admission = terms.limits.admit(body)
            headers = admission.headers
            if not admission.admitted:
                waits: dict[str, str] = {}
                if admission.retry_after_s != float("inf"):
                    waits = {
                        "retry-after-ms": str(max(1, round(admission.retry_after_s * 1000))),
                        "Retry-After": str(max(1, round(admission.retry_after_s + 0.4999))),
                    }
                return Reply(
                    status=429,
                    error_message=admission.message,
                    error_type=admission.limit,
                    error_code="rate_limit_exceeded",
                    headers={**headers, **waits},
                ), headers
        if terms.fails():
            return replace(Reply.server_error(), headers=headers), headers
        return None, headers

    def _served(
        self, reply: Reply, body: dict[str, Any], terms: Terms | None, headers: Mapping[str, str]
    ) -> Reply:
        """``reply`` with the rate-limit headers, and the latency model's delays unless it sets its own."""
        if headers:
            reply = replace(reply, headers={**headers, **reply.headers})
        own_delays = reply.delay_s or reply.chunk_delay_s or reply.chunk_delays is not None
        if terms is None or terms.latency is None or own_delays or reply.status != 200:
            return reply
        pieces = pieces_of(reply)
        prompt = reply.prompt_tokens if reply.prompt_tokens is not None else self._prompt_tokens(body)
        first, each = terms.latency.plan(prompt, [approx_tokens(p) for p in pieces], terms.rng)
        if body.get("stream"):
            return replace(reply, delay_s=first, chunk_delays=each)
        return replace(reply, delay_s=first + sum(each))

    @staticmethod
    def _embed_wait(terms: Terms | None, payload: dict[str, Any]) -> float:
        if terms is None or terms.latency is None:
            return 0.0
        first, _ = terms.latency.plan(int(payload["usage"]["prompt_tokens"]), [], terms.rng)
        return first

    @staticmethod
    def _prompt_tokens(body: dict[str, Any]) -> int:
        return approx_tokens(" ".join(str(m.get("content", "")) for m in body.get("messages") or []))

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
        return await self._send_json(writer, record, 200, self._bodies.completion(reply, body), reply.headers)

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
        base = self._bodies.chunk_base(reply, body)
        await send_event(writer, {**base, "choices": [delta({"role": "assistant", "content": ""})]})
        pieces = pieces_of(reply)
        for index, piece in enumerate(pieces):
            if reply.disconnect_after is not None and index >= reply.disconnect_after:
                return False
            delay = reply.chunk_delays[index] if reply.chunk_delays is not None else reply.chunk_delay_s
            if delay:
                await asyncio.sleep(delay)
            try:
                await send_event(writer, {**base, "choices": [delta({"content": piece})]})
            except ConnectionError:
                record.client_closed = True
                raise
            record.chunks_sent += 1
        if calls := self._bodies.calls(reply).get("tool_calls"):
            indexed = [{"index": n, **call} for n, call in enumerate(calls)]
            await send_event(writer, {**base, "choices": [delta({"tool_calls": indexed})]})
        await send_event(writer, {**base, "choices": [delta({}, reply.finish_reason)]})
        if reply.usage and (body.get("stream_options") or {}).get("include_usage"):
            await send_event(writer, {**base, "choices": [], "usage": self._bodies.usage(reply, body)})
        await send_event(writer, "[DONE]")
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        return True

    async def _embeddings(self, body: dict[str, Any]) -> dict[str, Any]:
        raw = body.get("input", "")
        inputs = [raw] if isinstance(raw, str) else [str(item) for item in raw]
        dim = int(body.get("dimensions") or self.embed_dim)
        vectors = None
        if self.embed_vectors is not None:
            vectors = self.embed_vectors(inputs, dim)
            if inspect.isawaitable(vectors):
                vectors = await vectors
        return embeddings_body(
            inputs,
            dim=dim,
            as_base64=body.get("encoding_format") == "base64",
            model=body.get("model") or self.models[0],
            vectors=vectors,
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
