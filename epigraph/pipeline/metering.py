"""Per-episode accounting: every LLM call and embedding request an episode makes, and its report.

:class:`MeteredLLM` and :class:`MeteredEmbedder` wrap the shared client and embedder for ONE episode.
They add no limiter of their own (concurrency stays bounded by the client's one limiter); they record
each call with its prompt, tokens and start/finish time, so the report's totals are exactly the sum
over the recorded calls and the number of sequential round trips can be measured, not guessed.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from .. import tracing
from ..embed import Embedder
from ..graph.model import IngestReport, PromptUsage
from ..prompts.protocol import LLM, ChatRequest, Completion, StreamChunk, Usage
from ..tokens import aload_encoding, estimate_usage


@dataclass(frozen=True, slots=True)
class CallRecord:
    prompt: str
    started: float
    finished: float
    input_tokens: int = 0
    output_tokens: int = 0
    ok: bool = True
    cached_input_tokens: int = 0
    """Input tokens the server reused from its prompt cache (when it said so)."""
    finish_reason: str | None = None
    """How the reply ended: ``stop``, ``length``; None when it failed or the consumer closed it."""
    followup: bool = False
    """The request asked again, carrying the model's earlier reply (``ChatRequest.reask``)."""
    text: str = ""
    """The reply as the model wrote it (kept only when the meter was asked to: ``keep_text``)."""
    asked_about: str = ""
    """The message (or episode) the request was about, its ``message`` or ``episode`` input (kept with the
    text): with episodes in flight a group's calls interleave, so the order of calls does not say it."""


def asked_about(request: ChatRequest) -> str:
    """The message an extraction request is about, or the episode a resolve request shows ("" for the
    others: summaries)."""
    return str(request.variables.get("episode") or request.variables.get("message") or "")


class MeteredLLM:
    """An ``LLM`` that forwards to ``inner`` and records every call (``keep_text``: with its reply)."""

    def __init__(self, inner: LLM, *, keep_text: bool = False) -> None:
        self.inner = inner
        self.keep_text = keep_text
        self.records: list[CallRecord] = []

    async def complete(self, request: ChatRequest) -> Completion:
        started = time.perf_counter()
        try:
            completion = await self.inner.complete(request)
        except BaseException:
            self.records.append(CallRecord(request.prompt_name, started, time.perf_counter(), ok=False))
            raise
        self._record(request, started, completion.usage, True, completion.finish_reason, completion.text)
        return completion

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamChunk]:
        started = time.perf_counter()
        last: StreamChunk | None = None
        text: list[str] = []
        chunks = self.inner.stream(request)
        try:
            async for chunk in chunks:
                last = chunk
                text.append(chunk.text)
                yield chunk
        finally:
            aclose = getattr(chunks, "aclose", None)
            if aclose is not None:
                await aclose()
            ok = last is not None and last.done and last.error is None
            usage = last.usage if last is not None else None
            if usage is None and text:  # the consumer closed a runaway stream: count what it cost
                usage = await _estimate(request, "".join(text))
            finish = last.finish_reason if last is not None and last.done else None
            self._record(request, started, usage or Usage(), ok, finish, "".join(text))

    def _record(
        self, request: ChatRequest, started: float, usage: Usage, ok: bool, finish: str | None, text: str
    ) -> None:
        self.records.append(
            CallRecord(
                request.prompt_name,
                started,
                time.perf_counter(),
                usage.input_tokens,
                usage.output_tokens,
                ok,
                usage.cached_input_tokens,
                finish,
                request.reask,
                text if self.keep_text else "",
                asked_about(request) if self.keep_text else "",
            )
        )


async def _estimate(request: ChatRequest, output: str) -> Usage:
    await aload_encoding()
    return estimate_usage(request.messages, output)


@dataclass
class MeteredEmbedder:
    """An embedder wrapper counting requests (calls with at least one text) and texts."""

    inner: Embedder
    requests: int = 0
    texts: int = 0

    @property
    def dim(self) -> int:
        return int(self.inner.dim)

    @property
    def name(self) -> str:
        return str(getattr(self.inner, "name", "embedder"))

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        if texts:
            self.requests += 1
            self.texts += len(texts)
        result: np.ndarray = await self.inner.embed(list(texts))
        return result


class Timed(Protocol):
    @property
    def started(self) -> float: ...
    @property
    def finished(self) -> float: ...


def round_trips(records: Sequence[Timed]) -> int:
    """Length of the longest chain of calls in which each starts after the previous one finished."""
    ordered = sorted(records, key=lambda r: r.finished)
    depth: list[int] = []
    for i, record in enumerate(ordered):
        before = [depth[j] for j in range(i) if ordered[j].finished <= record.started]
        depth.append(1 + max(before, default=0))
    return max(depth, default=0)


@dataclass
class ReportBuilder:
    """Collects what one episode's run produced besides the graph, then builds the IngestReport."""

    llm: MeteredLLM
    embedder: MeteredEmbedder
    stage_ms: dict[str, float] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    dropped_lines: int = 0
    names_refused: int = 0
    truncated: bool = False
    calls_ahead: int = 0
    calls_ahead_unused: int = 0

    def warn(self, message: str) -> None:
        if message not in self.warnings:
            self.warnings.append(message)

    def stage(self, name: str, started: float) -> None:
        """The stage ``name`` ran from ``started`` (``time.perf_counter()``) until now: its time added to
        the report, and its span recorded (``tracing``: when on)."""
        self.stage_ms[name] = round(self.stage_ms.get(name, 0.0) + (time.perf_counter() - started) * 1000, 3)
        tracing.recorded(f"stage {name}", started, {"epigraph.stage": name})

    def build(self) -> IngestReport:
        per_prompt: dict[str, PromptUsage] = {}
        for r in self.llm.records:
            old = per_prompt.get(r.prompt, PromptUsage())
            per_prompt[r.prompt] = PromptUsage(
                calls=old.calls + 1,
                input_tokens=old.input_tokens + r.input_tokens,
                output_tokens=old.output_tokens + r.output_tokens,
            )
        return IngestReport(
            llm_calls=len(self.llm.records),
            input_tokens=sum(r.input_tokens for r in self.llm.records),
            output_tokens=sum(r.output_tokens for r in self.llm.records),
            per_prompt=per_prompt,
            embedding_requests=self.embedder.requests,
            embedded_texts=self.embedder.texts,
            round_trips=round_trips(self.llm.records),
            stage_ms=dict(self.stage_ms),
            dropped_lines=self.dropped_lines,
            names_refused=self.names_refused,
            truncated=self.truncated,
            warnings=list(self.warnings),
            calls_ahead=self.calls_ahead,
            calls_ahead_unused=self.calls_ahead_unused,
        )
