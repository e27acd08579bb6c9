"""One entity in full: summary, aliases, current facts, history of retired facts, episodes mentioning it.

::

    view = await entity_view(store, "acme", "Alice")      # a name, an alias or a uuid
    view.current          # facts valid now, with both endpoints
    view.history          # retired facts: when, and which fact / episode retired them
    view.episodes         # the episodes that mention Alice, newest first
    await entity_view(store, "acme", "Alice", as_of=datetime(2023, 6, 1, tzinfo=UTC))  # as it was then
    view.draw().save("alice.html")

An unknown name raises :class:`~epigraph.errors.EntityNotFound` carrying the closest names (fulltext,
plus vector search when an embedder is given, ordered by string similarity to what was typed).
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..concurrency import gather
from ..embed import Embedder
from ..errors import EntityNotFound
from ..graph.corrections import Correction
from ..graph.entity_time import shown_summary, withheld_note
from ..graph.model import Entity, Episode, Fact, normalize_name, utc_now
from ..graph.roles import optional
from ..graph.store import CURRENT, CorrectionReads, EntityFilter, FactFilter, GraphReads
from ..graph.temporal import EVERYTHING, TimeFilter, interval, matches
from ..present import frames
from ..present.corrections import correction_dict, describe
from ..present.draw import GraphDrawing, subgraph_drawing
from ..present.records import entity_dict, episode_dict, fact_dict
from ..present.tables import Table, TableView, fmt_start, fmt_time, fmt_validity, shorten
from .endpoints import entities_then
from .filters import make_filters
from .results import retired_uuids


@dataclass(frozen=True, slots=True)
class RetiredFact:
    """A fact that is no longer current, and what retired it (``by_fact`` / ``by_episode``, if recorded;
    ``by_correction`` when a person retired it by hand)."""

    fact: Fact
    retired_at: datetime | None
    """System time: when the graph retired it (``expired_at``)."""
    by_fact: Fact | None = None
    by_episode: Episode | None = None
    by_correction: Correction | None = None

    @property
    def ended_at(self) -> datetime | None:
        """Event time: when it stopped being true (``invalid_at``)."""
        return self.fact.invalid_at

    def to_dict(self) -> dict[str, Any]:
        return {
            "fact": fact_dict(self.fact),
            "retired_at": self.retired_at.isoformat() if self.retired_at else None,
            "ended_at": self.ended_at.isoformat() if self.ended_at else None,
            "by_fact": fact_dict(self.by_fact) if self.by_fact else None,
            "by_episode": episode_dict(self.by_episode) if self.by_episode else None,
            "by_correction": correction_dict(self.by_correction) if self.by_correction else None,
        }


@dataclass(frozen=True, slots=True)
class EntityView(TableView):
    entity: Entity
    current: tuple[Fact, ...]
    history: tuple[RetiredFact, ...]
    episodes: tuple[Episode, ...]
    mentions: int
    neighbours: Mapping[str, Entity]
    """Every other endpoint of its facts (current and retired), by uuid."""
    same_name: tuple[Entity, ...] = ()
    """Other entities that share the looked-up name (the most mentioned one was chosen)."""
    corrections: tuple[Correction, ...] = ()
    """The corrections by hand that touched it or its facts, newest first: who changed what, when."""
    as_of: datetime | None = None
    """The time the view looks back to (``None``: now): the entity as it was then (its aliases said by
    then; its summary withheld when written from a later episode: ``entity.summary_withheld``), facts
    current then, the history by then, the episodes said by then and their count. The corrections are
    as they are now."""

    @property
    def name(self) -> str:
        return self.entity.name

    @property
    def summary(self) -> str:
        return self.entity.summary

    @property
    def aliases(self) -> list[str]:
        return list(self.entity.aliases)

    def _name(self, uuid: str) -> str:
        if uuid == self.entity.uuid:
            return self.entity.name
        other = self.neighbours.get(uuid)
        return other.name if other else uuid[:8]

    def to_dict(self) -> dict[str, Any]:
        return {
            "entity": entity_dict(self.entity),
            "summary_note": withheld_note(self.entity),
            "mentions": self.mentions,
            "current": [self._fact_dict(f) for f in self.current],
            "history": [{**r.to_dict(), **self._names(r.fact)} for r in self.history],
            "episodes": [episode_dict(e) for e in self.episodes],
            "same_name": [entity_dict(e) for e in self.same_name],
            "corrections": [correction_dict(c) for c in self.corrections],
            "as_of": self.as_of.isoformat() if self.as_of else None,
        }

    def _names(self, fact: Fact) -> dict[str, str]:
        return {"source_name": self._name(fact.source_uuid), "target_name": self._name(fact.target_uuid)}

    def _fact_dict(self, fact: Fact) -> dict[str, Any]:
        return {**fact_dict(fact), **self._names(fact)}

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)

    def tables(self) -> list[Table]:
        current = tuple(
            (
                self._name(f.source_uuid),
                f.relation,
                self._name(f.target_uuid),
                shorten(f.text),
                fmt_start(f),
            )
            for f in self.current
        )
        history = tuple(
            (
                self._name(r.fact.source_uuid),
                r.fact.relation,
                self._name(r.fact.target_uuid),
                shorten(r.fact.text, 70),
                fmt_validity(r.fact),
                fmt_time(r.retired_at),
                shorten(r.by_fact.text, 50) if r.by_fact else _by_hand(r.by_correction),
                _episode_ref(r.by_episode),
            )
            for r in self.history
        )
        corrections = tuple(
            (fmt_time(c.created_at), c.author, shorten(describe(c), 100), c.uuid) for c in self.corrections
        )
        episodes = tuple((fmt_time(e.reference_time), shorten(e.content, 110)) for e in self.episodes)
        return [
            Table("Current facts", ("source", "relation", "target", "fact", "since"), current),
            Table(
                "History (retired facts)",
                ("source", "relation", "target", "fact", "valid", "retired", "by fact", "by episode"),
                history,
                dim_rows=frozenset(range(len(history))),
            ),
            Table(f"Episodes mentioning it ({self.mentions})", ("when", "content"), episodes),
            Table("Corrections by hand", ("when", "by", "what", "correction"), corrections),
        ]

    def _header(self) -> str:
        e = self.entity
        parts = [e.name]
        if e.labels:
            parts.append(f"[{', '.join(e.labels)}]")
        if e.aliases:
            parts.append(f"aka {', '.join(e.aliases)}")
        where = f"group {e.group_id!r} · uuid {e.uuid} · mentioned in {self.mentions} episodes"
        if self.as_of is not None:
            where += f" · as of {fmt_time(self.as_of)}"
        summary = shown_summary(e)
        return " ".join(parts) + (f"\n{summary}" if summary else "") + f"\n{where}"

    def to_pandas(self) -> Any:
        """Its facts (current and retired) as a DataFrame, with a ``current`` column."""
        rows = [{"current": True, **self._fact_dict(f)} for f in self.current]
        rows += [{"current": False, **self._fact_dict(r.fact)} for r in self.history]
        return frames.data_frame(rows)

    def to_networkx(self) -> Any:
        facts = [*self.current, *(r.fact for r in self.history)]
        entities = {self.entity.uuid: self.entity, **self.neighbours}
        return frames.to_networkx(entities, facts, retired=retired_uuids(facts))

    def draw(self, include_retired: bool = True) -> GraphDrawing:
        """Its neighbourhood as a picture, the entity in the middle (retired facts dashed)."""
        facts = [*self.current, *(r.fact for r in self.history)] if include_retired else list(self.current)
        entities = {self.entity.uuid: self.entity, **self.neighbours}
        center, title = self.entity.uuid, self.entity.name
        return subgraph_drawing(entities, facts, center=center, title=title, retired=retired_uuids(facts))


def _episode_ref(episode: Episode | None) -> str:
    """An episode in one table cell: when, the start of its text, the start of its uuid."""
    if episode is None:
        return ""
    return f"{fmt_time(episode.reference_time)} {shorten(episode.content, 40)} ({episode.uuid[:8]})"


def _by_hand(correction: Correction | None) -> str:
    return f"{correction.author}, by hand" if correction is not None else ""


async def find_entities(
    store: GraphReads, group_id: str, refs: Sequence[str], time: TimeFilter = CURRENT
) -> dict[str, list[Entity]]:
    """For each ref (a uuid, a name or an alias) the entities it denotes in the group, as they were
    under ``time`` (one not mentioned by then, or an alias said only later, denotes none)."""
    by_uuid = {e.uuid: e for e in await store.get_entities(group_id, list(refs), time)}
    found: dict[str, list[Entity]] = {ref: [by_uuid[ref]] for ref in refs if ref in by_uuid}
    names = [ref for ref in refs if ref not in found]
    if names:
        matches = await store.entities_by_names(group_id, names, time)
        found.update({ref: list(matches.get(ref, [])) for ref in names})
    return found


async def closest_names(
    store: GraphReads, group_ids: Sequence[str], name: str, embedder: Embedder | None = None, limit: int = 5,
    time: TimeFilter = CURRENT,
) -> list[str]:  # fmt: skip
    """Names of the entities closest to ``name`` (fulltext, plus vectors when an embedder is given and
    the groups hold anything: an empty graph has no names to offer, nor a reason to load a model),
    among those that existed under ``time``."""
    flt = EntityFilter(time=time)
    candidates = [h.item for h in await store.search_entities_text(group_ids, name, limit=20, flt=flt)]
    if embedder is not None and any([await store.episodes(g, limit=1) for g in group_ids]):
        vector = (await embedder.embed([name]))[0]
        candidates += [
            h.item for h in await store.search_entities_vector(group_ids, list(map(float, vector)), 20, flt)
        ]
    target = normalize_name(name)

    def similarity(entity: Entity) -> float:
        return max(difflib.SequenceMatcher(None, target, n).ratio() for n in entity.normalized_names)

    names = [
        e.name for e in sorted(dict((e.uuid, e) for e in candidates).values(), key=similarity, reverse=True)
    ]
    return list(dict.fromkeys(names))[:limit]


async def resolve_center(
    store: GraphReads, group_ids: Sequence[str], center: str | Iterable[str]
) -> dict[str, tuple[str, ...]]:
    """Center uuids per group for entity refs (uuids or names); EntityNotFound when a ref matches nothing."""
    refs = [center] if isinstance(center, str) else list(dict.fromkeys(center))
    per_group: dict[str, tuple[str, ...]] = {}
    matched: set[str] = set()
    for group_id in group_ids:
        found = await find_entities(store, group_id, refs)
        uuids = tuple(dict.fromkeys(e.uuid for ref in refs for e in found.get(ref, [])))
        matched.update(ref for ref in refs if found.get(ref))
        if uuids:
            per_group[group_id] = uuids
    for ref in refs:
        if ref not in matched:
            raise EntityNotFound(
                ref, ", ".join(group_ids), closest=await closest_names(store, group_ids, ref)
            )
    return per_group


async def most_mentioned(
    store: GraphReads, group_id: str, candidates: list[Entity], time: TimeFilter = CURRENT
) -> tuple[Entity, tuple[Entity, ...]]:
    """The most mentioned of several same-named entities (by the episodes passing ``time``; ties: the
    oldest), and the others."""
    if len(candidates) == 1:
        return candidates[0], ()
    counts = await store.mention_counts(group_id, [e.uuid for e in candidates], time)
    ordered = sorted(candidates, key=lambda e: (-counts.get(e.uuid, 0), e.created_at, e.uuid))
    return ordered[0], tuple(ordered[1:])


async def entity_view(
    store: GraphReads,
    group_id: str,
    name_or_uuid: str,
    *,
    embedder: Embedder | None = None,
    as_of: datetime | str | None = None,
    episodes_limit: int = 50,
    facts_limit: int = 500,
    corrections_limit: int = 50,
) -> EntityView:
    """Everything known about one entity (see the module docstring); ``as_of`` a past time: as it was
    then (:func:`as_of_split`; a naive datetime or an ISO string read as UTC, as by search)."""
    as_of = make_filters(group_id, as_of=as_of).as_of
    then = TimeFilter(as_of=as_of)
    found = (await find_entities(store, group_id, [name_or_uuid], then)).get(name_or_uuid, [])
    if not found:
        closest = await closest_names(store, [group_id], name_or_uuid, embedder, time=then)
        asked = as_of.isoformat() if as_of else ""
        raise EntityNotFound(name_or_uuid, group_id, closest=closest, as_of=asked)
    entity, same_name = await most_mentioned(store, group_id, found, then)
    facts, episodes, counts = await gather(
        [
            store.facts_around(group_id, [entity.uuid], FactFilter(EVERYTHING), facts_limit),
            store.episodes_mentioning(group_id, entity.uuid, episodes_limit, then),
            store.mention_counts(group_id, [entity.uuid], then),
        ]
    )
    log = optional(store, CorrectionReads)  # a store without corrections by hand: none to show
    corrections = await log.corrections(group_id, subject=entity.uuid, limit=corrections_limit) if log else []
    current, retired = as_of_split(facts, as_of)
    shown = [*current, *retired]
    history, neighbours = await _history_and_neighbours(
        store, group_id, entity, shown, retired, corrections, then
    )
    return EntityView(
        entity=entity,
        current=tuple(current),
        history=tuple(history),
        episodes=tuple(episodes),
        mentions=counts.get(entity.uuid, 0),
        neighbours=neighbours,
        same_name=same_name,
        corrections=tuple(corrections),
        as_of=as_of,
    )


def as_of_split(facts: Iterable[Fact], as_of: datetime | None = None) -> tuple[list[Fact], list[Fact]]:
    """An entity's facts as they stood at ``as_of`` (as the graph believes now), each newest first: the
    current ones (``temporal.matches``) and the history, those that had begun by ``as_of`` and ended
    by then; a fact that starts after ``as_of`` is in neither. ``None`` (now): every fact not current is
    history (a retired fact whose start lies ahead included)."""
    now = utc_now()
    current = [f for f in facts if matches(f, TimeFilter(as_of=as_of), now)]
    kept = {f.uuid for f in current}
    retired = [
        f for f in facts
        if f.uuid not in kept and (as_of is None or (start := interval(f)[0]) is None or start <= as_of)
    ]  # fmt: skip
    return sorted(current, key=_newest_first), sorted(retired, key=_newest_first)


def _newest_first(fact: Fact) -> tuple[float, str]:
    when = interval(fact)[0] or fact.created_at
    return -when.timestamp(), fact.uuid


async def _history_and_neighbours(
    store: GraphReads,
    group_id: str,
    entity: Entity,
    facts: list[Fact],
    retired: list[Fact],
    corrections: list[Correction],
    time: TimeFilter,
) -> tuple[list[RetiredFact], dict[str, Entity]]:
    """Resolve what retired each fact (fact + episode) and every other endpoint, concurrently."""
    by_fact_ids = list(dict.fromkeys(f.invalidated_by.fact_uuid for f in retired if f.invalidated_by))
    episode_ids = list(dict.fromkeys(f.invalidated_by.episode_uuid for f in retired if f.invalidated_by))
    by_facts_list, *episode_list = await gather(
        [store.get_facts(group_id, by_fact_ids), *(store.get_episode(group_id, uid) for uid in episode_ids)]
    )
    by_facts = {f.uuid: f for f in by_facts_list}
    episodes = {e.uuid: e for e in episode_list if e is not None}
    endpoint_ids = {u for f in [*facts, *by_facts.values()] for u in (f.source_uuid, f.target_uuid)}
    endpoint_ids.discard(entity.uuid)
    neighbours = await entities_then(store, group_id, sorted(endpoint_ids), time)
    by_hand = {c.uuid: c for c in corrections}
    history = [
        RetiredFact(
            fact=f,
            retired_at=f.expired_at,
            by_fact=by_facts.get(f.invalidated_by.fact_uuid) if f.invalidated_by else None,
            by_episode=episodes.get(f.invalidated_by.episode_uuid) if f.invalidated_by else None,
            by_correction=by_hand.get(f.invalidated_by.fact_uuid) if f.invalidated_by else None,
        )
        for f in retired
    ]
    return history, neighbours
