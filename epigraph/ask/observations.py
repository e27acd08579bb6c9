"""What a dialog has seen: every fact and episode a lookup returned, numbered ``F1``, ``E1``, ..., and the
summaries shown beside them (of the entities a question names, and of the conversations the items come
from; not numbered, never cited).

The numbers are the only ids the model sees and cites; a number is given once per uuid, so a fact found
twice keeps its first number. Everything registered is shown to the model, within a token budget: an
item that would overflow it is not registered (and so cannot be cited). One ``add`` may be held to a
smaller ``room`` (the one-call context gives each of its parts a share of the budget).

An episode line is the message's date and words, followed by the dates its relative words meant
(``(yesterday: 7 May 2023)``, :mod:`.relative_dates`). Each fact line carries its validity window as
the graph believes it at ``known_at`` (``from DATE``, or ``stated DATE`` when its start is unknown,
``until DATE`` when it ends) and, unless it simply holds (begun, no end), where it stands at the
dialog's "now" (its ``as_of``): ``current`` (an end still to come), ``ended`` or ``not yet`` (begins
later), followed by "as of DATE" when the question was asked as of a date. A fact that holds with no
end says nothing more: "current as of 23 October 2023" on every such line took a tenth of the one-call
context on a whole conversation, and the answering model copied it into its answers. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from ..graph.derived import ConversationSummary
from ..graph.model import Episode, Fact
from ..graph.temporal import believed_interval, interval, start_unknown
from ..tokens import count_text_tokens
from .chunks import AskChunk, Citation
from .lookups import Lookup
from .relative_dates import meant_dates, spoken_day

EPISODE_CHARS = 400
"""An episode is shown to the model cut to this many characters."""
CONVERSATION_CHARS = 600
"""A conversation's summary is shown cut to this many characters."""


def day(value: datetime | None) -> str:
    """``2 May 2024``: how the answering context writes a date. The model copies the dates it is shown
    into its answers, and people read those, so they are written as people write them; the day only
    (a fact's start taken from a message's time is not known to the minute)."""
    return "?" if value is None else spoken_day(value)


