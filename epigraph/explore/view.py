"""``GraphView``: an interactive picture of a subgraph or a search result, the same in every place.

::

    view = await kg.subgraph("Alice")      # or: await kg.explore("where does Alice live?")
    view                                   # a notebook cell: pan, zoom, hover, click, time slider
    view.save("alice.html")                # the same page as one offline file (.svg: a static picture)

The page draws the ``shown`` facts, colours entities by community (when the graph has communities;
a switch colours them by type) and sizes them by mentions; hovering shows a
summary or a fact with its validity window; retired facts are dashed grey (and can be hidden); a slider
moves through event time (``as_of``) and a switch makes it system time as well (``known_at``); clicking
an entity opens its view (summary, facts then current, history, episodes) and "expand" reveals the
embedded neighbourhood (the served page fetches it instead).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from ..graph.derived import Community
from ..graph.entity_time import Mentioned
from ..graph.model import Entity, Episode, Fact, to_utc
from ..present.draw import GraphDrawing, subgraph_drawing
from ..search.results import SearchResults, retired_uuids
from . import page, payload


@dataclass(frozen=True, slots=True)
class GraphView:
    """Entities and facts to explore (see the module docstring). ``shown``: fact uuids drawn at first
    (the rest is the embedded neighbourhood that "expand" reveals); ``focus``: entity uuids drawn even
    without facts, the center first; ``show_retired``: whether retired facts are drawn at first."""

    entities: Mapping[str, Entity]
    facts: tuple[Fact, ...]
    shown: frozenset[str]
    focus: tuple[str, ...] = ()
    title: str = ""
    group_id: str = ""
    mentions: Mapping[str, int] = field(default_factory=dict)
    episodes: Mapping[str, Episode] = field(default_factory=dict)
    show_retired: bool = True
    communities: Mapping[str, Community] = field(default_factory=dict)
    """The communities of its entities, by uuid: the page colours and lists entities by them."""
    said: Mapping[str, tuple[Mentioned, ...]] = field(default_factory=dict)
    """The episodes that mention its entities, by uuid: the page's slider shows each as it was then."""
    as_of: datetime | None = None
    """Where the page's time slider starts (event time: the graph as it stood then); None: now."""

    @classmethod
    def from_search(cls, results: SearchResults) -> GraphView:
        """The facts and entities a search found (retired ones too when it asked for them)."""
        entities: dict[str, Entity] = {}
        for r in results.facts:
            for e in (r.source, r.target):
                if e is not None:
                    entities.setdefault(e.uuid, e)
        focus = tuple(r.uuid for r in results.entities)
        for er in results.entities:
            entities.setdefault(er.uuid, er.entity)
        facts = tuple(r.fact for r in results.facts)
        group = results.group_ids[0] if results.group_ids else ""
        return cls(entities, facts, frozenset(f.uuid for f in facts), focus,
                   title=f"search: {results.query}", group_id=group)  # fmt: skip

    def to_data(self) -> dict[str, Any]:
        """The page's JSON data (:mod:`.payload`)."""
        data = payload.build(
            self.entities, self.facts, shown=self.shown, focus=self.focus, mentions=self.mentions,
            episodes=self.episodes, title=self.title, group_id=self.group_id, communities=self.communities,
            said=self.said,
        )  # fmt: skip
        data["show_retired"] = self.show_retired
        data["as_of"] = None if self.as_of is None else to_utc(self.as_of).isoformat()
        return data

    def to_html(self) -> str:
        """The whole self-contained page."""
        return page.document(self.to_data(), title=self.title)

    def _repr_html_(self) -> str:
        return page.iframe(self.to_html())

    def drawing(self) -> GraphDrawing:
        """The shown facts as a static picture (SVG, no JavaScript)."""
        facts = [f for f in self.facts if f.uuid in self.shown]
        ids = set(self.focus) | {u for f in facts for u in (f.source_uuid, f.target_uuid)}
        entities = {u: e for u, e in self.entities.items() if u in ids}
        center = self.focus[0] if self.focus else None
        return subgraph_drawing(
            entities, facts, center=center, title=self.title, retired=retired_uuids(facts)
        )

    def to_svg(self) -> str:
        return self.drawing().to_svg()

    def save(self, path: str | Path) -> Path:
        """Write ``.html`` (the interactive page) or ``.svg`` (a static picture); returns the path."""
        target = Path(path)
        suffix = target.suffix.lower()
        if suffix == ".svg":
            return self.drawing().save(target)
        if suffix not in (".html", ".htm"):
            raise ValueError(f"save as .html or .svg, got {target.name!r}")
        target.write_text(self.to_html(), encoding="utf-8")
        return target
