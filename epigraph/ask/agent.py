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
from typing import Protocol

from ..errors import StructuredOutputError
from ..prompts.ask_plan import PROMPT as ASK_PLAN
from ..prompts.ask_plan import AskPlanInput, AskPlanOutput
from ..prompts.protocol import LLM, Usage
from ..prompts.runtime import run
from .chunks import AskChunk, Meter
from .lookups import ARGS, TOOLS, Lookup, Lookups, named_period
from .observations import Observations, action_chunk, observation_chunk
from .options import AskOptions

log = logging.getLogger("epigraph.ask")


class DialogState(Protocol):
    """The dialog the agent's steps run in, as they read and write it (:class:`.dialog.Dialog` is one;
    a Protocol, so that the dialog, which runs the agent, is not imported back)."""

    llm: LLM
    lookups: Lookups
    question: str
    now: datetime
    options: AskOptions
    observed: Observations
    meter: Meter


async def steps(dialog: DialogState) -> AsyncGenerator[AskChunk, None]:
    """The agent's steps in ``dialog`` (its model, lookups, observations and meter): at most
    ``options.max_steps`` lookups, each a thought, an action and an observation."""
    max_steps = dialog.options.max_steps
    done: set[tuple[str, tuple[tuple[str, str], ...]]] = set()
    for step in range(max_steps):
        plan = await _plan(dialog, max_steps - step)
        if plan.thought.strip():
            yield AskChunk("thought", plan.thought.strip(), end_of_message=True)
        lookup = _lookup_of(dialog, plan, first=step == 0)
        key = (lookup.tool, tuple(sorted(lookup.args.items()))) if lookup else None
        if lookup is None or key is None or key in done:
            return
        done.add(key)
        yield action_chunk(lookup)
        found = await dialog.lookups.run(lookup)
        dialog.meter.lookups += 1
        observed = dialog.observed
        left_out = observed.left_out
        summaries = observed.add_summaries(found.summaries)
        seen = observed.add(found.facts, found.episodes)
        talks = observed.add_conversations(found.conversations)
        left = observed.left_out - left_out
        yield observation_chunk(
            seen, summaries, found.note, left, talks=talks, conversations=found.conversations
        )


async def _plan(dialog: DialogState, steps_left: int) -> AskPlanOutput:
    data = AskPlanInput(
        question=dialog.question,
        now=f"{dialog.now:%Y-%m-%d}",  # the plan's dates are ISO, as its tools take them
        observations=dialog.observed.summary(),
        steps_left=steps_left,
    )
    try:
        result = await run(dialog.llm, ASK_PLAN, data)
    except StructuredOutputError as exc:
        dialog.meter.add(exc.usage if isinstance(exc.usage, Usage) else None, exc.attempts or 1)
        log.warning("ask_plan reply unusable, searching the question instead: %s", exc)
        return AskPlanOutput(thought="", action="search_facts", query=dialog.question)
    dialog.meter.add(result.usage, result.calls)
    value: AskPlanOutput = result.value
    return value


def _lookup_of(dialog: DialogState, plan: AskPlanOutput, *, first: bool) -> Lookup | None:
    """The lookup a plan asks for; None to answer. Before anything was looked up, the question."""
    question = dialog.question
    if plan.action == "answer":
        if not first or dialog.observed:
            return None
        plan = AskPlanOutput(thought=plan.thought, action="search_facts", query=question)
    if plan.action == "entity" and not (plan.entity or "").strip():
        plan = AskPlanOutput(thought=plan.thought, action="search_facts", query=plan.query or question)
    tool = next(t for t in TOOLS if t == plan.action)
    args = {k: str(v).strip() for k in ARGS[tool] if (v := getattr(plan, k, None)) and str(v).strip()}
    if tool == "search_facts":
        args = {"query": question, **args}
        if period := named_period(question):
            args["during"] = period  # used when the plan gives no usable as_of (see lookups)
    return Lookup(tool, args)
