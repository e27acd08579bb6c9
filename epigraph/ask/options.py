"""How a question is answered: the path (``mode``) and the bounds of a dialog.

Paths:

- ``context``: the one-call path. The question's context is assembled without the model
  (:mod:`.context`: facts with their windows, the summaries of the entities it names, the episodes those
  facts came from and the best-matching ones, within ``one_call_tokens``), then ONE answering call.
- ``agent``: the bounded agent (:mod:`.agent`): plan a lookup, look up, observe (at most ``max_steps``
  times), then answer. For what one context cannot hold (several hops).
- ``auto``: the one-call path first; the agent only when that answer declares that nothing shown
  answers the question (its first citation mark is ``[none]``, or the context was empty) and budget
  remains (``max_steps`` >= 1 and the context used less than ``context_tokens``). The agent then starts
  from what the context showed, its lookups adding up to ``context_tokens``; if they add nothing new,
  the answer says the graph holds nothing about the question without another call. While the first
  answer streams, it is held back until its first citation mark (one sentence under the citing
  grammar), so a declined answer is never shown.

:data:`DEFAULT_MODE` is the path taken when none is given, by :meth:`KnowledgeGraph.ask`, the CLI, HTTP
and MCP alike: the one constant to change.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ..errors import UsageError

AskMode = Literal["context", "agent", "auto"]
ASK_MODES: tuple[AskMode, ...] = ("context", "agent", "auto")
DEFAULT_MODE: AskMode = "auto"
"""The path ``ask`` takes when none is given (see the module docstring)."""


def ask_mode(mode: str | None) -> AskMode:
    """``mode`` checked (None: :data:`DEFAULT_MODE`); a :class:`UsageError` names the valid ones."""
    if mode is None:
        return DEFAULT_MODE
    if mode not in ASK_MODES:
        raise UsageError(f"ask mode must be one of {', '.join(ASK_MODES)}, got {mode!r}")
    return mode


@dataclass(frozen=True, slots=True)
class AskOptions:
    max_steps: int = 3
    """Agent: lookups before the answer, at most (auto: after the context, at most)."""
    context_tokens: int = 3000
    """Agent: budget for the facts, episodes and summaries shown to the answering call (what does not
    fit is not shown); auto: the context's and the agent's lookups together."""
    one_call_tokens: int = 650
    """One-call path: the budget its context is assembled to (the answering call's prompt grows with
    it, and with it the time to the first answer token). 650 rather than 1000: answers as good, sooner,
    on the local model (the figures: docs/decisions/2026-11-25-ask.md)."""
    facts_per_lookup: int = 8
    """Facts per agent lookup (the one-call context searches twice as many)."""
    episodes_per_lookup: int = 5
    """Episodes per agent lookup (the one-call context: twice as many of each kind)."""

    def __post_init__(self) -> None:
        if self.max_steps < 0 or min(self.context_tokens, self.one_call_tokens) < 1:
            raise UsageError(
                "AskOptions: max_steps must be at least 0, context_tokens and one_call_tokens at least 1"
            )
        if min(self.facts_per_lookup, self.episodes_per_lookup) < 1:
            raise UsageError("AskOptions: facts_per_lookup and episodes_per_lookup must be at least 1")
