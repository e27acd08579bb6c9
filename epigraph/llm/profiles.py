"""What an OpenAI-compatible endpoint can do, as data; and the reply clean-up that goes with it.

Endpoints differ (OpenAI, Azure, vLLM, Ollama, LM Studio, llama.cpp): some enforce a JSON schema, some
only "any JSON object", some neither; some report usage at the end of a stream, some do not; reasoning
models wrap their thinking in ``<think>...</think>``. An :class:`EndpointProfile` names those
capabilities; the client picks request parameters from the profile and never from a vendor name. When
the server rejects a capability with a 400 the client steps down (:meth:`EndpointProfile.weaker`) and
remembers the weaker profile.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

from ..config import Settings, StructuredMode
from ..prompts.protocol import ChatRequest

# Strongest first: each 400 on response_format steps one place to the right.
_MODE_ORDER: tuple[StructuredMode, ...] = ("json_schema", "json_object", "none")

MaxTokensField = Literal["max_tokens", "max_completion_tokens"]


@dataclass(frozen=True, slots=True)
class EndpointProfile:
    """Capabilities of one endpoint. Frozen: a downgrade makes a new profile."""

    structured: StructuredMode = "json_schema"
    """How ``json`` replies are constrained: a JSON schema, any JSON object, or not at all."""
    stream_usage: bool = True
    """Ask for usage at the end of a stream (``stream_options={"include_usage": True}``)."""
    strip_think: bool = True
    """Remove ``<think>...</think>`` reasoning blocks from replies."""
    max_tokens_field: MaxTokensField = "max_tokens"
    """Request field for the output cap (OpenAI's reasoning models want ``max_completion_tokens``)."""
    grammar: bool = False
    """Accepts a GBNF ``grammar`` request field (llama.cpp's server): JSONL replies are then constrained
    to lines of the per-line schema (``prompts.grammar``). A 400 naming it turns it off."""
    context_tokens: int | None = None
    """The model's context window (prompt + reply) when known, to size output caps; None: unknown."""

    @classmethod
    def from_settings(cls, settings: Settings) -> EndpointProfile:
        if settings.llm_local:
            return local_model_profile(settings.local_model_ctx)
        return cls(structured=settings.llm_structured)

    def weaker_structured(self) -> EndpointProfile | None:
        """The same profile one structured-output mode down, or None when already at ``none``."""
        index = _MODE_ORDER.index(self.structured)
        if index + 1 >= len(_MODE_ORDER):
            return None
        return replace(self, structured=_MODE_ORDER[index + 1])

    def without_stream_usage(self) -> EndpointProfile | None:
        return replace(self, stream_usage=False) if self.stream_usage else None

    def weaker_format_for(self, request: ChatRequest) -> EndpointProfile | None:
        """The next weaker profile that sends ``request`` a *different* ``response_format``, or None."""
        current = self.response_format(request)
        candidate = self.weaker_structured()
        while candidate is not None and candidate.response_format(request) == current:
            candidate = candidate.weaker_structured()
        return candidate

    def weakest_with(self, other: EndpointProfile) -> EndpointProfile:
        """Each capability at the weaker of the two (concurrent calls may each have stepped down)."""
        structured = max(self.structured, other.structured, key=_MODE_ORDER.index)
        return replace(self, structured=structured, stream_usage=self.stream_usage and other.stream_usage)

    def describe(self, request: ChatRequest) -> str:
        fmt = self.response_format(request)
        mode = fmt["type"] if fmt else "no response_format"
        return f"{mode}{'' if self.stream_usage else ', no stream usage'}"

    def response_format(self, request: ChatRequest) -> dict[str, Any] | None:
        """The ``response_format`` to send for ``request``, or None to send none.

        Only ``json`` replies are constrained: ``text`` is free-form, ``jsonl`` is many JSON values,
        which no JSON mode accepts, and ``lines`` are not JSON (their grammar constrains them).
        """
        if request.response_type != "json" or self.structured == "none":
            return None
        if self.structured == "json_schema" and request.json_schema is not None:
            return {
                "type": "json_schema",
                "json_schema": {
                    "name": schema_name(request.prompt_name),
                    "schema": dict(request.json_schema),
                    "strict": False,
                },
            }
        return {"type": "json_object"}


def local_model_profile(context_tokens: int) -> EndpointProfile:
    """llama.cpp's server (``epigraph[local-model]``): it enforces the standard ``json_schema``
    ``response_format`` by grammar, streams, reports usage at the end of a stream, and serves a
    context of ``context_tokens`` (prompt and reply together, in one slot). It also takes a GBNF
    ``grammar``, so JSONL replies are constrained to lines of their schema (``prompts.grammar``)."""
    return EndpointProfile(
        structured="json_schema", stream_usage=True, context_tokens=context_tokens, grammar=True
    )


def schema_name(prompt_name: str) -> str:
    """A ``json_schema.name`` the API accepts (``[a-zA-Z0-9_-]{1,64}``) derived from the prompt name."""
    cleaned = re.sub(r"[^a-zA-Z0-9_-]+", "_", prompt_name).strip("_")[:64]
    return cleaned or "response"


_CAPABILITY_WORDS = ("response_format", "json_schema", "json_object", "schema", "format")


def mentions_response_format(error_text: str) -> bool:
    """Whether a 400's text points at ``response_format`` (so stepping the mode down may help).

    A 400 for another reason (context too long, bad message) must not cost extra requests.
    """
    lowered = error_text.lower()
    return any(word in lowered for word in _CAPABILITY_WORDS)


def mentions_stream_options(error_text: str) -> bool:
    lowered = error_text.lower()
    return "stream_options" in lowered or "include_usage" in lowered


def error_text(body: object, fallback: str) -> str:
    """Searchable text of an API error body (message, param, code), or ``fallback``."""
    if isinstance(body, Mapping):
        parts = [str(body.get(key) or "") for key in ("message", "param", "code", "type")]
        joined = " ".join(p for p in parts if p)
        if joined:
            return joined
    if isinstance(body, str) and body:
        return body
    return fallback


_OPEN, _CLOSE = "<think>", "</think>"


class ThinkStripper:
    """Removes ``<think>...</think>`` blocks from text that arrives in pieces.

    Tags split across chunks are handled by holding back a suffix that could be the start of a tag.
    A ``<think>`` block that never closes (the model ran out of tokens while thinking) is dropped to
    the end. Whitespace right after a removed block is dropped too, so ``<think>..</think>\\n{..}``
    becomes ``{..}``. Feed every piece to :meth:`feed`, then call :meth:`finish` once.
    """

    def __init__(self) -> None:
        self._buffer = ""
        self._in_think = False
        self._after_block = False

    def feed(self, piece: str) -> str:
        """Visible text released by this piece (possibly empty)."""
        self._buffer += piece
        out: list[str] = []
        while self._buffer:
            if self._in_think:
                if not self._consume_think():
                    break
                continue
            if self._after_block:
                self._buffer = self._buffer.lstrip()
                if not self._buffer:
                    break
                self._after_block = False
            released, found = self._consume_visible()
            out.append(released)
            if not found:
                break
        return "".join(out)

    def finish(self) -> str:
        """Text still held back at the end of the reply."""
        rest = "" if self._in_think else self._buffer
        if self._after_block:
            rest = rest.lstrip()
        self._buffer = ""
        return rest

    def _consume_think(self) -> bool:
        end = self._buffer.find(_CLOSE)
        if end < 0:
            keep = _held_back(self._buffer, _CLOSE)
            self._buffer = self._buffer[len(self._buffer) - keep :]
            return False
        self._buffer = self._buffer[end + len(_CLOSE) :]
        self._in_think, self._after_block = False, True
        return True

    def _consume_visible(self) -> tuple[str, bool]:
        start = self._buffer.find(_OPEN)
        if start >= 0:
            released, self._buffer = self._buffer[:start], self._buffer[start + len(_OPEN) :]
            self._in_think = True
            return released, True
        keep = _held_back(self._buffer, _OPEN)
        cut = len(self._buffer) - keep
        released, self._buffer = self._buffer[:cut], self._buffer[cut:]
        return released, False


def _held_back(text: str, tag: str) -> int:
    """Length of the longest suffix of ``text`` that is a proper prefix of ``tag``."""
    for size in range(min(len(tag) - 1, len(text)), 0, -1):
        if text.endswith(tag[:size]):
            return size
    return 0


def strip_think(text: str) -> str:
    """``text`` without reasoning blocks (same rules as :class:`ThinkStripper`)."""
    stripper = ThinkStripper()
    return stripper.feed(text) + stripper.finish()
