"""The bounded agent behind :meth:`KnowledgeGraph.ask`: plan, look up, observe (a few times), answer.

Designed for small models:

1. **plan** (``ask_plan``, one flat JSON object): a short thought and ONE lookup with plain arguments,
   or ``answer``. At most ``max_steps`` lookups; a repeated lookup ends the looking. An unusable plan
   reply (after the runtime's one re-ask) falls back to a fact search of the question; a first plan
   that wants to answer before anything was looked up is overruled the same way.
2. **look up** (:mod:`.lookups`) and register what came back (:mod:`.observations`): numbered ``F1``,
   ``E1``, ..., within a token budget for the context.
3. **answer** (``ask_answer``, text): streamed as the model writes it, through the citation filter
   (:mod:`.citations`), so only observed ids reach the reader. Endpoints that accept a GBNF grammar are
   held to one: every sentence ends citing shown ids, or ``[none]``. Nothing observed: no model call, the
   answer says the graph holds nothing about the question.

Everything is yielded as :class:`~.chunks.AskChunk` (the invariants are in :mod:`.chunks`). Closing
the iterator (a consumer that stops, a cancelled task) closes the model's stream, and with it its HTTP
response. A model without ``stream`` (or with ``supports_streaming = False``) is called once and its
answer yielded as one chunk.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncGenerator, Sequence
from contextlib import aclosing
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from ..errors import EpigraphError, LLMError, StructuredOutputError
from ..prompts.ask_answer import PROMPT as ASK_ANSWER
from ..prompts.ask_answer import AskAnswerInput
from ..prompts.ask_plan import PROMPT as ASK_PLAN
from ..prompts.ask_plan import AskPlanInput, AskPlanOutput
from ..prompts.protocol import LLM, ChatRequest, Usage
from ..prompts.runtime import build_request, run
from ..tokens import aload_encoding, estimate_usage
from .chunks import AskChunk, AskUsage, ChunkType
from .citations import CitationFilter, cited_answer_grammar
from .lookups import ARGS, TOOLS, Lookup, Lookups, named_period
from .observations import Observations, Seen, day, shorten

log = logging.getLogger("epigraph.ask")

NOTHING = "The graph holds nothing about this question."


@dataclass(frozen=True, slots=True)
class AskOptions:
    max_steps: int = 3
    """Lookups before the answer, at most."""
    context_tokens: int = 3000
    """Budget for the facts and episodes shown to the model (what does not fit is not shown)."""
    facts_per_lookup: int = 8
    episodes_per_lookup: int = 5

    def __post_init__(self) -> None:
        if self.max_steps < 1 or self.context_tokens < 1:
            from ..errors import UsageError

            raise UsageError("AskOptions: max_steps and context_tokens must be at least 1")


def can_stream(llm: Any) -> bool:
    """Whether ``llm`` streams: it has ``stream`` and does not say ``supports_streaming = False``."""
    return callable(getattr(llm, "stream", None)) and getattr(llm, "supports_streaming", True) is not False


class _Meter:
    def __init__(self) -> None:
        self.usage, self.calls, self.lookups, self.context_tokens = Usage(), 0, 0, 0

    def add(self, usage: Usage | None, calls: int) -> None:
        self.usage = self.usage + (usage or Usage())
        self.calls += calls

    def total(self) -> AskUsage:
        u = self.usage
        return AskUsage(
            self.calls, u.input_tokens, u.output_tokens, self.lookups, self.context_tokens, u.estimated
        )


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
    ) -> None:
        self.llm, self.lookups, self.question, self.now = llm, lookups, question, now
        self.options, self.stream_answer = options, stream_answer
        budget, dated = options.context_tokens, lookups.as_of is not None  # asked as of a date
        self.observed = Observations(now=now, known_at=known_at, budget_tokens=budget, dated=dated)
        self.meter = _Meter()
        self._started = time.perf_counter()

    async def chunks(self) -> AsyncGenerator[AskChunk, None]:
        open_type: ChunkType | None = None
        try:
            await aload_encoding()
            async with aclosing(self._steps()) as steps:
                async for chunk in steps:
                    open_type = None if chunk.end_of_message else chunk.chunk_type
                    yield chunk
            async with aclosing(self._answer()) as answer:
                async for chunk in answer:
                    open_type = None if chunk.end_of_message else chunk.chunk_type
                    yield chunk
        except Exception as exc:
            if not isinstance(exc, EpigraphError):
                log.exception("ask failed on an unexpected error")
            if open_type is not None:
                yield AskChunk(open_type, "", end_of_message=True)  # close the interrupted message
            yield self._error(exc)

    # -- looking -----------------------------------------------------------------------------------

    async def _steps(self) -> AsyncGenerator[AskChunk, None]:
        done: set[tuple[str, tuple[tuple[str, str], ...]]] = set()
        for step in range(self.options.max_steps):
            plan = await self._plan(self.options.max_steps - step)
            if plan.thought.strip():
                yield AskChunk("thought", plan.thought.strip(), end_of_message=True)
            lookup = self._lookup_of(plan, first=step == 0)
            key = (lookup.tool, tuple(sorted(lookup.args.items()))) if lookup else None
            if lookup is None or key is None or key in done:
                return
            done.add(key)
            yield AskChunk("action", lookup.describe(), end_of_message=True, data=lookup.to_dict())
            found = await self.lookups.run(lookup)
            self.meter.lookups += 1
            left_out = self.observed.left_out
            seen = self.observed.add(found.facts, found.episodes)
            talks = self.observed.add_conversations(found.conversations)
            text = _observation_text(seen, found.note, self.observed.left_out - left_out, talks)
            items = [{"id": s.label, "kind": s.kind, "uuid": s.uuid, "text": shorten(s.citation.text, 120)}
                     for s in seen]  # fmt: skip
            data: dict[str, Any] = {"items": items, "note": found.note}
            if found.conversations:
                data["conversations"] = [{"key": c.key, "summary": c.summary} for c in found.conversations]
            yield AskChunk("observation", text, end_of_message=True, data=data)

    async def _plan(self, steps_left: int) -> AskPlanOutput:
        data = AskPlanInput(
            question=self.question,
            now=day(self.now),
            observations=self.observed.summary(),
            steps_left=steps_left,
        )
        try:
            result = await run(self.llm, ASK_PLAN, data)
        except StructuredOutputError as exc:
            self.meter.add(exc.usage if isinstance(exc.usage, Usage) else None, exc.attempts or 1)
            log.warning("ask_plan reply unusable, searching the question instead: %s", exc)
            return AskPlanOutput(thought="", action="search_facts", query=self.question)
        self.meter.add(result.usage, result.calls)
        value: AskPlanOutput = result.value
        return value

    def _lookup_of(self, plan: AskPlanOutput, *, first: bool) -> Lookup | None:
        """The lookup a plan asks for; None to answer. Before anything was looked up, the question."""
        if plan.action == "answer":
            if not first or self.observed:
                return None
            plan = AskPlanOutput(thought=plan.thought, action="search_facts", query=self.question)
        if plan.action == "entity" and not (plan.entity or "").strip():
            query = plan.query or self.question
            plan = AskPlanOutput(thought=plan.thought, action="search_facts", query=query)
        tool = next(t for t in TOOLS if t == plan.action)
        args = {k: str(v).strip() for k in ARGS[tool] if (v := getattr(plan, k, None)) and str(v).strip()}
        if tool == "search_facts":
            args = {"query": self.question, **args}
            if period := named_period(self.question):
                args["during"] = period  # used when the plan gives no usable as_of (see lookups)
        return Lookup(tool, args)

    # -- answering ---------------------------------------------------------------------------------

    async def _answer(self) -> AsyncGenerator[AskChunk, None]:
        flt = CitationFilter(lambda label: self.observed.get(label) is not None)
        if not len(self.observed):
            yield self._final(NOTHING, flt)
            return
        self.meter.context_tokens = self.observed.used_tokens
        data = AskAnswerInput(
            question=self.question,
            now=day(self.now),
            facts=self.observed.facts_block(),
            episodes=self.observed.episodes_block(),
            conversations=self.observed.conversations_block(),
        )
        request = answer_request(data, self.observed.labels)
        if not (self.stream_answer and can_stream(self.llm)):
            completion = await self.llm.complete(request)
            self.meter.add(completion.usage, 1)
            yield self._final((flt.feed(completion.text.strip()) + flt.finish()).rstrip(), flt)
            return
        async with aclosing(self._streamed(request)) as pieces:
            async for piece in pieces:
                if shown := flt.feed(piece):
                    yield AskChunk("answer", shown)
        yield self._final(flt.finish(), flt)

    async def _streamed(self, request: ChatRequest) -> AsyncGenerator[str, None]:
        chunks = self.llm.stream(request)
        text: list[str] = []
        try:
            async for chunk in chunks:
                if chunk.text:
                    text.append(chunk.text)
                    yield chunk.text
                if chunk.error is not None:
                    self.meter.add(None, 1)
                    raise chunk.error
                if chunk.done:
                    self.meter.add(chunk.usage or estimate_usage(request.messages, "".join(text)), 1)
                    return
            raise LLMError("the answer stream ended without a final chunk")
        finally:
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


def _observation_text(seen: list[Seen], note: str, left_out: int, conversations: Sequence[str] = ()) -> str:
    facts = sum(1 for s in seen if s.kind == "fact")
    episodes = len(seen) - facts
    head = f"{facts} fact{'s' * (facts != 1)}, {episodes} episode{'s' * (episodes != 1)}"
    lines = [head + (f" ({left_out} more left out: context budget)" if left_out else "")]
    lines += [shorten(s.line, 160) for s in seen]
    lines += [shorten("conversation " + line.removeprefix("- "), 200) for line in conversations]
    if note:
        lines.append(shorten(note, 200))
    return "\n".join(lines)
