"""The memory tools an agent calls (remember, search, ask, correct), whatever its framework.

:class:`MemoryTools` holds a graph's group and answers each call with the text the model reads: facts
with their ids and validity windows, so that a later ``correct`` can name one. The framework modules
(:mod:`.openai_agents`, :mod:`.pydantic_ai`) wrap these four methods as their framework's tools; the
methods' docstrings are the tools' descriptions (their ``Args`` sections describe the parameters).

A call the model can put right (a fact id that does not exist, a date it cannot read) raises one of
:data:`MODEL_FIXABLE`; each framework module turns those into a message the model reads and may retry,
and lets every other failure (the store, the language model) reach the program.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import ConflictError, NotFound, UsageError
from ..graph.model import EpisodeKind, Fact, utc_now
from ..present.tables import fmt_validity
from .memory import GroupMemory

MODEL_FIXABLE: tuple[type[Exception], ...] = (UsageError, NotFound, ConflictError, ValueError)
"""What a tool call raises when its arguments are wrong: the model reads the message and may retry."""

Tool = Callable[..., Coroutine[Any, Any, str]]


def guarded(tool: Tool, fixable: Callable[[Exception], str]) -> Tool:
    """``tool`` (same name, signature and docstring) with a call the model can put right (one of
    :data:`MODEL_FIXABLE`) answered by ``fixable`` (which returns the text the model reads, or raises
    its framework's retry signal); any other failure propagates."""

    @functools.wraps(tool)
    async def call(*args: Any, **kwargs: Any) -> str:
        try:
            return await tool(*args, **kwargs)
        except MODEL_FIXABLE as exc:
            return fixable(exc)

    return call


def fact_line(fact: Fact) -> str:
    """One fact as the model reads it: text, validity window and id."""
    window = fmt_validity(fact) or "undated"
    return f"- {fact.text} (valid {window}; id {fact.uuid})"


def fact_lines(facts: Sequence[Fact], empty: str) -> str:
    return "\n".join(fact_line(f) for f in facts) if facts else empty


@dataclass(frozen=True)
class MemoryTools:
    """The four memory tools over ``memory`` (a graph and a group). ``limit``: facts a search returns;
    ``speaker``: who the remembered notes are attributed to (None: nobody, plain text)."""

    memory: GroupMemory
    limit: int = 10
    speaker: str | None = None

    @property
    def tools(self) -> list[Tool]:
        """The tools in the order an agent is offered them."""
        return [self.remember, self.search, self.ask, self.correct]

    async def remember(self, text: str) -> str:
        """Store something worth remembering (what the user said about themselves, the people and things
        around them, and when) in the long-term memory. Returns the facts learned from it.

        Args:
            text: The statement to remember, in full sentences, with dates where known.
        """
        kind = EpisodeKind.MESSAGE if self.speaker else EpisodeKind.TEXT
        result = await self.memory.remember(text, reference_time=utc_now(), kind=kind, speaker=self.speaker)
        learned = fact_lines(result.facts, "nothing new")
        retired = f"\nno longer true:\n{fact_lines(result.invalidated, '')}" if result.invalidated else ""
        return f"remembered (episode {result.episode.uuid}); facts:\n{learned}{retired}"

    async def search(self, query: str, as_of: str | None = None) -> str:
        """Search the long-term memory for facts, each with its validity window and id.

        Args:
            query: What to look for, in a few words.
            as_of: An ISO date or time: the facts that were true then (default: now).
        """
        found = await self.memory.search(query, limit=self.limit, as_of=as_of)
        return fact_lines([r.fact for r in found.facts], "no facts found")

    async def ask(self, question: str) -> str:
        """Answer a question from the long-term memory, citing the facts and episodes it used.

        Args:
            question: The question, in full.
        """
        answer = await self.memory.ask(question)
        answer.raise_for_error()
        cited = [
            f"- [{c.id}] {c.text} ({'fact' if c.kind == 'fact' else 'episode'} id {c.uuid}"
            f"{', no longer true' if c.retired else ''})"
            for c in answer.citations
        ]
        return answer.text + ("\ncited:\n" + "\n".join(cited) if cited else "")

    async def correct(
        self, fact_id: str, reason: str, new_text: str | None = None, ended_at: str | None = None
    ) -> str:
        """Correct a remembered fact: give new_text when it was wrong as stated, or leave it out when
        it was right but is no longer true (it then ends at ended_at, default now).

        Args:
            fact_id: The fact's id, as search or remember showed it.
            reason: Why, in a few words (kept with the correction).
            new_text: The fact as it should read.
            ended_at: An ISO date or time: when it stopped being true.
        """
        if new_text is not None and ended_at is not None:
            raise UsageError("correct takes new_text or ended_at, not both: edit the fact or end it")
        if new_text is not None:
            correction = await self.memory.edit_fact(fact_id, text=new_text, reason=reason)
        else:
            correction = await self.memory.retire_fact(fact_id, at=ended_at, reason=reason)
        after = [f for f in correction.after.facts if f.uuid == fact_id]
        return f"corrected ({correction.uuid}):\n{fact_lines(after, '- the fact is gone')}"
