"""The one-call context: what a question needs, assembled without the model, within a token budget.

A context is a sequence of named parts, each one retrieval step (:class:`Part`), registered in order
into the dialog's :class:`~.observations.Observations` (facts numbered ``F1``..., episodes ``E1``...,
summaries beside them):

1. ``episodes``: the episodes that best match the question (the messages themselves, with their dates
   and the dates their relative words meant, :mod:`.relative_dates`);
2. ``facts``: a hybrid fact search of the question, current and past facts with their validity
   windows (marked current / ended by the observations); a question naming one year or month
   (``2020``, ``2023-05``) gets the facts that held at some time in it (the agent's rule,
   :func:`.lookups.named_period`);
3. ``entities``: the summaries of the entities the question names (by name or alias);
4. ``conversations``: the running summaries of the conversations the shown facts and episodes come from
   (background, never cited; those the dialog's moment may know, :meth:`.Lookups.conversations_of`);
5. ``fact_episodes``: the episodes the shown facts came from (their original words and dates).

Those are :data:`PARTS`, a plain question's. The question's shape (:func:`.shapes.shape_of`, read from
its grammar) picks other parts and shares (:data:`SHAPED`, :func:`parts_for`):

- ``gather`` ("What activities...", "Which books..."): instead of the fact search, ``record``: the
  whole record of the entity the question names, or that dominates the facts a search finds
  (:mod:`.record`: deduplicated, one fact about each thing before a second about any, dated; the
  search's facts when there is no such entity);
- ``when``: the facts and the episodes they came from get the room of the entity summaries (whose
  lines carry no dates);
- ``said`` ("What did X say about..."): the best-matching episodes (the message itself) get the most.

The best-matching episodes come first in every shape, with room for about as many as the QA bench's
``episodes`` baseline shows (its top 10): on a whole conversation ingested by a small model, those
reach most of what one message answers, and the graph's facts, one note per message, miss some of it;
the graph's parts then add what the top messages lack (facts said at other times, with their dates;
an entity's record). Only gathering questions read the record: for every question, or for plain
ones, it reached fewer evidence turns than the general parts. The figures, measured without a model
(``python -m bench qa_context``): docs/decisions/2026-11-25-ask.md.

Each part may use its share of the budget plus what the parts before it left unused (the last takes
all that is left), so no part crowds out the others: without conversation summaries their share goes
to the episodes of the facts shown. Another part is one more :class:`Part`: a name, a share, and a
function from the question and what was shown so far to a :class:`~.lookups.Found`.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from dataclasses import dataclass

from ..graph.model import Fact
from .lookups import Found, Lookup, Lookups, named_period
from .observations import Observations, Seen
from .record import record, whose_record
from .shapes import Shape, shape_of

ENTITIES_SHOWN = 5
"""Summaries of at most this many named entities."""


@dataclass(frozen=True, slots=True)
class Step:
    """One retrieval step of a context: the action shown (``tool(args)``), what it found, and what of it
    fit the budget."""

    part: str
    lookup: Lookup
    found: Found
    seen: list[Seen]
    summaries: list[str]
    conversations: list[str]
    """The conversation lines it registered first."""
    left_out: int


Fetch = Callable[[Lookups, str, Sequence[Seen]], Awaitable[tuple[Lookup, Found]]]
"""(lookups, question, what the earlier parts showed) -> the step's action and what it found."""


@dataclass(frozen=True, slots=True)
class Part:
    name: str
    share: float
    """Share of the budget (the shares of each shape's parts, :data:`SHAPED`, add up to 1)."""
    fetch: Fetch


async def _facts(lookups: Lookups, question: str, _: Sequence[Seen]) -> tuple[Lookup, Found]:
    lookup, facts, note = await _searched_facts(lookups, question)
    return lookup, Found(facts=facts, note=note)


async def _searched_facts(lookups: Lookups, question: str) -> tuple[Lookup, list[Fact], str]:
    """A fact search of the question (twice the agent's facts), within the period it names if any."""
    args = {"query": question}
    if period := named_period(question):
        args["during"] = period
    facts, note = await lookups.facts_about(
        question, during=args.get("during"), limit=2 * lookups.facts_limit
    )
    return Lookup("search_facts", args), facts, note


async def _entities(lookups: Lookups, question: str, _: Sequence[Seen]) -> tuple[Lookup, Found]:
    entities = [e for e in await lookups.named_for_summaries(question, ENTITIES_SHOWN) if e.summary.strip()]
    lookup = Lookup("entities", {"names": ", ".join(e.name for e in entities)})
    return lookup, Found(summaries=[lookups.summary_line(e) for e in entities])


