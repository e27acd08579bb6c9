"""Typed search results: facts with their endpoint entities, entities, episodes, each with scores.

Every result describes itself as tables (``tables()``) and rows (``row()``); :mod:`epigraph.present`
draws them: a table in the terminal (``rich``: ``console.print(results)``), HTML in a notebook
(``_repr_html_``), JSON (``to_dict`` / ``to_json``), pandas (``to_pandas``), networkx (``to_networkx``)
and an SVG picture (``draw``). pandas and networkx are optional imports. Embeddings are left out of
every export (they are large and rarely wanted; read them from the models).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ..graph.derived import Community
from ..graph.entity_time import shown_summary
from ..graph.model import Entity, Episode, Fact, utc_now
from ..graph.temporal import is_current, start_unknown
from ..present import frames
from ..present.draw import GraphDrawing, subgraph_drawing
from ..present.records import entity_dict, episode_dict, fact_dict
from ..present.tables import Table, TableView, fmt_score, fmt_time, fmt_validity, shorten


def is_retired(fact: Fact, now: datetime | None = None) -> bool:
    """Retired = not current (``graph.temporal.is_current``): what results show dimmed."""
    return not is_current(fact, now or utc_now())


def retired_uuids(facts: Iterable[Fact]) -> frozenset[str]:
    """The uuids of the facts that are retired (:func:`is_retired`), for the drawings and graphs."""
    return frozenset(f.uuid for f in facts if is_retired(f))


def entity_name(entity: Entity | None, fallback: str) -> str:
    return entity.name if entity is not None else fallback


@dataclass(frozen=True, slots=True)
class FactResult:
    """A fact, its two endpoint entities and its score (``scores``: each retriever's raw score)."""

    fact: Fact
    source: Entity | None
    target: Entity | None
    score: float
    scores: Mapping[str, float] = field(default_factory=dict)

    @property
    def uuid(self) -> str:
        return self.fact.uuid

    @property
    def text(self) -> str:
        return self.fact.text

    @property
    def relation(self) -> str:
        return self.fact.relation

    @property
    def source_name(self) -> str:
        return entity_name(self.source, self.fact.source_uuid)

    @property
    def target_name(self) -> str:
        return entity_name(self.target, self.fact.target_uuid)

    @property
    def retired(self) -> bool:
        return is_retired(self.fact)

    def to_dict(self) -> dict[str, Any]:
        return {
            "score": self.score,
            "scores": dict(self.scores),
            "fact": fact_dict(self.fact),
            "source": entity_dict(self.source) if self.source else None,
            "target": entity_dict(self.target) if self.target else None,
        }

    def row(self) -> dict[str, Any]:
        f = self.fact
        return {
            "score": self.score,
            "uuid": f.uuid,
            "source": self.source_name,
            "relation": f.relation,
            "target": self.target_name,
            "text": f.text,
            "valid_at": f.valid_at,
            "invalid_at": f.invalid_at,
            "stated_at": f.stated_at,
            "start_unknown": start_unknown(f),
            "created_at": f.created_at,
            "expired_at": f.expired_at,
            "episodes": len(f.episodes),
            "group_id": f.group_id,
        }


@dataclass(frozen=True, slots=True)
class EntityResult:
    entity: Entity
    score: float
    scores: Mapping[str, float] = field(default_factory=dict)

    @property
    def uuid(self) -> str:
        return self.entity.uuid

    @property
    def name(self) -> str:
        return self.entity.name

    @property
    def summary(self) -> str:
        return self.entity.summary

    def to_dict(self) -> dict[str, Any]:
        return {"score": self.score, "scores": dict(self.scores), "entity": entity_dict(self.entity)}

    def row(self) -> dict[str, Any]:
        e = self.entity
        return {
            "score": self.score,
            "uuid": e.uuid,
            "name": e.name,
            "labels": ", ".join(e.labels),
            "aliases": ", ".join(e.aliases),
            "summary": shown_summary(e),
            "group_id": e.group_id,
        }


@dataclass(frozen=True, slots=True)
class EpisodeHit:
    """An episode a search found, with its score (what ingesting an episode gave is
    ``episodes.events.EpisodeResult``)."""

    episode: Episode
    score: float
    scores: Mapping[str, float] = field(default_factory=dict)

    @property
    def uuid(self) -> str:
        return self.episode.uuid

    @property
    def content(self) -> str:
        return self.episode.content

    def to_dict(self) -> dict[str, Any]:
        return {"score": self.score, "scores": dict(self.scores), "episode": episode_dict(self.episode)}

    def row(self) -> dict[str, Any]:
        e = self.episode
        return {
            "score": self.score,
            "uuid": e.uuid,
            "name": e.name,
            "reference_time": e.reference_time,
            "source": e.source_description,
            "content": e.content,
            "group_id": e.group_id,
        }


@dataclass(frozen=True, slots=True)
class CommunityResult:
    """A community (its members are entity uuids), with its score."""

    community: Community
    score: float
    scores: Mapping[str, float] = field(default_factory=dict)

    @property
    def uuid(self) -> str:
        return self.community.uuid

    @property
    def name(self) -> str:
        return self.community.name

    def to_dict(self) -> dict[str, Any]:
        data = self.community.model_dump(mode="json", exclude={"embedding", "summarized"})
        return {"score": self.score, "scores": dict(self.scores), "community": data}

    def row(self) -> dict[str, Any]:
        c = self.community
        return {"score": self.score, "uuid": c.uuid, "name": c.name, "members": len(c.members),
                "summary": c.summary, "group_id": c.group_id}  # fmt: skip


def facts_table(facts: Sequence[FactResult], title: str = "Facts") -> Table:
    rows = tuple(
        (
            fmt_score(r.score),
            r.source_name,
            r.relation,
            r.target_name,
            shorten(r.text),
            fmt_validity(r.fact),
        )
        for r in facts
    )
    dim = frozenset(i for i, r in enumerate(facts) if r.retired)
    cols = ("score", "source", "relation", "target", "fact", "valid")
    return Table(title, cols, rows, numeric=frozenset({"score"}), dim_rows=dim)


def entities_table(entities: Sequence[EntityResult], title: str = "Entities") -> Table:
    rows = tuple(
        (fmt_score(r.score), r.name, ", ".join(r.entity.labels), shorten(shown_summary(r.entity), 110))
        for r in entities
    )
    return Table(title, ("score", "name", "labels", "summary"), rows, numeric=frozenset({"score"}))


def episodes_table(episodes: Sequence[EpisodeHit], title: str = "Episodes") -> Table:
    rows = tuple(
        (fmt_score(r.score), fmt_time(r.episode.reference_time), shorten(r.content, 110)) for r in episodes
    )
    return Table(title, ("score", "when", "content"), rows, numeric=frozenset({"score"}))


def communities_table(found: Sequence[CommunityResult], title: str = "Communities") -> Table:
    rows = tuple(
        (
            fmt_score(r.score),
            r.name,
            str(len(r.community.members)),
            shorten(r.community.summary, 100),
        )
        for r in found
    )
    return Table(title, ("score", "name", "members", "summary"), rows, numeric=frozenset({"score"}))


@dataclass(frozen=True, slots=True)
class SearchResults(TableView):
    """What one search found, best first within each kind, and how it was asked."""

    query: str
    group_ids: tuple[str, ...]
    recipe: str
    facts: tuple[FactResult, ...] = ()
    entities: tuple[EntityResult, ...] = ()
    episodes: tuple[EpisodeHit, ...] = ()
    as_of: datetime | None = None
    known_at: datetime | None = None
    include_retired: bool = False
    elapsed_ms: float = 0.0
    communities: tuple[CommunityResult, ...] = ()

    def __len__(self) -> int:
        return len(self.facts) + len(self.entities) + len(self.episodes) + len(self.communities)

    def __iter__(self) -> Iterator[FactResult | EntityResult | EpisodeHit | CommunityResult]:
        yield from self.facts
        yield from self.entities
        yield from self.episodes
        yield from self.communities

    def to_dict(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "group_ids": list(self.group_ids),
            "recipe": self.recipe,
            "as_of": self.as_of.isoformat() if self.as_of else None,
            "known_at": self.known_at.isoformat() if self.known_at else None,
            "include_retired": self.include_retired,
            "elapsed_ms": round(self.elapsed_ms, 3),
            "facts": [r.to_dict() for r in self.facts],
            "entities": [r.to_dict() for r in self.entities],
            "episodes": [r.to_dict() for r in self.episodes],
            "communities": [r.to_dict() for r in self.communities],
        }

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)

    def tables(self) -> list[Table]:
        """The non-empty kinds as tables (facts alone if nothing was found)."""
        tables = [
            facts_table(self.facts) if self.facts else None,
            entities_table(self.entities) if self.entities else None,
            episodes_table(self.episodes) if self.episodes else None,
            communities_table(self.communities) if self.communities else None,
        ]
        found = [t for t in tables if t is not None]
        return found or [Table("Results", (), (), empty=f"nothing found for {self.query!r}")]

    def _header(self) -> str:
        when = []
        if self.as_of:
            when.append(f"as of {fmt_time(self.as_of)}")
        if self.known_at:
            when.append(f"known at {fmt_time(self.known_at)}")
        if self.include_retired:
            when.append("including retired facts")
        suffix = f" ({'; '.join(when)})" if when else ""
        return f"{self.query!r} in {', '.join(self.group_ids)} [{self.recipe}]{suffix}"

    def to_pandas(self, kind: str | None = None) -> Any:
        """A DataFrame of one ``kind`` ("facts", "entities", "episodes", "communities"); all rows, with a
        ``kind`` column, when ``kind`` is None."""
        kinds: dict[str, Sequence[Any]] = {
            "facts": self.facts,
            "entities": self.entities,
            "episodes": self.episodes,
            "communities": self.communities,
        }
        if kind is not None:
            if kind not in kinds:
                raise ValueError(f"kind must be one of {sorted(kinds)}, got {kind!r}")
            return frames.data_frame(r.row() for r in kinds[kind])
        singular = {"facts": "fact", "entities": "entity", "episodes": "episode", "communities": "community"}
        rows = ({"kind": singular[k], **r.row()} for k, items in kinds.items() for r in items)
        return frames.data_frame(rows)

    def _graph_parts(self) -> tuple[dict[str, Entity], list[Fact]]:
        entities: dict[str, Entity] = {}
        for r in self.facts:
            for e in (r.source, r.target):
                if e is not None:
                    entities.setdefault(e.uuid, e)
        for er in self.entities:
            entities.setdefault(er.uuid, er.entity)
        return entities, [r.fact for r in self.facts]

    def to_networkx(self) -> Any:
        """A ``networkx.MultiDiGraph``: entity nodes, one edge per fact (key = fact uuid)."""
        entities, facts = self._graph_parts()
        scores = {r.uuid: r.score for r in self.facts}
        return frames.to_networkx(entities, facts, scores, retired=retired_uuids(facts))

    def draw(self, center: str | None = None) -> GraphDrawing:
        """The facts and entities found, as a picture (``center``: an entity uuid to pin in the middle)."""
        entities, facts = self._graph_parts()
        title = f"search: {self.query}"
        return subgraph_drawing(entities, facts, center=center, title=title, retired=retired_uuids(facts))
