"""Why the graph holds a fact or an entity, as it is shown: :class:`Explanation`, a few lines a person
reads, the same in the terminal (``epigraph explain``), a notebook (``await explain(kg, ...)``: a table;
``to_pandas()``: a row per line) and as JSON (the HTTP routes, the MCP tool, ``--json``).

Its lines are the chain from the message to what the graph holds now, oldest first: the episode that
said it and the line of the model's reply, what each stage decided (kept, dropped, refused, repaired,
resolved, merged, dated, restated), what retired it, and every correction by hand.
``search.explain`` builds it from the store: the decision records (``graph.decisions``) and the records
they name.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from .frames import data_frame
from .tables import Table, TableView, fmt_time

KINDS = ("said", "decided", "dated", "resolved", "refused", "repaired", "retired", "corrected", "merged")
"""What a line says: the episode that said it; a stage's decision about it (kept, restated, dropped), the
words that dated it, how a name was resolved, a name refused or repaired, a retirement, a correction by
hand, a merge (by the resolve call or by hand)."""


@dataclass(frozen=True, slots=True)
class Link:
    """One line of the chain: ``what`` it says (``KINDS``), ``text`` (the line), when it happened (``at``:
    the episode's reference time, the correction's), the episode it comes from, the uuids it names."""

    what: str
    text: str
    at: datetime | None = None
    episode_uuid: str | None = None
    ids: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "what": self.what,
            "text": self.text,
            "at": self.at.isoformat() if self.at else None,
            "episode_uuid": self.episode_uuid,
            "ids": list(self.ids),
        }


@dataclass(frozen=True, slots=True)
class Explanation(TableView):
    """Why group ``group_id`` holds ``subject`` (a fact id, an entity name): ``kind`` ``fact`` or
    ``entity``; ``holds``: what the graph holds now, in one line (``None``: nothing, e.g. a name only
    ever refused); ``links``: the chain, oldest first; ``unrecorded``: episodes of the chain without a
    decision record (ingested before records were kept, records off, or past their retention)."""

    group_id: str
    subject: str
    kind: str
    holds: str | None
    links: Sequence[Link] = ()
    uuid: str | None = None
    """The fact's or entity's uuid (``None``: no such record now)."""
    unrecorded: Sequence[str] = field(default_factory=tuple)

    def lines(self) -> list[str]:
        """The explanation as plain lines: what it holds, then the chain."""
        head = self.holds if self.holds is not None else f"the graph holds no {self.kind} {self.subject!r}"
        out = [head]
        out += [f"{fmt_time(link.at, '-'):>16}  {link.what:<9} {link.text}" for link in self.links]
        if self.unrecorded:
            out.append(f"{len(self.unrecorded)} episode(s) of it have no decision record")
        return out

    def __str__(self) -> str:
        return "\n".join(self.lines())

    def to_dict(self) -> dict[str, Any]:
        return {
            "group_id": self.group_id,
            "subject": self.subject,
            "kind": self.kind,
            "uuid": self.uuid,
            "holds": self.holds,
            "links": [link.to_dict() for link in self.links],
            "unrecorded": list(self.unrecorded),
            "lines": self.lines(),
        }

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)

    def to_pandas(self) -> Any:
        return data_frame([{"subject": self.subject, **link.to_dict()} for link in self.links])

    def whats(self) -> list[str]:
        """What each line says, in order (``KINDS``)."""
        return [link.what for link in self.links]

    # --- tables -----------------------------------------------------------------------------------------
    def _header(self) -> str:
        head = f"Why {self.group_id!r} holds {self.kind} {self.subject!r}"
        return head + "\n" + (self.holds or "nothing now")

    def tables(self) -> list[Table]:
        rows = tuple((fmt_time(link.at, "-"), link.what, link.text) for link in self.links)
        return [Table("the chain", ("when", "what", "why"), rows, empty="no decision recorded")]
