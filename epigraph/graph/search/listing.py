"""Presentation wrappers for plain store reads, so ``epigraph episodes`` and ``epigraph stats`` stay thin.

``EpisodeList(group_id, episodes)`` and ``StatsView(stats)`` render like the search results: a table in
the terminal (``rich``), HTML in notebooks, ``to_dict`` / ``to_json`` for scripts.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from rich.console import RenderableType

from ..model import Episode
from ..store import StoreStats
from . import render
from .results import episode_dict


@dataclass(frozen=True, slots=True)
class EpisodeList:
    group_id: str
    episodes: tuple[Episode, ...]
    since: datetime | None = None
    until: datetime | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "group_id": self.group_id,
            "since": self.since.isoformat() if self.since else None,
            "until": self.until.isoformat() if self.until else None,
            "episodes": [episode_dict(e) for e in self.episodes],
        }

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)

    def table(self) -> render.Table:
        rows = tuple(
            (
                render.fmt_time(e.reference_time),
                e.status.value,
                e.name or e.uuid[:8],
                render.shorten(e.content, 100),
                str(e.report.llm_calls),
            )
            for e in self.episodes
        )
        window = f" since {render.fmt_time(self.since)}" if self.since else ""
        title = f"Episodes of {self.group_id}{window} ({len(self.episodes)})"
        failed = frozenset(i for i, e in enumerate(self.episodes) if e.status.value == "failed")
        return render.Table(
            title,
            ("when", "status", "name", "content", "llm calls"),
            rows,
            numeric=frozenset({"llm calls"}),
            dim_rows=failed,
        )

    def __rich__(self) -> RenderableType:
        return render.rich_table(self.table())

    def _repr_html_(self) -> str:
        return render.html_tables([self.table()])

    def to_pandas(self) -> Any:
        pd = render.require("pandas")
        return pd.DataFrame([episode_dict(e) for e in self.episodes])


@dataclass(frozen=True, slots=True)
class StatsView:
    stats: StoreStats
    group_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"group_id": self.group_id, **asdict(self.stats)}

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent)

    def table(self) -> render.Table:
        s = self.stats
        rows = (
            ("episodes", str(s.episodes)),
            ("entities", str(s.entities)),
            ("facts", str(s.facts)),
            ("current facts", str(s.current_facts)),
            ("retired facts", str(s.facts - s.current_facts)),
            ("mentions", str(s.mentions)),
        )
        title = f"Graph {self.group_id}" if self.group_id else "Graph (all groups)"
        return render.Table(title, ("", "count"), rows, numeric=frozenset({"count"}))

    def __rich__(self) -> RenderableType:
        return render.rich_table(self.table())

    def _repr_html_(self) -> str:
        return render.html_tables([self.table()])
