"""What the agent has seen: every fact and episode a lookup returned, numbered ``F1``, ``E1``, ...

The numbers are the only ids the model sees and cites; a number is given once per uuid, so a fact found
twice keeps its first number. Everything registered is shown to the model, within a token budget: an
item that would overflow it is not registered (and so cannot be cited). Each fact line carries its
validity window as the graph believes it at ``known_at`` and where it stands at the dialog's "now" (its
``as_of``): ``current``, ``ended`` or ``not yet`` (begins later), followed by "as of DATE" when the
question was asked as of a date. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from ..graph.derived import ConversationSummary
from ..graph.model import Episode, Fact
from ..graph.temporal import believed_interval, interval, start_unknown
from ..tokens import count_text_tokens
from .chunks import Citation

EPISODE_CHARS = 400
"""An episode is shown to the model cut to this many characters."""
CONVERSATION_CHARS = 600
"""A conversation's summary is shown cut to this many characters."""


def day(value: datetime | None) -> str:
    """``2024-05-02``, or ``2024-05-02 14:30`` when the time of day is not midnight."""
    if value is None:
        return "?"
    return value.strftime("%Y-%m-%d" if (value.hour, value.minute) == (0, 0) else "%Y-%m-%d %H:%M")


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
        self._conversations: dict[str, str] = {}
        """Conversation key -> the line it was shown as (background: no id, not citable)."""

    def __len__(self) -> int:
        return len(self._by_label)

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

    def add(self, facts: Iterable[Fact], episodes: Iterable[Episode]) -> list[Seen]:
        """Register what a lookup returned; returns its items (new or seen before) that are registered."""
        out = [s for s in map(self._add_fact, facts) if s is not None]
        out += [s for s in map(self._add_episode, episodes) if s is not None]
        return out

    def _add_fact(self, fact: Fact) -> Seen | None:
        if (known := self._by_uuid.get(("fact", fact.uuid))) is not None:
            return known
        start, end = self._interval(fact)
        ended = end is not None and end <= self.now
        status = "ended" if ended else "not yet" if start is not None and start > self.now else "current"
        label = f"F{len(self.facts) + 1}"
        unknown = start_unknown(fact)
        began = f"start unknown, stated {day(fact.stated_at)}" if unknown else f"from {day(start)}"
        window = began + (f" until {day(end)}" if end is not None else "")
        line = f"{label}: {shorten(fact.text, 300)} ({window}; {status}{self._as_of})"
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
        line = f"{label} [{day(episode.reference_time)}]: {shorten(episode.content, EPISODE_CHARS)}"
        uuid, when = episode.uuid, episode.reference_time
        citation = Citation(label, "episode", uuid, episode.content, when, None, False, (uuid,))
        return self._register(Seen(label, "episode", episode.uuid, line, citation))

    def add_conversations(self, summaries: Iterable[ConversationSummary]) -> list[str]:
        """Register conversation summaries (each once, within the budget); returns the new lines."""
        added = []
        for s in summaries:
            if s.key in self._conversations:
                continue
            span = f"{day(s.first_at)} to {day(s.last_at)}"
            line = f"- {shorten(s.key, 80)} ({span}): {shorten(s.summary, CONVERSATION_CHARS)}"
            tokens = count_text_tokens(line) + 1
            if self.used_tokens + tokens > self.budget:
                self.left_out += 1
                continue
            self.used_tokens += tokens
            self._conversations[s.key] = line
            added.append(line)
        return added

    def conversations_block(self) -> str:
        """The conversation summaries seen, as a block that starts on a new line ("" when none)."""
        if not self._conversations:
            return ""
        lines = "\n".join(self._conversations.values())
        return f"\nConversation summaries (background; cite the facts and episodes, never these):\n{lines}"

    def _register(self, seen: Seen) -> Seen | None:
        tokens = count_text_tokens(seen.line) + 1
        if self.used_tokens + tokens > self.budget:
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

    def summary(self) -> str:
        """Everything seen so far, for the planning prompt."""
        if not self._by_label:
            return "(nothing yet)"
        return f"Facts:\n{self.facts_block()}\nEpisodes:\n{self.episodes_block()}{self.conversations_block()}"
