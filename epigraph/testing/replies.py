"""What the fake OpenAI-compatible server (:mod:`epigraph.testing.server`) answers: a :class:`Reply`
(the text and any fault, or tool calls: :class:`ToolCall`) and the *handlers* that choose one for a
request's parsed body. :func:`echo` is the default, :func:`script` plays replies in order,
:func:`reject_response_format` wraps a handler with a 400 for chosen ``response_format`` types.
Pure data and functions: nothing here knows about HTTP.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "EmbedHandler",
    "Handler",
    "Reply",
    "ReplyLike",
    "ToolCall",
    "as_reply",
    "call_handler",
    "echo",
    "reject_response_format",
    "script",
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
        return as_reply(await call_handler(handler, body))

    return wrapped


def as_reply(value: ReplyLike) -> Reply:
    """``value`` as a :class:`Reply` (a plain string is a reply with that text)."""
    return Reply(text=value) if isinstance(value, str) else value


async def call_handler(handler: Callable[[dict[str, Any]], Any], body: dict[str, Any]) -> Any:
    """What ``handler`` answers to ``body`` (awaited when the handler returns an awaitable)."""
    result = handler(body)
    return await result if inspect.isawaitable(result) else result