def shorten(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


@dataclass(frozen=True, slots=True)
class Seen:
    """One registered item: the number the model knows it by, and the line it was shown."""

    label: str
    kind: Literal["fact", "episode"]
    uuid: str
    line: str
    citation: Citation


class Observations:
    """The numbered facts and episodes of one dialog. ``now``: the dialog's event time (its ``as_of``,
    else the present); ``known_at``: its system time (None: the present)."""

    def __init__(
        self, *, now: datetime, known_at: datetime | None, budget_tokens: int, dated: bool = False
    ) -> None:
        self.now, self.known_at, self.budget = now, known_at, budget_tokens
        self._as_of = f" as of {day(now)}" if dated else ""
        """A dialog asked ``as_of`` a date says so after each status ("current as of 2023-05-01"): a
        window that ends later reads as a contradiction of a bare "current"."""
        self.used_tokens = 0
        self.left_out = 0
        """Items a lookup returned that did not fit the budget."""
        self._by_uuid: dict[tuple[str, str], Seen] = {}
        self._by_label: dict[str, Seen] = {}
        self._summaries: dict[str, str] = {}
        """Entity uuid -> the line its summary was shown as ("About": no id, not citable)."""
        self._conversations: dict[str, str] = {}
        """Conversation key -> the line it was shown as (background: no id, not citable)."""
        self._ceiling = budget_tokens

    def __len__(self) -> int:
        return len(self._by_label)

    def widen(self, budget_tokens: int) -> None:
        """Raise the budget to ``budget_tokens`` (never lowers it): room for more lookups."""
        self.budget = self._ceiling = max(self.budget, budget_tokens)

    def get(self, label: str) -> Seen | None:
        return self._by_label.get(label)

    @property
    def labels(self) -> list[str]:
        """Every registered id (``F1``, ``E1``, ...), in the order given."""
        return list(self._by_label)

    @property
    def facts(self) -> list[Seen]:
        return [s for s in self._by_label.values() if s.kind == "fact"]

    @property
    def episodes(self) -> list[Seen]:
        return [s for s in self._by_label.values() if s.kind == "episode"]

    def add(
        self, facts: Iterable[Fact], episodes: Iterable[Episode], *, room: int | None = None
    ) -> list[Seen]:
        """Register what a lookup returned, its new items using at most ``room`` tokens (default: what is
        left of the budget); returns its items (new or seen before) that are registered."""
        with self._within(room):
            out = [s for s in map(self._add_fact, facts) if s is not None]
            out += [s for s in map(self._add_episode, episodes) if s is not None]
        return out

    def add_summaries(self, summaries: Iterable[tuple[str, str]], *, room: int | None = None) -> list[str]:
        """Register summaries shown beside the items (``(key, line)``: an entity's uuid and
        ``"Alice: ..."``), within ``room`` as :meth:`add`; returns the lines registered."""
        with self._within(room):
            return [line for key, line in summaries if self._add_background(self._summaries, key, line)]

    @contextmanager
    def _within(self, room: int | None) -> Iterator[None]:
        self._ceiling = self.budget if room is None else min(self.budget, self.used_tokens + max(room, 0))
        try:
            yield
        finally:
            self._ceiling = self.budget

    def add_conversations(
        self, summaries: Iterable[ConversationSummary], *, room: int | None = None
    ) -> list[str]:
        """Register conversation summaries (each once, within ``room`` as :meth:`add`); returns the lines
        newly registered."""
        new = [(s.key, conversation_line(s)) for s in summaries if s.key not in self._conversations]
        with self._within(room):
            return [line for key, line in new if self._add_background(self._conversations, key, line)]

    def _add_background(self, shown: dict[str, str], key: str, line: str) -> bool:
        """Register one line shown beside the items (a summary: no id, never cited) into ``shown``."""
        if key in shown:
            return True
        tokens = count_text_tokens(line) + 1
        if self.used_tokens + tokens > self._ceiling:
            self.left_out += 1
            return False
        self.used_tokens += tokens
        shown[key] = line
        return True

    def _add_fact(self, fact: Fact) -> Seen | None:
        if (known := self._by_uuid.get(("fact", fact.uuid))) is not None:
            return known
        start, end = self._interval(fact)
        ended = end is not None and end <= self.now
        status = "ended" if ended else "not yet" if start is not None and start > self.now else "current"
        label = f"F{len(self.facts) + 1}"
        unknown = start_unknown(fact)
        began = f"stated {day(fact.stated_at)}" if unknown else f"from {day(start)}"
        window = began + (f" until {day(end)}" if end is not None else "")
        marked = "" if status == "current" and end is None else f"; {status}{self._as_of}"
        line = f"{label}: {shorten(fact.text, 300)} ({window}{marked})"
        citation = Citation(
            label, "fact", fact.uuid, fact.text, start, end, ended, tuple(dict.fromkeys(fact.episodes)),
            start_unknown=unknown,
        )  # fmt: skip
        return self._register(Seen(label, "fact", fact.uuid, line, citation))

    def _interval(self, fact: Fact) -> tuple[datetime | None, datetime | None]:
        """As the graph held it at ``known_at`` (now, when unset); an unknown start is when it was first
        stated (``graph.temporal.start_of``)."""
        believed = believed_interval(fact, self.known_at) if self.known_at is not None else None
        return believed if believed is not None else interval(fact)

    def _add_episode(self, episode: Episode) -> Seen | None:
        if (known := self._by_uuid.get(("episode", episode.uuid))) is not None:
            return known
        label = f"E{len(self.episodes) + 1}"
        content = shorten(episode.content, EPISODE_CHARS)
        meant = meant_dates(content, episode.reference_time)
        said = f" ({'; '.join(meant)})" if meant else ""
        line = f"{label} [{day(episode.reference_time)}]: {content}{said}"
        uuid, when = episode.uuid, episode.reference_time
        citation = Citation(label, "episode", uuid, episode.content, when, None, False, (uuid,))
        return self._register(Seen(label, "episode", episode.uuid, line, citation))

    def conversations_block(self) -> str:
        """The conversation summaries seen, as a block that starts on a new line ("" when none)."""
        if not self._conversations:
            return ""
        lines = "\n".join(self._conversations.values())
        return f"\nConversation summaries (background; cite the facts and episodes, never these):\n{lines}"

    def _register(self, seen: Seen) -> Seen | None:
        tokens = count_text_tokens(seen.line) + 1
        if self.used_tokens + tokens > self._ceiling:
            self.left_out += 1
            return None
        self.used_tokens += tokens
        self._by_uuid[(seen.kind, seen.uuid)] = seen
        self._by_label[seen.label] = seen
        return seen

    def facts_block(self) -> str:
        return "\n".join(s.line for s in self.facts) or "(none)"

    def episodes_block(self) -> str:
        return "\n".join(s.line for s in self.episodes) or "(none)"

    def summaries_block(self) -> str:
        return "\n".join(self._summaries.values()) or "(none)"

    def summary(self) -> str:
        """Everything seen so far, for the planning prompt."""
        if not self._by_label and not self._summaries:
            return "(nothing yet)"
        about = f"About:\n{self.summaries_block()}\n" if self._summaries else ""
        items = f"Facts:\n{self.facts_block()}\nEpisodes:\n{self.episodes_block()}"
        return about + items + self.conversations_block()


def conversation_line(summary: ConversationSummary) -> str:
    """How a conversation's summary is shown: ``- KEY (FIRST to LAST): summary``."""
    span = f"{day(summary.first_at)} to {day(summary.last_at)}"
    return f"- {shorten(summary.key, 80)} ({span}): {shorten(summary.summary, CONVERSATION_CHARS)}"


def action_chunk(lookup: Lookup) -> AskChunk:
    """The action chunk of one retrieval step (``search_facts(query='...')``)."""
    return AskChunk("action", lookup.describe(), end_of_message=True, data=lookup.to_dict())


def observation_chunk(
    seen: list[Seen],
    summaries: list[str],
    note: str,
    left_out: int,
    *,
    talks: Sequence[str] = (),
    conversations: Sequence[ConversationSummary] = (),
) -> AskChunk:
    """The observation chunk of one retrieval step: ``seen`` and ``summaries`` are what of its results
    was registered, ``left_out`` how many did not fit the budget; ``talks`` the conversation lines it
    registered first, ``conversations`` the conversation summaries it found (listed in the data)."""
    facts = sum(1 for s in seen if s.kind == "fact")
    episodes = len(seen) - facts
    head = f"{facts} fact{'s' * (facts != 1)}, {episodes} episode{'s' * (episodes != 1)}"
    if summaries:
        head += f", {len(summaries)} summar{'ies' if len(summaries) != 1 else 'y'}"
    lines = [head + (f" ({left_out} more left out: context budget)" if left_out else "")]
    lines += [shorten(s.line, 160) for s in seen] + [shorten(line, 160) for line in summaries]
    lines += [shorten("conversation " + line.removeprefix("- "), 200) for line in talks]
    if note:
        lines.append(shorten(note, 200))
    items = [
        {"id": s.label, "kind": s.kind, "uuid": s.uuid, "text": shorten(s.citation.text, 120)} for s in seen
    ]
    data: dict[str, object] = {"items": items, "note": note}
    if summaries:
        data["summaries"] = [shorten(line, 200) for line in summaries]
    if conversations:
        data["conversations"] = [{"key": c.key, "summary": c.summary} for c in conversations]
    return AskChunk("observation", "\n".join(lines), end_of_message=True, data=data)
