"""One question's dialog: the retrieval steps of its path (:mod:`.options`), then the answer.

- **looking**: ``context`` and ``auto`` assemble one context without the model (:mod:`.context`), each
  part shown as an action and an observation; ``agent`` plans its lookups (:mod:`.agent`).
- **answering** (``ask_answer``, text): streamed as the model writes it, through the citation filter
  (:mod:`.citations`), so only shown ids reach the reader. Endpoints that accept a GBNF grammar are
  held to one: every sentence ends citing shown ids, or ``[none]``. Nothing shown: no model call, the
  answer says the graph holds nothing about the question.
- **auto**: when the context's answer declares that nothing shown answers the question (its first mark
  is ``[none]``), its stream is closed and never shown, a thought says the dialog looks further, and the
  agent's steps and a second answer follow (the rule: :mod:`.options`).

Everything is yielded as :class:`~.chunks.AskChunk` (the invariants are in :mod:`.chunks`). Closing
the iterator (a consumer that stops, a cancelled task) closes the model's stream, and with it its HTTP
response. A model without ``stream`` (or with ``supports_streaming = False``) is called once and its
answer yielded as one chunk.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncGenerator
from contextlib import aclosing
from dataclasses import replace
from datetime import datetime
from typing import Any

from ..errors import EpigraphError, LLMError
from ..prompts.ask_answer import PROMPT as ASK_ANSWER
from ..prompts.ask_answer import AskAnswerInput
from ..prompts.protocol import LLM, ChatRequest
from ..prompts.runtime import build_request
from ..tokens import aload_encoding, estimate_usage
from .agent import steps as agent_steps
from .chunks import AskChunk, ChunkType, Meter
from .citations import CitationFilter, cited_answer_grammar
from .context import steps as context_steps
from .lookups import Lookups
from .observations import Observations, action_chunk, day, observation_chunk
from .options import AskMode, AskOptions

log = logging.getLogger("epigraph.ask")

NOTHING = "The graph holds nothing about this question."
LOOKING_FURTHER = "The context did not answer the question: looking further."
"""The thought of an ``auto`` dialog that falls back to the agent."""


def can_stream(llm: Any) -> bool:
    """Whether ``llm`` streams: it has ``stream`` and does not say ``supports_streaming = False``."""
    return callable(getattr(llm, "stream", None)) and getattr(llm, "supports_streaming", True) is not False


class Dialog:
    """One question's dialog. Iterate :meth:`chunks` once."""

    def __init__(
        self,
        llm: LLM,
        lookups: Lookups,
        question: str,
        *,
        now: datetime,
        known_at: datetime | None,
        options: AskOptions,
        stream_answer: bool,
        mode: AskMode,
    ) -> None:
        self.llm, self.lookups, self.question, self.now = llm, lookups, question, now
        self.options, self.stream_answer, self.mode = options, stream_answer, mode
        budget = options.context_tokens if mode == "agent" else options.one_call_tokens
        dated = lookups.as_of is not None  # asked as of a date
        self.observed = Observations(now=now, known_at=known_at, budget_tokens=budget, dated=dated)
        self.meter = Meter()
        self._declined = False
        self._started = time.perf_counter()

    async def chunks(self) -> AsyncGenerator[AskChunk, None]:
        open_type: ChunkType | None = None
        try:
            await aload_encoding()
            async with aclosing(self._dialog()) as dialog:
                async for chunk in dialog:
                    open_type = None if chunk.end_of_message else chunk.chunk_type
                    yield chunk
        except Exception as exc:
            if not isinstance(exc, EpigraphError):
                log.exception("ask failed on an unexpected error")
            if open_type is not None:
                yield AskChunk(open_type, "", end_of_message=True)  # close the interrupted message
            yield self._error(exc)

    async def _dialog(self) -> AsyncGenerator[AskChunk, None]:
        if self.mode == "agent":
            async for chunk in self._agent_steps():
                yield chunk
            async for chunk in self._answer():
                yield chunk
            return
        async for chunk in self._context_steps():
            yield chunk
        probe = self.mode == "auto" and self._may_look_further()
        async for chunk in self._answer(probe=probe):
            yield chunk
        if not self._declined:
            return
        yield AskChunk("thought", LOOKING_FURTHER, end_of_message=True)
        self.observed.widen(self.options.context_tokens)
        shown = len(self.observed)
        async for chunk in self._agent_steps():
            yield chunk
        if len(self.observed) == shown:  # nothing new: the same context would be declined again
            yield self._final(NOTHING, CitationFilter(lambda _: False))
            return
        async for chunk in self._answer():
            yield chunk

    def _may_look_further(self) -> bool:
        """``auto``: whether budget remains for the agent after the context (:mod:`.options`)."""
        return self.options.max_steps >= 1 and self.observed.used_tokens < self.options.context_tokens

    # -- looking -----------------------------------------------------------------------------------

    async def _context_steps(self) -> AsyncGenerator[AskChunk, None]:
        async with aclosing(context_steps(self.lookups, self.question, self.observed)) as steps:
            async for step in steps:
                self.meter.lookups += 1
                yield action_chunk(step.lookup)
                yield observation_chunk(
                    step.seen, step.summaries, step.found.note, step.left_out,
                    talks=step.conversations, conversations=step.found.conversations,
                )  # fmt: skip

    async def _agent_steps(self) -> AsyncGenerator[AskChunk, None]:
        async with aclosing(agent_steps(self)) as steps:
            async for chunk in steps:
                yield chunk

    # -- answering ---------------------------------------------------------------------------------

    async def _answer(self, *, probe: bool = False) -> AsyncGenerator[AskChunk, None]:
        """The answer. ``probe``: an answer that begins with ``[none]`` (declines) is not shown (it sets
        ``_declined``, and its stream is closed at that mark); the text is held back until the reply
        either declines or says something else."""
        flt = CitationFilter(lambda label: self.observed.get(label) is not None)
        if not len(self.observed):
            if probe:
                self._declined = True
            else:
                yield self._final(NOTHING, flt)
            return
        self.meter.context_tokens = self.observed.used_tokens
        data = AskAnswerInput(
            question=self.question,
            now=day(self.now),
            facts=self.observed.facts_block(),
            episodes=self.observed.episodes_block(),
            summaries=self.observed.summaries_block(),
            conversations=self.observed.conversations_block(),
        )
        request = answer_request(data, self.observed.labels)
        if not (self.stream_answer and can_stream(self.llm)):
            completion = await self.llm.complete(request)
            self.meter.add(completion.usage, 1)
            text = (flt.feed(completion.text.strip()) + flt.finish()).rstrip()
            if probe and flt.declined:
                self._declined = True
                return
            yield self._final(text, flt)
            return
        held: list[str] | None = [] if probe else None
        async with aclosing(self._streamed(request)) as pieces:
            async for piece in pieces:
                shown = flt.feed(piece)
                if held is not None:
                    held.append(shown)
                    if flt.declined:
                        self._declined = True
                        return  # closes the model's stream
                    if not flt.spoke and flt.first_mark is None:
                        continue
                    shown, held = "".join(held), None
                if shown:
                    yield AskChunk("answer", shown)
        yield self._final("".join(held or ()) + flt.finish(), flt)

    async def _streamed(self, request: ChatRequest) -> AsyncGenerator[str, None]:
        chunks = self.llm.stream(request)
        text: list[str] = []
        counted = False
        try:
            async for chunk in chunks:
                if chunk.text:
                    text.append(chunk.text)
                    yield chunk.text
                if chunk.error is not None:
                    self.meter.add(None, 1)
                    counted = True
                    raise chunk.error
                if chunk.done:
                    self.meter.add(chunk.usage or estimate_usage(request.messages, "".join(text)), 1)
                    counted = True
                    return
            raise LLMError("the answer stream ended without a final chunk")
        finally:
            if not counted:  # closed before its end (auto's declined answer, a consumer that stopped)
                self.meter.add(estimate_usage(request.messages, "".join(text)), 1)
            aclose = getattr(chunks, "aclose", None)
            if aclose is not None:
                await aclose()

    def _final(self, content: str, flt: CitationFilter) -> AskChunk:
        cited = [s for label in flt.cited if (s := self.observed.get(label)) is not None]
        if flt.dropped:
            log.warning("ask: the answer cited ids no lookup returned, dropped: %s", ", ".join(flt.dropped))
        return AskChunk(
            "answer",
            content,
            end_of_message=True,
            end_of_dialog=True,
            citations=tuple(s.citation for s in cited),
            dropped=tuple(flt.dropped),
            usage=self.meter.total(),
            latency_ms=self._elapsed_ms(),
        )

    def _error(self, exc: Exception) -> AskChunk:
        return AskChunk(
            "error",
            str(exc) or type(exc).__name__,
            end_of_message=True,
            end_of_dialog=True,
            data={"type": type(exc).__name__},
            usage=self.meter.total(),
            latency_ms=self._elapsed_ms(),
            exception=exc,
        )

    def _elapsed_ms(self) -> float:
        return (time.perf_counter() - self._started) * 1000.0


def answer_request(data: AskAnswerInput, labels: list[str]) -> ChatRequest:
    """The answering call: ``ask_answer`` with a grammar that lets the reply cite only ``labels``
    (used by endpoints that accept one; the others get the prompt's request to cite)."""
    return replace(build_request(ASK_ANSWER, data), grammar=cited_answer_grammar(labels))
