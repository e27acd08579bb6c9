"""Lookups over the graph: hybrid fact search, one entity's view, the episodes of a range (the agent's
tools), and the pieces the one-call context is assembled from (:mod:`.context`): facts, the entities a
question names, the episodes facts came from, the summaries of their conversations, the best-matching
episodes.

Each lookup returns facts and episodes (a :class:`Found`), and summaries to show beside them; nothing
here talks to a model. Time rules
(the dialog's ``as_of`` is its "now", ``known_at`` its system time):

- ``search_facts``: facts, and the episodes that best match the same query (the original words: a
  small model's facts can miss what a question asks, docs/decisions/2026-11-25-ask.md); the episodes
  are bounded by the dialog's ``as_of`` only, since a later
  message may tell what held at an earlier date. With an ``as_of`` date: the facts true then (the
  store's time filter). Without one:
  current AND past facts, each with its window, so a question about the past finds what held then and
  the answer can tell "ended" from "current"; facts begun after the dialog's ``as_of`` are left out.
  A date on or after the dialog's own day counts as none: a small model copies "Now" into ``as_of``
  for "where did Bob teach in 2020?", and a search of the facts true now hides the answer. Without a
  usable date, a question naming one year or month (``2020``, ``2023-05``) is searched for the facts
  that held at some time in it (``during``, set by the agent and shown in the action).
- ``entity``: the entity's current facts and retired history, and the episodes mentioning it.
- ``episodes``: by query (hybrid episode search), or the newest of a time range.
- entity summaries are not versioned (they describe the graph as last ingested): they are shown only
  when the dialog has no ``known_at`` and its ``as_of`` is not before the group's newest episode.

Every agent lookup also brings the running summaries of the conversations its facts and episodes come
from (``Found.conversations``: background the answer may use, never cite; the one-call context reads
them for what its earlier parts showed, :meth:`Lookups.conversations_of`): a fact's first episode, or a
found episode, names its conversation by its source (``graph.derived.chain_key``). A summary that covers
episodes after the dialog's ``as_of``, or was written after its ``known_at``, is left out: it could tell
what the dialog's moment did not know yet.

With ``known_at`` every lookup keeps only what the graph had recorded by then (facts and episodes).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, Literal

from ..embed import Embedder
from ..errors import EntityNotFound
from ..graph.derived import ConversationSummary, chain_key
from ..graph.model import Entity, Episode, Fact, to_utc, utc_now
from ..graph.roles import optional
from ..graph.store import FactFilter, GraphReads, ViewReads
from ..graph.temporal import EVERYTHING, believed_interval, interval, is_known_at
from ..language import LUCENE_STOP_WORDS
from ..search import EPISODES_HYBRID, FACTS_HYBRID, entity_view, search

Tool = Literal["search_facts", "entity", "episodes"]
TOOLS: tuple[Tool, ...] = ("search_facts", "entity", "episodes")
ARGS: dict[Tool, tuple[str, ...]] = {
    "search_facts": ("query", "as_of"),  # and "during", which the agent sets from the question
    "entity": ("entity",),
    "episodes": ("query", "since", "until"),
}
"""The arguments each lookup reads (others the model sends are ignored)."""


@dataclass(frozen=True, slots=True)
class Lookup:
    tool: str
    """One of :data:`TOOLS` (the agent's), or a step of the one-call context (:mod:`.context`)."""
    args: dict[str, str] = field(default_factory=dict)

    def describe(self) -> str:
        """``search_facts(query="Alice lives", as_of="2022-06-01")``."""
        inner = ", ".join(f"{k}={v!r}" for k, v in self.args.items())
        return f"{self.tool}({inner})"

    def to_dict(self) -> dict[str, Any]:
        return {"tool": self.tool, "args": dict(self.args)}


@dataclass(frozen=True, slots=True)
class Found:
    facts: list[Fact] = field(default_factory=list)
    episodes: list[Episode] = field(default_factory=list)
    note: str = ""
    """What the model should know beyond the items (an unknown name and the closest ones, a bad date)."""
    summaries: list[tuple[str, str]] = field(default_factory=list)
    """``(key, line)`` shown beside the items, never cited (an entity's uuid and its summary)."""
    conversations: list[ConversationSummary] = field(default_factory=list)
    """The summaries of the conversations the facts and episodes come from (background, not cited)."""


RECORD_LIMIT = 500
"""An entity's record (:meth:`Lookups.facts_of`) reads at most this many facts."""
SUMMARY_CHARS = 300
"""An entity's summary is shown cut to this many characters."""
_WORD = re.compile(r"[^\W_][\w'’.-]*")
_NOT_NAMES = (
    frozenset(
        "what when where who whom whose which why how did does do done has have had would could should can "
        "i you he she we me my your his her our its".split()
    )
    | LUCENE_STOP_WORDS
)
NAME_WORDS = 4
"""A name the question names is at most this many words long."""


def name_candidates(question: str) -> list[str]:
    """Every run of 1 to :data:`NAME_WORDS` words of ``question`` that could be a name, longest first,
    with possessives also without their ``'s`` ("Melanie's kids", "Melanie"); runs that start or end
    with a question or stop word are left out."""
    words = [w.rstrip(".") for w in _WORD.findall(question)]
    out: list[str] = []
    for size in range(min(NAME_WORDS, len(words)), 0, -1):
        for i in range(len(words) - size + 1):
            run = words[i : i + size]
            if run[0].casefold() in _NOT_NAMES or run[-1].casefold() in _NOT_NAMES:
                continue
            text = " ".join(run)
            out.append(text)
            if size == 1 and (bare := re.sub(r"['’]s$", "", text)) != text:
                out.append(bare)
    return list(dict.fromkeys(out))


_PERIOD = re.compile(r"\b(?:19|20)\d{2}(?:-(?:0[1-9]|1[0-2]))?\b")


def named_period(question: str) -> str | None:
    """The one year or month (``2020``, ``2023-05``) a question names; None if none or several."""
    found = set(_PERIOD.findall(question))
    return found.pop() if len(found) == 1 else None


def period_bounds(text: str | None) -> tuple[datetime, datetime] | None:
    """``2020`` -> [2020-01-01, 2021-01-01); ``2023-05`` -> [2023-05-01, 2023-06-01); else None."""
    value = (text or "").strip()
    start = parse_when(value) if _PERIOD.fullmatch(value) else None
    if start is None:
        return None
    if len(value) == 4:
        return start, start.replace(year=start.year + 1)
    month = start.month % 12 + 1
    return start, start.replace(year=start.year + (month == 1), month=month)


def parse_when(text: str | None) -> datetime | None:
    """A date the model wrote: ``2022``, ``2022-06``, ``2022-06-01`` or an ISO datetime, or as the
    answering context writes dates (``1 June 2022``, ``June 2022``); None if not."""
    if not text:
        return None
    value = text.strip()
    for spoken in ("%d %B %Y", "%B %Y"):
        try:
            return datetime.strptime(value, spoken).replace(tzinfo=UTC)
        except ValueError:
            pass
    if len(value) == 4 and value.isdigit():
        value += "-01-01"
    elif len(value) == 7 and value[:4].isdigit() and value[4] == "-":
        value += "-01"
    try:
        parsed: datetime = to_utc(datetime.fromisoformat(value.replace("Z", "+00:00")))
    except ValueError:
        return None
    return parsed


class Lookups:
    """Runs :class:`Lookup` s against one group of a store."""

    def __init__(
        self,
        store: GraphReads,
        embedder: Embedder,
        group_id: str,
        *,
        as_of: datetime | None,
        known_at: datetime | None,
        facts_limit: int = 8,
        episodes_limit: int = 5,
        now: datetime | None = None,
    ) -> None:
        """``now``: the dialog's "now" (its ``as_of``, else the present; default: the present)."""
        self.store, self.embedder, self.group_id = store, embedder, group_id
        self.as_of, self.known_at = as_of, known_at
        self.now = now or as_of or utc_now()
        self.facts_limit, self.episodes_limit = facts_limit, episodes_limit
        self._newest: datetime | None = None

    async def run(self, lookup: Lookup) -> Found:
        return await self._with_conversations(await self._run(lookup))

    async def _run(self, lookup: Lookup) -> Found:
        if lookup.tool == "search_facts":
            args = lookup.args
            return await self.search_facts(args.get("query", ""), args.get("as_of"), args.get("during"))
        if lookup.tool == "entity":
            return await self.entity(lookup.args.get("entity", ""))
        return await self.episodes(
            lookup.args.get("query"), lookup.args.get("since"), lookup.args.get("until")
        )

    async def search_facts(self, query: str, as_of: str | None = None, during: str | None = None) -> Found:
        if not query.strip():
            return Found(note="search_facts needs a query")
        facts, note = await self.facts_about(query, as_of, during)
        return Found(facts, await self.matching_episodes(query), note=note)

    async def facts_about(
        self, query: str, as_of: str | None = None, during: str | None = None, limit: int | None = None
    ) -> tuple[list[Fact], str]:
        """The facts of a hybrid search (the time rules of the module docstring), and a note on a date
        that could not be used."""
        limit = limit or self.facts_limit
        when = parse_when(as_of)
        note = f"could not read the date {as_of!r}; searched all times" if as_of and when is None else ""
        if when is not None and when.date() >= self.now.date():
            when, note = None, f"as_of {as_of} is not before now: searched current and past facts"
        if when is not None:
            results = await search(
                self.store, self.embedder, query, group_ids=self.group_id, config=FACTS_HYBRID,
                as_of=when, known_at=self.known_at, limit=limit,
            )  # fmt: skip
            return [r.fact for r in results.facts], note
        results = await search(
            self.store, self.embedder, query, group_ids=self.group_id, config=FACTS_HYBRID,
            include_retired=True, during=self._window(during), limit=limit * 2,
        )  # fmt: skip
        return [r.fact for r in results.facts if self._known(r.fact)][:limit], note

    async def matching_episodes(self, query: str, limit: int | None = None) -> list[Episode]:
        """The episodes that best match ``query`` (hybrid search), bounded by the dialog's ``as_of`` only:
        a later message may tell what held at an earlier date."""
        return await self._matching_episodes(query, None, self.as_of, limit)

    async def episodes_of(self, sources: Sequence[Sequence[str]], limit: int) -> list[Episode]:
        """The episodes facts came from (``sources``: each fact's episode uuids; every fact's first,
        then their others), at most ``limit``, those recorded by ``known_at`` and not after ``as_of``."""
        firsts = [u for uuids in sources for u in uuids[:1]]
        others = [u for uuids in sources for u in uuids[1:]]
        wanted = list(dict.fromkeys([*firsts, *others]))
        found: list[Episode] = []
        for start in range(0, len(wanted), limit):
            batch = await asyncio.gather(
                *(self.store.get_episode(self.group_id, u) for u in wanted[start : start + limit])
            )
            found += [
                e for e in batch if e is not None and self._recorded(e) and self._begun(e.reference_time)
            ]
            if len(found) >= limit:
                break
        return found[:limit]

    async def named_for_summaries(self, question: str, limit: int) -> list[Entity]:
        """The entities the question names (by name or alias, longest names first), at most ``limit``;
        none when their summaries may not describe the dialog's time (:meth:`summaries_hold`)."""
        if not await self.summaries_hold():
            return []
        return await self.entities_named(question, limit)

    async def entities_named(self, question: str, limit: int) -> list[Entity]:
        """The entities the question names (by name or alias, longest names first) that the dialog's
        ``known_at`` knew, at most ``limit``."""
        candidates = name_candidates(question)
        if not candidates:
            return []
        found = await self.store.entities_by_names(self.group_id, candidates)
        entities = {e.uuid: e for name in candidates for e in found.get(name, []) if self._known_entity(e)}
        return list(entities.values())[:limit]

    async def facts_of(self, entity_uuids: Sequence[str], limit: int = RECORD_LIMIT) -> list[Fact]:
        """Every fact of these entities, current and past (at most ``limit``, the newest), that the
        dialog's moment knew: recorded by ``known_at``, begun by ``as_of``."""
        flt = FactFilter(time=EVERYTHING)
        facts = await self.store.facts_around(self.group_id, entity_uuids, flt, limit=limit)
        return [f for f in facts if self._known(f) and self._begun(self._start(f))]

    async def summaries_hold(self) -> bool:
        """Whether entity summaries may be shown: they are not versioned (they describe the graph as last
        ingested), so only when the dialog has no ``known_at`` and its ``as_of`` (if any) is not before
        the group's newest episode."""
        if self.known_at is not None:
            return False
        if self.as_of is None:
            return True
        if self._newest is None:
            newest = await self.store.episodes(self.group_id, limit=1)
            self._newest = newest[0].reference_time if newest else self.as_of
        return self.as_of >= self._newest

    @staticmethod
    def summary_line(entity: Entity) -> tuple[str, str]:
        """``(uuid, "Name: summary")``: how an entity's summary is shown."""
        return entity.uuid, f"{entity.name}: {' '.join(entity.summary.split())[:SUMMARY_CHARS]}"

    async def entity(self, name: str) -> Found:
        if not name.strip():
            return Found(note="entity needs a name")
        try:
            view = await entity_view(
                self.store, self.group_id, name.strip(), embedder=self.embedder, as_of=self.as_of
            )
        except EntityNotFound as exc:
            closest = f"; closest names: {', '.join(exc.closest)}" if exc.closest else ""
            return Found(note=f"no entity named {name!r}{closest}")
        facts = [*view.current, *(r.fact for r in view.history)]
        facts = [f for f in facts if self._known(f) and self._begun(self._start(f))]
        episodes = [e for e in view.episodes if self._begun(e.reference_time) and self._recorded(e)]
        summary = f"{view.entity.name}: {view.entity.summary}" if view.entity.summary else ""
        shown = [self.summary_line(view.entity)] if summary and await self.summaries_hold() else []
        return Found(facts[: self.facts_limit * 2], episodes[: self.episodes_limit], summary, shown)

    async def episodes(self, query: str | None, since: str | None, until: str | None) -> Found:
        start, end = parse_when(since), parse_when(until)
        if self.as_of is not None and (end is None or end > self.as_of):
            end = self.as_of
        if query and query.strip():
            return Found(episodes=await self._matching_episodes(query, start, end))
        found = await self.store.episodes(self.group_id, since=start, until=end, limit=self.episodes_limit)
        return Found(episodes=[e for e in found if self._recorded(e)])

    async def _matching_episodes(
        self, query: str, start: datetime | None, end: datetime | None, limit: int | None = None
    ) -> list[Episode]:
        results = await search(
            self.store, self.embedder, query, group_ids=self.group_id, config=EPISODES_HYBRID,
            during=(start, end) if start or end else None, limit=limit or self.episodes_limit,
            as_of=self.as_of, known_at=self.known_at,
        )  # fmt: skip
        return [r.episode for r in results.episodes if self._recorded(r.episode)]

    async def _with_conversations(self, found: Found) -> Found:
        """``found`` with the summaries of the conversations its facts (by their first episode) and
        episodes come from."""
        firsts = list(dict.fromkeys(f.episodes[0] for f in found.facts if f.episodes))[: self.facts_limit]
        conversations = await self.conversations_of(firsts, found.episodes)
        return replace(found, conversations=conversations) if conversations else found

    async def conversations_of(
        self, uuids: Sequence[str], known: Sequence[Episode] = ()
    ) -> list[ConversationSummary]:
        """The summaries the dialog's moment may know (:meth:`_usable`) of the conversations the episodes
        ``known`` and ``uuids`` (read from the store) come from, in that order, each once."""
        have = {e.uuid for e in known}
        fetched = await asyncio.gather(
            *(self.store.get_episode(self.group_id, u) for u in dict.fromkeys(uuids) if u not in have)
        )
        episodes = [*known, *(e for e in fetched if e is not None)]
        keys = list(dict.fromkeys(k for e in episodes if (k := chain_key(e.source_description)) is not None))
        if not keys:
            return []
        views = optional(self.store, ViewReads)  # a store without the derived views: no summaries
        if views is None:
            return []
        stored = {s.key: s for s in await views.conversation_summaries(self.group_id, keys)}
        return [stored[k] for k in keys if k in stored and self._usable(stored[k])]

    def _usable(self, summary: ConversationSummary) -> bool:
        """A summary the dialog's moment may know: written by ``known_at``, covering nothing after
        ``as_of``."""
        if not summary.summary.strip():
            return False
        if self.known_at is not None and summary.updated_at > self.known_at:
            return False
        return self.as_of is None or (summary.last_at is not None and summary.last_at <= self.as_of)

    def _window(self, during: str | None) -> tuple[datetime | None, datetime | None] | None:
        """Facts valid at some time in ``during`` (a year or month), and never begun after ``as_of``."""
        period = period_bounds(during)
        start, end = period if period is not None else (None, None)
        if self.as_of is not None and (end is None or end > self.as_of):
            end = self.as_of
        return None if start is None and end is None else (start, end)

    def _recorded(self, episode: Episode) -> bool:
        """With ``known_at``: the graph had the episode by then."""
        return self.known_at is None or episode.created_at <= self.known_at

    def _known_entity(self, entity: Entity) -> bool:
        return self.known_at is None or entity.created_at <= self.known_at

    def _known(self, fact: Fact) -> bool:
        return self.known_at is None or is_known_at(fact, self.known_at)

    def _begun(self, when: datetime | None) -> bool:
        return self.as_of is None or when is None or when <= self.as_of

    def _start(self, fact: Fact) -> datetime | None:
        """When the fact began, as the graph held it at ``known_at`` (an unknown start: when it was first
        stated, ``graph.temporal.start_of``)."""
        held = believed_interval(fact, self.known_at) if self.known_at is not None else None
        return (held or interval(fact))[0]