async def _fact_episodes(lookups: Lookups, _: str, shown: Sequence[Seen]) -> tuple[Lookup, Found]:
    facts = [s for s in shown if s.kind == "fact"]
    sources = [s.citation.episode_uuids for s in facts]
    episodes = await lookups.episodes_of(sources, 2 * lookups.episodes_limit)
    return Lookup("episodes_of", {"facts": ", ".join(s.label for s in facts)}), Found(episodes=episodes)


async def _conversations(lookups: Lookups, _: str, shown: Sequence[Seen]) -> tuple[Lookup, Found]:
    episodes = [s.uuid for s in shown if s.kind == "episode"]
    firsts = [s.citation.episode_uuids[0] for s in shown if s.kind == "fact" and s.citation.episode_uuids]
    conversations = await lookups.conversations_of([*episodes, *firsts])
    lookup = Lookup("conversations_of", {"items": ", ".join(s.label for s in shown)})
    return lookup, Found(conversations=conversations)


async def _episodes(lookups: Lookups, question: str, _: Sequence[Seen]) -> tuple[Lookup, Found]:
    episodes = await lookups.matching_episodes(question, 2 * lookups.episodes_limit)
    return Lookup("search_episodes", {"query": question}), Found(episodes=episodes)


async def _record(lookups: Lookups, question: str, _: Sequence[Seen]) -> tuple[Lookup, Found]:
    searched, note = (await _searched_facts(lookups, question))[1:]
    entity = await whose_record(lookups, question, searched)
    if entity is None:
        return Lookup("record", {"entity": ""}), Found(
            facts=searched, note=note or "no entity named or dominant: the facts of a search"
        )
    return Lookup("record", {"entity": entity.name}), Found(facts=await record(lookups, question, entity))


PARTS: tuple[Part, ...] = (
    Part("episodes", 0.70, _episodes),
    Part("facts", 0.20, _facts),
    Part("entities", 0.05, _entities),
    Part("conversations", 0.03, _conversations),
    Part("fact_episodes", 0.02, _fact_episodes),
)
"""The general context: a plain question's."""
SHAPED: dict[Shape, tuple[Part, ...]] = {
    "gather": (
        Part("episodes", 0.60, _episodes),
        Part("record", 0.35, _record),
        Part("conversations", 0.03, _conversations),
        Part("fact_episodes", 0.02, _fact_episodes),
    ),
    "when": (
        Part("episodes", 0.60, _episodes),
        Part("facts", 0.25, _facts),
        Part("conversations", 0.03, _conversations),
        Part("fact_episodes", 0.12, _fact_episodes),
    ),
    "said": (
        Part("episodes", 0.75, _episodes),
        Part("facts", 0.20, _facts),
        Part("conversations", 0.03, _conversations),
        Part("fact_episodes", 0.02, _fact_episodes),
    ),
    "plain": PARTS,
}
"""The parts for each shape of question (:mod:`.shapes`)."""


def parts_for(question: str) -> tuple[Part, ...]:
    """The parts of ``question``'s context: those of its shape (:func:`.shapes.shape_of`)."""
    return SHAPED[shape_of(question)]


async def assemble(
    lookups: Lookups, question: str, observed: Observations, parts: Sequence[Part] | None = None
) -> list[Step]:
    """Every part's step, registered into ``observed`` (see the module docstring). No model call."""
    return [step async for step in steps(lookups, question, observed, parts)]


async def steps(
    lookups: Lookups, question: str, observed: Observations, parts: Sequence[Part] | None = None
) -> AsyncGenerator[Step, None]:
    """:func:`assemble`, one step at a time (the dialog streams each as it is found)."""
    parts = parts_for(question) if parts is None else parts
    budget, share = observed.budget, 0.0
    shown: list[Seen] = []
    for i, part in enumerate(parts):
        share += part.share
        ceiling = budget if i == len(parts) - 1 else int(budget * share)
        lookup, found = await part.fetch(lookups, question, shown)
        before = observed.left_out
        summaries = observed.add_summaries(found.summaries, room=ceiling - observed.used_tokens)
        seen = observed.add(found.facts, found.episodes, room=ceiling - observed.used_tokens)
        talks = observed.add_conversations(found.conversations, room=ceiling - observed.used_tokens)
        shown += seen
        yield Step(part.name, lookup, found, seen, summaries, talks, observed.left_out - before)
