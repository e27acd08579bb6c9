"""Entity resolution: each extracted entity becomes a new entity or is merged into an existing one.

Per entity, as its extraction line arrives: exact normalized-name / alias lookup and BM25 candidates.
When extraction has ended: the names still unresolved are embedded in ONE batch, vector candidates are
added, and each entity is decided:

- an exact name/alias match is merged deterministically, whatever the embeddings say (two stored
  entities named "DGIA" can never coexist because their vectors disagree); only a clash of declared
  types (the person "Paris" vs the city) sends it to the model instead;
- no plausible candidate (see :func:`names.plausible_duplicate` and ``vector_threshold``): a new entity;
- otherwise one small resolve_entity call with at most ``max_entity_candidates`` candidates. A reply
  naming an id that was not offered is ignored and reported.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ..errors import StructuredOutputError
from ..graph.model import Entity, normalize_name
from ..graph.store import Hit
from ..prompts import resolve_entity as rp
from ..prompts.extract_entities import ExtractedEntity
from ..prompts.runtime import run as run_prompt
from .events import EntityExtracted, EntityResolved
from .grounding import Grounding, episode_grounding, report_ungrounded
from .names import plausible_duplicate
from .ontology import clean_attributes
from .state import EpisodeRun, clip


@dataclass
class _Mention:
    surface: str
    label: str | None
    attributes: dict[str, object]
    lookup: asyncio.Task[tuple[list[Entity], list[Hit[Entity]]]]


@dataclass
class _Candidate:
    entity: Entity
    score: float


@dataclass
class EntityResolver:
    """Resolves the entities of one episode; ``entities`` holds the final version of each touched one."""

    run: EpisodeRun
    entities: dict[str, Entity] = field(default_factory=dict)
    new: set[str] = field(default_factory=set)
    changed: set[str] = field(default_factory=set)
    by_surface: dict[str, str] = field(default_factory=dict)
    """normalized extracted name -> entity uuid"""
    context: str = ""
    """The previous-episodes window extraction was shown: names found only there are grounded too."""
    _mentions: dict[str, _Mention] = field(default_factory=dict)
    _grounding: Grounding | None = None

    @property
    def grounding(self) -> Grounding:
        """What extracted names must be found in (``pipeline.grounding``)."""
        if self._grounding is None:
            self._grounding = episode_grounding(self.run, self.context)
        return self._grounding

    @property
    def names(self) -> list[str]:
        return [m.surface for m in self._mentions.values()]

    def add(self, extracted: ExtractedEntity) -> None:
        """Take one extracted entity and start its lookups at once (called as its line arrives)."""
        surface = " ".join(extracted.name.split())
        norm = normalize_name(surface)
        if not norm or norm in self._mentions:
            return
        if not self.grounding.grounded(surface):
            report_ungrounded(self.run, "entity", surface)
            return
        ontology = self.run.options.ontology
        label = ontology.label_for(extracted.entity_type)
        attributes, problems = clean_attributes(ontology.entity_model(label), extracted.attributes)
        for problem in problems:
            self.run.report.warn(f"entity {surface!r}: {problem}")
        lookup = asyncio.create_task(self._lookup(surface))
        self._mentions[norm] = _Mention(surface, label, attributes, lookup)
        self.run.event(EntityExtracted, name=surface)

    def cancel(self) -> None:
        for mention in self._mentions.values():
            mention.lookup.cancel()

    async def _lookup(self, surface: str) -> tuple[list[Entity], list[Hit[Entity]]]:
        run = self.run
        exact = await run.store.entities_by_names(run.group_id, [surface])
        matches = exact.get(surface, [])
        if matches:
            return matches, []
        hits = await run.store.search_entities_text(
            [run.group_id], surface, limit=run.options.max_entity_candidates
        )
        return [], hits

    async def finish(self) -> None:
        """Decide every added entity (after extraction ended): exact merges, one embedding batch, the
        model for the ambiguous ones (in parallel)."""
        looked = {norm: await m.lookup for norm, m in self._mentions.items()}
        undecided: list[str] = []
        for norm, (exact, _) in looked.items():
            mention = self._mentions[norm]
            target = _exact_target(exact, mention.label)
            if target is not None:
                self._merge(norm, target, outcome="exact")
            else:
                undecided.append(norm)
        if not undecided:
            return
        surfaces = [self._mentions[n].surface for n in undecided]
        vectors = await self.run.embedder.embed(surfaces)
        decisions = [
            self._decide(norm, looked[norm][0], looked[norm][1], vector)
            for norm, vector in zip(undecided, vectors, strict=True)
        ]
        await asyncio.gather(*decisions)

    async def _decide(
        self, norm: str, exact: list[Entity], text_hits: list[Hit[Entity]], vector: np.ndarray
    ) -> None:
        run, mention = self.run, self._mentions[norm]
        vector_hits = await run.store.search_entities_vector(
            [run.group_id], vector.tolist(), limit=run.options.max_entity_candidates
        )
        candidates = self._candidates(mention.surface, exact, text_hits, vector_hits)
        if not candidates:
            self._create(norm, vector, outcome="new")
            return
        chosen, better_name = await self._ask(mention, candidates)
        if chosen is None:
            self._create(norm, vector, outcome="distinct")
        else:
            self._merge(norm, chosen, outcome="merged", better_name=better_name)

    def _candidates(
        self, surface: str, exact: list[Entity], text_hits: list[Hit[Entity]], vector_hits: list[Hit[Entity]]
    ) -> list[Entity]:
        threshold = self.run.options.vector_threshold
        pool: dict[str, _Candidate] = {e.uuid: _Candidate(e, 2.0) for e in exact}
        for hit in text_hits:
            if hit.item.uuid not in pool and _plausible(surface, hit.item):
                pool[hit.item.uuid] = _Candidate(hit.item, 1.0)
        for hit in vector_hits:
            close = hit.score >= threshold or _plausible(surface, hit.item)
            if close:
                old = pool.get(hit.item.uuid)
                pool[hit.item.uuid] = _Candidate(hit.item, max(hit.score, old.score if old else 0.0))
        ranked = sorted(pool.values(), key=lambda c: -c.score)
        return [c.entity for c in ranked[: self.run.options.max_entity_candidates]]

    async def _ask(self, mention: _Mention, candidates: Sequence[Entity]) -> tuple[Entity | None, str | None]:
        run = self.run
        offered = {str(i + 1): e for i, e in enumerate(candidates)}
        data = rp.ResolveEntityInput(
            entity=rp.NewEntity(name=mention.surface, entity_type=mention.label),
            episode=clip(run.episode.content, run.options.clip_chars),
            candidates=[
                rp.EntityCandidate(
                    id=key,
                    name=e.name,
                    entity_type=e.labels[0] if e.labels else None,
                    summary=clip(e.summary, 160),
                )
                for key, e in offered.items()
            ],
        )
        try:
            result = await run_prompt(run.llm, rp.PROMPT, data)
        except StructuredOutputError as exc:
            run.report.warn(
                f"resolve_entity for {mention.surface!r} gave no usable reply ({exc}); kept it new"
            )
            return None, None
        answer: rp.EntityResolution = result.value
        chosen = (answer.duplicate_of or "").strip()
        if chosen.casefold() in ("", "null", "none"):
            return None, None
        if chosen not in offered:
            run.report.warn(
                f"resolve_entity for {mention.surface!r} named candidate {chosen!r}, "
                "which was not offered; ignored"
            )
            return None, None
        better = (answer.name or "").strip() or None
        return offered[chosen], better

    # --- outcomes -------------------------------------------------------------------------------

    def _create(self, norm: str, vector: np.ndarray, *, outcome: str) -> None:
        run, mention = self.run, self._mentions[norm]
        entity = Entity(
            uuid=run.child_uuid("entity", norm),
            group_id=run.group_id,
            name=mention.surface,
            labels=[mention.label] if mention.label else [],
            attributes=dict(mention.attributes),
            name_embedding=[float(x) for x in vector],
            created_at=run.now,
        )
        self.entities[entity.uuid] = entity
        self.new.add(entity.uuid)
        self.by_surface[norm] = entity.uuid
        run.event(EntityResolved, name=mention.surface, entity_uuid=entity.uuid, outcome=outcome)

    def _merge(self, norm: str, target: Entity, *, outcome: str, better_name: str | None = None) -> None:
        mention = self._mentions[norm]
        current = self.entities.get(target.uuid, target)
        updated = _merged(current, mention.surface, mention.label, mention.attributes, better_name)
        self.entities[target.uuid] = updated
        if updated != current and target.uuid not in self.new:
            self.changed.add(target.uuid)
        self.by_surface[norm] = target.uuid
        self.run.event(EntityResolved, name=mention.surface, entity_uuid=target.uuid, outcome=outcome)


def _plausible(surface: str, entity: Entity) -> bool:
    return any(plausible_duplicate(surface, name) for name in (entity.name, *entity.aliases))


def _exact_target(matches: list[Entity], label: str | None) -> Entity | None:
    """The entity an exact name/alias match merges into, or None when declared types clash."""
    if not matches:
        return None
    if label is None:
        return matches[0]
    return next((e for e in matches if not e.labels or label in e.labels), None)


def _merged(
    entity: Entity, surface: str, label: str | None, attributes: dict[str, object], better_name: str | None
) -> Entity:
    name, aliases = entity.name, list(entity.aliases)
    if normalize_name(surface) not in entity.normalized_names:
        aliases.append(surface)
    if better_name and normalize_name(better_name) != normalize_name(name):
        aliases.append(name)
        name = better_name
    aliases = [a for a in dict.fromkeys(aliases) if normalize_name(a) != normalize_name(name)]
    labels = list(entity.labels)
    if label and label not in labels:
        labels.append(label)
    merged_attributes = {**entity.attributes, **attributes}
    if (name, aliases, labels, merged_attributes) == (
        entity.name,
        entity.aliases,
        entity.labels,
        entity.attributes,
    ):
        return entity
    return entity.model_copy(
        update={"name": name, "aliases": aliases, "labels": labels, "attributes": merged_attributes}
    )
