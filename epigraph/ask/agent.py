"""The bounded agent of :meth:`KnowledgeGraph.ask` (``mode="agent"``, and ``auto`` when one context did
not answer): plan, look up, observe, a few times. The answering call is the dialog's (:mod:`.dialog`).

Designed for small models:

1. **plan** (``ask_plan``, one flat JSON object): a short thought and ONE lookup with plain arguments,
   or ``answer``. At most ``max_steps`` lookups; a repeated lookup ends the looking. An unusable plan
   reply (after the runtime's one re-ask) falls back to a fact search of the question; a first plan
   that wants to answer before anything was looked up is overruled the same way.
2. **look up** (:mod:`.lookups`) and register what came back (:mod:`.observations`): numbered ``F1``,
   ``E1``, ..., within the dialog's token budget.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator
from datetime import datetime

from ..errors import StructuredOutputError
from ..prompts.ask_plan import PROMPT as ASK_PLAN
from ..prompts.ask_plan import AskPlanInput, AskPlanOutput
from ..prompts.protocol import LLM, Usage
from ..prompts.runtime import run
from .chunks import AskChunk, Meter
from .lookups import ARGS, TOOLS, Lookup, Lookups, named_period
from .observations import Observations, action_chunk, day, observation_chunk

log = logging.getLogger("epigraph.ask")


class Agent:
    """The looking part of one dialog. Iterate :meth:`steps` once; ``observed`` and ``meter`` are the
    dialog's."""

    def __init__(
        self,
        llm: LLM,
        lookups: Lookups,
        question: str,
        *,
        now: datetime,
        observed: Observations,
        meter: Meter,
        max_steps: int,
    ) -> None:
        self.llm, self.lookups, self.question, self.now = llm, lookups, question, now
        self.observed, self.meter, self.max_steps = observed, meter, max_steps

    async def steps(self) -> AsyncGenerator[AskChunk, None]:
        done: set[tuple[str, tuple[tuple[str, str], ...]]] = set()
        for step in range(self.max_steps):
            plan = await self._plan(self.max_steps - step)
            if plan.thought.strip():
                yield AskChunk("thought", plan.thought.strip(), end_of_message=True)
            lookup = self._lookup_of(plan, first=step == 0)
            key = (lookup.tool, tuple(sorted(lookup.args.items()))) if lookup else None
            if lookup is None or key is None or key in done:
                return
            done.add(key)
            yield action_chunk(lookup)
            found = await self.lookups.run(lookup)
            self.meter.lookups += 1
            left_out = self.observed.left_out
            summaries = self.observed.add_summaries(found.summaries)
            seen = self.observed.add(found.facts, found.episodes)
            talks = self.observed.add_conversations(found.conversations)
            left = self.observed.left_out - left_out
            yield observation_chunk(
                seen, summaries, found.note, left, talks=talks, conversations=found.conversations
            )

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
