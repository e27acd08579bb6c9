"""Listings of plain store reads, the same in the terminal and in a notebook: ``epigraph episodes`` and
``epigraph stats`` print them, and ``EpisodeList(group_id, await kg.episodes())`` or
``StatsView(await kg.stats(), group_id)`` show them in a notebook cell.

Each renders as a table in the terminal (``rich``), as HTML in notebooks (``_repr_html_``), and exports
``to_dict`` / ``to_json`` (episodes also ``to_pandas``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any

from rich.console import RenderableType

from ..graph.model import Episode
from ..graph.store import StoreStats
from .frames import data_frame
from .records import episode_dict
from .tables import Table, fmt_time, html_tables, rich_table, shorten


@dataclass(frozen=True, slots=True)
class EpisodeList:
    """Episodes of one group (as read, e.g. newest first), with their status, error and report."""

    group_id: str
    episodes: Sequence[Episode]
    since: datetime | None = None
    until: datetime | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "group_id": self.group_id,
            "since": self.since.isoformat() if self.since else None,
            "until": self.until.isoformat() if self.until else None,
            "episodes": self.records(),
        }

    def records(self) -> list[dict[str, Any]]:
        """Each episode as JSON data, its ingestion report included (never its embedding)."""
        return [episode_dict(e, report=True) for e in self.episodes]

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)

    def table(self) -> Table:
        rows = tuple(
            (
                fmt_time(e.reference_time),
                e.status.value + (f": {shorten(e.error, 60)}" if e.error else ""),
                e.name,
                shorten(e.content, 80),
                e.uuid,
            )
            for e in self.episodes
        )
        window = f" since {fmt_time(self.since)}" if self.since else ""
        window += f" until {fmt_time(self.until)}" if self.until else ""
        title = f"Episodes in {self.group_id!r}{window} ({len(self.episodes)})"
        marks = {
            i: e.status.value for i, e in enumerate(self.episodes) if e.status.value in ("failed", "pending")
        }
        columns = ("when", "status", "name", "content", "uuid")
        return Table(title, columns, rows, empty="no episodes match", marks=marks)

    def __rich__(self) -> RenderableType:
        return rich_table(self.table())

    def _repr_html_(self) -> str:
        return html_tables([self.table()])

    def to_pandas(self) -> Any:
        return data_frame(self.records())


@dataclass(frozen=True, slots=True)
class StatsView:
    """A group's counts (``extra``: more counts to show, e.g. failed and pending episodes); ``where``
    names the store in the title."""

    stats: StoreStats
    group_id: str | None = None
    extra: Mapping[str, int | str] = field(default_factory=dict)
    where: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"group_id": self.group_id, **asdict(self.stats), **self.extra}

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent)

    def table(self) -> Table:
        s = self.stats
        counts: list[tuple[str, int | str]] = [
            ("episodes", s.episodes),
            ("entities", s.entities),
            ("facts", s.facts),
            ("current facts", s.current_facts),
            ("retired facts", s.facts - s.current_facts),
            ("mentions", s.mentions),
            ("owed summaries", s.owed_summaries),
            ("decision records", s.decision_records),
            ("decision records' bytes", s.decision_bytes),
            *((name.replace("_", " "), value) for name, value in self.extra.items()),
        ]
        rows = tuple((name, f"{value:,}" if isinstance(value, int) else value) for name, value in counts)
        title = f"group {self.group_id!r}" if self.group_id else "all groups"
        title += f" in {self.where}" if self.where else ""
        return Table(title, ("", "count"), rows, numeric=frozenset({"count"}))

    def __rich__(self) -> RenderableType:
        return rich_table(self.table())

    def _repr_html_(self) -> str:
        return html_tables([self.table()])
