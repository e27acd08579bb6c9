"""Test doubles that ship with the library: use them in your own tests and notebooks.

- :class:`ScriptedLLM` implements the :class:`~epigraph.prompts.LLM` protocol from a script: answers
  chosen by prompt name and input, with scripted truncation, errors and latency, both for ``complete``
  and for ``stream``; every call is recorded with token counts from the same local BPE counter the real
  client uses (:mod:`epigraph.tokens`).
- :class:`HashEmbedder` implements the :class:`~epigraph.embed.Embedder` protocol without a model:
  deterministic feature hashing, so texts sharing words get similar vectors and hybrid search tests
  still mean something.
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import UsageError
from ..prompts.protocol import ChatRequest, Completion, StreamChunk, Usage
from ..tokens import aload_encoding, count_message_tokens, count_text_tokens

__all__ = ["HashEmbedder", "RecordedCall", "ScriptError", "ScriptedLLM", "ScriptedReply"]


class ScriptError(UsageError):
    """The script has no answer for a call (unknown prompt, replies used up): a bug in the test."""


@dataclass(frozen=True, slots=True)
class ScriptedReply:
    """One scripted answer.

    ``error`` is raised by ``complete`` (after the delays) and sent by ``stream`` as the final chunk
    after ``text`` (so a stream can fail part-way). ``delay_s`` is the time to the first token;
    ``chunk_delay_s`` is paid per chunk of ``chunk_size`` characters, by ``complete`` as well, so a
    streamed and a non-streamed call of the same reply take the same time.
    """

    text: str = ""
    finish_reason: str = "stop"
    error: Exception | None = None
    delay_s: float = 0.0
    chunk_size: int = 16
    chunk_delay_s: float = 0.0
    usage: Usage | None = None
    """Reported usage; computed with the BPE counter when None."""

    def chunks(self) -> list[str]:
        size = max(1, self.chunk_size)
        return [self.text[i : i + size] for i in range(0, len(self.text), size)]


Reply = str | ScriptedReply
Responder = Callable[[ChatRequest], "Reply | Awaitable[Reply]"]
ScriptEntry = Reply | Sequence[Reply] | Responder
Script = Responder | Mapping[str, ScriptEntry]


@dataclass(slots=True)
class RecordedCall:
    prompt_name: str
    request: ChatRequest
    completion: Completion | None = None
    """None when the call failed (see ``error``)."""
    started: float = 0.0
    """``time.perf_counter()`` when the call began."""
    finished: float = 0.0
    streamed: bool = False
    error: Exception | None = None

    @property
    def variables(self) -> Mapping[str, Any]:
        return self.request.variables


class ScriptedLLM:
    """An :class:`~epigraph.prompts.LLM` that answers from a script.

    ``script`` is either a function ``(request) -> str | ScriptedReply`` (sync or async) or a mapping
    ``{prompt_name: reply | [reply, ...] | function}``; a list is consumed one reply per call, and the
    key ``"*"`` answers any prompt not listed. A call the script cannot answer raises
    :class:`ScriptError` naming the prompt.
    """

    def __init__(self, script: Script, *, model: str = "scripted") -> None:
        self._script = script
        self.model = model
        self.calls: list[RecordedCall] = []
        self.in_flight = 0
        self.max_concurrent = 0
        self._positions: dict[str, int] = {}

    # -------------------------------------------------------------------------------- accounting

    def calls_for(self, prompt_name: str) -> list[RecordedCall]:
        return [c for c in self.calls if c.prompt_name == prompt_name]

    @property
    def usage(self) -> Usage:
        return sum((c.completion.usage for c in self.calls if c.completion), Usage())

    # ---------------------------------------------------------------------------------- protocol

    async def complete(self, request: ChatRequest) -> Completion:
        record = self._begin(request, streamed=False)
        try:
            reply = await self._answer(request)
            await asyncio.sleep(reply.delay_s + reply.chunk_delay_s * len(reply.chunks()))
            if reply.error is not None:
                raise reply.error
            await aload_encoding()  # the first BPE load is slow: keep it off the event loop
            record.completion = self._completion(request, reply, record.started)
            return record.completion
        except Exception as exc:
            record.error = exc
            raise
        finally:
            self._end(record)

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamChunk]:
        record = self._begin(request, streamed=True)
        try:
            reply = await self._answer(request)
            await asyncio.sleep(reply.delay_s)
            for piece in reply.chunks():
                await asyncio.sleep(reply.chunk_delay_s)
                yield StreamChunk(text=piece)
            if reply.error is not None:
                record.error = reply.error
                yield StreamChunk(done=True, error=reply.error, latency_s=self._since(record.started))
                return
            await aload_encoding()
            record.completion = self._completion(request, reply, record.started)
            yield StreamChunk(
                done=True,
                usage=record.completion.usage,
                finish_reason=reply.finish_reason,
                latency_s=record.completion.latency_s,
            )
        finally:
            self._end(record)

    # ---------------------------------------------------------------------------------- internals

    def _begin(self, request: ChatRequest, *, streamed: bool) -> RecordedCall:
        record = RecordedCall(request.prompt_name, request, started=time.perf_counter(), streamed=streamed)
        self.calls.append(record)
        self.in_flight += 1
        self.max_concurrent = max(self.max_concurrent, self.in_flight)
        return record

    def _end(self, record: RecordedCall) -> None:
        self.in_flight -= 1
        record.finished = time.perf_counter()

    @staticmethod
    def _since(started: float) -> float:
        return time.perf_counter() - started

    def _completion(self, request: ChatRequest, reply: ScriptedReply, started: float) -> Completion:
        usage = reply.usage or Usage(count_message_tokens(request.messages), count_text_tokens(reply.text))
        return Completion(
            text=reply.text,
            usage=usage,
            finish_reason=reply.finish_reason,
            model=self.model,
            latency_s=self._since(started),
        )

    async def _answer(self, request: ChatRequest) -> ScriptedReply:
        entry = self._entry(request)
        if isinstance(entry, str | ScriptedReply):
            answer: Any = entry
        elif callable(entry):
            answer = entry(request)
            if inspect.isawaitable(answer):
                answer = await answer
        else:
            answer = self._next_in_list(request.prompt_name, entry)
        if isinstance(answer, str):
            return ScriptedReply(answer)
        if isinstance(answer, ScriptedReply):
            return answer
        raise ScriptError(
            f"ScriptedLLM: the script for prompt {request.prompt_name!r} returned "
            f"{type(answer).__name__}; expected str or ScriptedReply"
        )

    def _entry(self, request: ChatRequest) -> Any:
        if not isinstance(self._script, Mapping):
            return self._script
        name = request.prompt_name
        if name in self._script:
            return self._script[name]
        if "*" in self._script:
            return self._script["*"]
        known = ", ".join(sorted(self._script)) or "none"
        raise ScriptError(f"ScriptedLLM has no reply for prompt {name!r} (scripted prompts: {known})")

    def _next_in_list(self, name: str, replies: Sequence[Reply]) -> Reply:
        position = self._positions.get(name, 0)
        if position >= len(replies):
            raise ScriptError(
                f"ScriptedLLM: prompt {name!r} called {position + 1} times, "
                f"but the script has only {len(replies)} replies"
            )
        self._positions[name] = position + 1
        return replies[position]


# ------------------------------------------------------------------------------------------ embedder

_WORD = re.compile(r"\w+", re.UNICODE)


@dataclass
class HashEmbedder:
    """Deterministic embeddings by feature hashing: lowercased word unigrams (weight 1) and character
    trigrams of each word (weight 0.5), each hashed (BLAKE2b, so stable across processes) to a signed
    coordinate; rows are L2-normalized. Texts sharing words or word pieces are close; an empty text is
    the zero vector. ``requests`` counts embed calls with at least one text."""

    dim: int = 384
    name: str = "hash"
    requests: int = field(default=0, init=False)

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        if isinstance(texts, str):
            raise UsageError("embed() takes a sequence of texts, not one str")
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        self.requests += 1
        for row, text in enumerate(texts):
            for feature, weight in _features(text):
                digest = int.from_bytes(hashlib.blake2b(feature.encode(), digest_size=8).digest(), "big")
                sign = 1.0 if digest & 1 else -1.0
                out[row, (digest >> 1) % self.dim] += sign * weight
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        np.divide(out, norms, out=out, where=norms > 0)
        return out


def _features(text: str) -> list[tuple[str, float]]:
    features: list[tuple[str, float]] = []
    for word in _WORD.findall(text.lower()):
        features.append(("w:" + word, 1.0))
        padded = f" {word} "
        features.extend(("c:" + padded[i : i + 3], 0.5) for i in range(len(padded) - 2))
    return features
