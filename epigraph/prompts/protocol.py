"""The LLM protocol: what the prompt runtime needs from a model, in plain types.

It lives at the bottom of the dependency graph so that the runtime, the real client (``epigraph.llm``)
and the test doubles (``epigraph.testing.ScriptedLLM``) all meet here without importing each other.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from ..usage import Usage

__all__ = ["LLM", "ChatRequest", "Completion", "ResponseType", "StreamChunk", "Usage"]

ResponseType = Literal["text", "json", "jsonl", "lines"]


@dataclass(frozen=True, slots=True)
class ChatRequest:
    """One chat completion request.

    ``prompt_name`` and ``variables`` (the prompt's typed input as plain data) travel with the request so
    that accounting can group by prompt and scripted fakes can answer by prompt and input.
    """

    messages: list[dict[str, str]]
    prompt_name: str = ""
    variables: Mapping[str, Any] = field(default_factory=dict)
    response_type: ResponseType = "text"
    json_schema: Mapping[str, Any] | None = None
    max_tokens: int | None = None
    """The output cap of this call (derived from the prompt's shape and input); the client's own
    maximum stays the ceiling."""
    grammar: str | None = None
    """A GBNF grammar the reply must follow (``jsonl`` prompts: only lines of the per-line schema;
    ``lines`` prompts: only lines of their line format).
    Sent only to endpoints whose profile accepts one; the others get the unconstrained request."""
    small: bool = False
    """Prefer the configured small model (cheap, short prompts such as resolution)."""
    temperature: float | None = None
    """This call's sampling temperature; None: the client's own (e.g. several votes of a judge sample
    at a temperature while everything else runs at the client's, usually 0)."""
    reask: bool = False
    """The runtime asks again: the messages end with the model's earlier reply and what was wrong
    with it (a prompt's few-shot examples are assistant messages too, so the roles cannot tell)."""


@dataclass(frozen=True, slots=True)
class Completion:
    text: str
    usage: Usage
    finish_reason: str = "stop"
    model: str = ""
    latency_s: float = 0.0
    attempts: int = 1

    @property
    def truncated(self) -> bool:
        return self.finish_reason == "length"


@dataclass(frozen=True, slots=True)
class StreamChunk:
    """One piece of a streamed reply. ``done`` is True only on the last chunk of a stream.

    The last chunk carries ``usage`` and ``finish_reason``; when the stream failed it carries ``error``
    (an ``LLMError``) instead, and no chunk follows it.
    """

    text: str = ""
    done: bool = False
    usage: Usage | None = None
    finish_reason: str | None = None
    error: Exception | None = None
    latency_s: float = 0.0
    attempts: int = 1


@runtime_checkable
class LLM(Protocol):
    async def complete(self, request: ChatRequest) -> Completion:
        """One reply, retried and rate-limited inside; raises an ``LLMError`` subtype when it gives up."""

    def stream(self, request: ChatRequest) -> AsyncIterator[StreamChunk]:
        """Incremental chunks; errors arrive as the final chunk, never raised mid-iteration."""
