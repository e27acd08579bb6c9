"""The names room's entry point (``pipeline/names/__init__.py``): each extracted entity becomes a new
entity or is merged into an existing one.

Per entity, as its extraction line arrives (:meth:`EntityResolver.add`): the gates of ``gates`` (refused,
or the name it gets), then exact normalized-name / alias lookup and BM25 candidates. When extraction has
ended (:meth:`EntityResolver.finish`): the names still unresolved are embedded in ONE batch, vector
candidates are added, and each entity is decided:

- an exact name/alias match is merged deterministically, whatever the embeddings say (two stored
  entities named "DGIA" can never coexist because their vectors disagree); only a clash of declared
  types (the person "Paris" vs the city) sends it to the model instead; with ``NameOptions.bare_names``,
  a bare noun the one stored name it heads (``bare.head_target``), or another name of its reply;
- no plausible candidate: a new entity. Candidates are the lexically plausible names
  (:func:`.matching.plausible_duplicate`), names whose vector is close (``NameOptions.vector_threshold``),
  and names that share a word with it and are related in meaning (``NameOptions.related_threshold``:
  "Jon's dance studio" / "Jon's business" 0.62, "dance session" / "dance class" 0.77 with
  all-MiniLM-L6-v2, where names of different things reach 0.87: "Melanie's family" / "Melanie's kids";
  the model decides);
- otherwise it is *ambiguous*: kept as a provisional new entity with its candidates (``questions``, at
  most ``NameOptions.max_candidates``) until the episode's one resolve_episode call
  (``facts.resolve_call``) answers, and :meth:`EntityResolver.settle` merges it or keeps it. A reply
  naming an id that was not offered is ignored and reported there.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

import numpy as np

from ...episodes.events import EntityExtracted, EntityResolved
from ...episodes.verdicts import Verdict
from ...graph.model import Entity, normalize_name, speaker_of
from ...graph.store import Hit
from ...prompts.extraction import ExtractedEntity
from ..ontology import clean_attributes
from ..state import EpisodeRun
from .bare import head_target, headed_by, speakers_own
from .gates import NameGates, report_refusal
from .grounding import Grounding, episode_grounding
from .matching import NameVeto, plausible_duplicate, share_a_word


@dataclass
class _Mention:
    surface: str
    """The name as extracted (what the fact prompt shows and the fact lines say)."""
    label: str | None
    attributes: dict[str, object]
    lookup: asyncio.Task[tuple[list[Entity], list[Hit[Entity]]]] | None = None
    name: str = ""
    """The name the entity gets: ``surface``, or what ``bare_names`` makes of it (a speaker's owner the
    message does not give dropped, "the kids" the speaker's, the speaker's own thing the graph holds)."""


@dataclass
class _Candidate:
    entity: Entity
    score: float


@dataclass(frozen=True)
class Question:
    """An ambiguous entity: provisionally new (``uuid``), decided by the episode's resolve call."""

    norm: str
    surface: str
    label: str | None
    uuid: str
    candidates: list[Entity]


@dataclass(frozen=True)
class Resolved:
    """How one extracted name was resolved (``EntityResolved``'s outcome: ``new``, ``exact``, ``head``,
    ``merged`` by the resolve call, ``distinct``: kept new though candidates were shown), into which
    entity, and the candidates the resolve call was shown (``shown``)."""

    surface: str
    outcome: str
    entity_uuid: str
    shown: tuple[str, ...] = ()


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
    questions: dict[str, Question] = field(default_factory=dict)
    """normalized name -> the ambiguous entity's question, until :meth:`settle`"""
    _mentions: dict[str, _Mention] = field(default_factory=dict)
    _same: dict[str, str] = field(default_factory=dict)
    """normalized extracted name -> the mention whose name it got (``bare_names``: "Jon's
    choreography" made "choreography", then "choreography" said too)"""
    _grounding: Grounding | None = None
    _gates: NameGates | None = None
    verdicts: list[Verdict] = field(default_factory=list)
    """What the room refused or changed, in order: each repair of a reply's name (``reply``), each gate's
    verdict on a new extracted name (``gates``)."""
    resolved: list[Resolved] = field(default_factory=list)
    """How each admitted name was resolved, in the order decided (step 3; the decision record's)."""

    @property
    def grounding(self) -> Grounding | None:
        """What extracted names must be found in (``names.grounding``); None when the options switch
        the hallucination check off (``NameOptions.grounding``)."""
        policy = self.run.options.names.grounding
        if self._grounding is None and policy is not None:
            self._grounding = episode_grounding(self.run.episode, self.context, policy)
        return self._grounding

    @property
    def gates(self) -> NameGates:
        """The gates an extracted name passes (``gates``), over this episode."""
        if self._gates is None:
            self._gates = NameGates(self.run.episode, self.run.options.names, self.grounding)
        return self._gates

    @property
    def names(self) -> list[str]:
        return [m.surface for m in self._mentions.values()]

    def add(self, extracted: ExtractedEntity) -> None:
        """Take one extracted entity (called as its line arrives): a name said again takes its type
        later; a new one runs through the gates (``gates``: refused, or the name it gets) and its lookups
        start at once."""
        surface = " ".join(extracted.name.split())
        norm = normalize_name(surface)
        if not norm:
            return
        if norm in self._mentions or norm in self._same:
            self._type_later(self._mentions[self._same.get(norm, norm)], extracted)
            return
        decision = self.gates.admit(surface, extracted.entity_type, self._taken)
        self.verdicts += decision.verdicts
        if decision.refusal is not None:
            report_refusal(self.run.report, decision.refusal)
            return
        ontology = self.run.options.ontology
        label = ontology.label_for(extracted.entity_type)
        attributes, problems = clean_attributes(ontology.entity_model(label), extracted.attributes)
        for problem in problems:
            self.run.report.warn(f"entity {surface!r}: {problem}")
        if (same := self._mention_named(decision.name)) is not None:
            self._same[norm] = same
            self._type_later(self._mentions[same], extracted)
            return
        mention = _Mention(surface, label, attributes, name=decision.name)
        mention.lookup = asyncio.create_task(self._lookup(mention))
        self._mentions[norm] = mention
        self.run.event(EntityExtracted, name=surface)

    def _taken(self, name: str) -> bool:
        """Whether a name of the reply already gets ``name``."""
        return self._mention_named(name) is not None

    def _mention_named(self, name: str) -> str | None:
        """The key of the mention whose entity gets ``name`` (normalized alike), if one does."""
        norm = normalize_name(name)
        return next((k for k, m in self._mentions.items() if normalize_name(m.name) == norm), None)

    def _type_later(self, mention: _Mention, extracted: ExtractedEntity) -> None:
        """A name seen again with a declared type (the speaker, added untyped, then written "(Person)" by
        the model) takes that type and its attributes."""
        ontology = self.run.options.ontology
        label = ontology.label_for(extracted.entity_type)
        if mention.label is not None or label is None:
            return
        attributes, problems = clean_attributes(ontology.entity_model(label), extracted.attributes)
        for problem in problems:
            self.run.report.warn(f"entity {mention.surface!r}: {problem}")
        mention.label, mention.attributes = label, attributes

    def cancel(self) -> None:
        for mention in self._mentions.values():
            if mention.lookup is not None:
                mention.lookup.cancel()

    async def _lookup(self, mention: _Mention) -> tuple[list[Entity], list[Hit[Entity]]]:
        """Exact name/alias matches (a bare name: its own, else the speaker's own: ``bare_names``), else
        the BM25 candidates."""
        run = self.run
        own = speakers_own(mention.name, speaker_of(run.episode)) if run.options.names.bare_names else None
        names = [mention.name, *([own] if own else [])]
        exact = await run.store.entities_by_names(run.group_id, names)
        if exact.get(mention.name):
            return exact[mention.name], []
        if own and exact.get(own):
            mention.name = own
            return exact[own], []
        hits = await run.store.search_entities_text(
            [run.group_id], mention.name, limit=run.options.names.max_candidates
        )
        return [], hits

    async def finish(self) -> None:
        """Decide what needs no model (after extraction ended): exact merges, then one embedding batch
        and the candidates of the rest; an entity with candidates stays provisional (``questions``)."""
        looked = {norm: await m.lookup for norm, m in self._mentions.items() if m.lookup is not None}
        undecided: list[str] = []
        speaker = speaker_of(self.run.episode)
        for norm, (exact, hits) in looked.items():
            mention = self._mentions[norm]
            target = _exact_target(exact, mention.label)
            if target is not None:
                self._merge(norm, target, outcome="exact")
            elif self.run.options.names.bare_names and (
                headed := head_target(mention.name, speaker, [h.item for h in hits])
            ):
                self._merge(norm, headed, outcome="head")
            else:
                undecided.append(norm)
        if self.run.options.names.bare_names:
            undecided = self._same_in_reply(undecided)
        if undecided:
            surfaces = [self._mentions[n].surface for n in undecided]
            vectors = await self.run.embedder.embed(surfaces)
            decisions = [
                self._decide(norm, looked[norm][0], looked[norm][1], vector)
                for norm, vector in zip(undecided, vectors, strict=True)
            ]
            await asyncio.gather(*decisions)
        for norm, same in self._same.items():
            while same in self._same:
                same = self._same[same]
            uuid = self.by_surface[norm] = self.by_surface[same]
            aliased, entity = self._mentions.get(norm), self.entities.get(uuid)
            if aliased is not None and entity is not None:  # a name of its own: kept as an alias
                self.entities[uuid] = _merged(entity, aliased.name, None, {}, None)
                if self.entities[uuid] != entity and uuid not in self.new:
                    self.changed.add(uuid)

    def _same_in_reply(self, undecided: list[str]) -> list[str]:
        """The undecided names less each bare one-word noun that is another name of its reply (the
        one it heads: ``bare.headed_by``), which it is then the same entity as."""
        speaker, left = speaker_of(self.run.episode), []
        for norm in undecided:
            others = [
                (key, [m.name]) for key, m in self._mentions.items() if key != norm and key not in self._same
            ]
            same = headed_by(self._mentions[norm].name, speaker, others)
            if same is None:
                left.append(norm)
            else:
                self._same[norm] = same
        return left

    async def _decide(
        self, norm: str, exact: list[Entity], text_hits: list[Hit[Entity]], vector: np.ndarray
    ) -> None:
        run, mention = self.run, self._mentions[norm]
        vector_hits = await run.store.search_entities_vector(
            [run.group_id], vector.tolist(), limit=run.options.names.max_candidates
        )
        candidates = self._candidates(mention.surface, exact, text_hits, vector_hits)
        if not candidates:
            self._create(norm, vector, outcome="new")
            return
        uuid = self._create(norm, vector, outcome=None)
        self.questions[norm] = Question(norm, mention.surface, mention.label, uuid, candidates)

    def _candidates(
        self, surface: str, exact: list[Entity], text_hits: list[Hit[Entity]], vector_hits: list[Hit[Entity]]
    ) -> list[Entity]:
        threshold, veto = self.run.options.names.vector_threshold, self.run.options.names.never_same
        pool: dict[str, _Candidate] = {e.uuid: _Candidate(e, 2.0) for e in exact}
        for hit in text_hits:
            if hit.item.uuid not in pool and _plausible(surface, hit.item, veto):
                pool[hit.item.uuid] = _Candidate(hit.item, 1.0)
        related = self.run.options.names.related_threshold
        for hit in vector_hits:
            close = hit.score >= threshold or _plausible(surface, hit.item, veto)
            close = close or (hit.score >= related and _related(surface, hit.item, veto))
            if close:
                old = pool.get(hit.item.uuid)
                pool[hit.item.uuid] = _Candidate(hit.item, max(hit.score, old.score if old else 0.0))
        ranked = sorted(pool.values(), key=lambda c: -c.score)
        return [c.entity for c in ranked[: self.run.options.names.max_candidates]]

    def settle(self, answers: dict[str, tuple[Entity, str | None]]) -> dict[str, str]:
        """Apply the model's answers (normalized name -> (chosen candidate, better name)); every other
        question stays a new entity. Returns provisional uuid -> merged-into uuid, to re-point facts."""
        moved: dict[str, str] = {}
        for norm, question in self.questions.items():
            answer = answers.get(norm)
            shown = tuple(c.uuid for c in question.candidates)
            if answer is None:
                self.run.event(
                    EntityResolved, name=question.surface, entity_uuid=question.uuid, outcome="distinct"
                )
                self.resolved.append(Resolved(question.surface, "distinct", question.uuid, shown))
                continue
            target, better_name = answer
            self.entities.pop(question.uuid, None)
            self.new.discard(question.uuid)
            self._merge(norm, target, outcome="merged", better_name=better_name, shown=shown)
            moved[question.uuid] = target.uuid
        self.questions = {}
        return moved

    # --- outcomes -------------------------------------------------------------------------------

    def _create(self, norm: str, vector: np.ndarray, *, outcome: str | None) -> str:
        """A new entity (``outcome`` None: provisional, no event until :meth:`settle`); its uuid."""
        run, mention = self.run, self._mentions[norm]
        entity = Entity(
            uuid=run.child_uuid("entity", norm),
            group_id=run.group_id,
            name=mention.name,
            labels=[mention.label] if mention.label else [],
            attributes=dict(mention.attributes),
            name_embedding=[float(x) for x in vector],
            created_at=run.now,
        )
        self.entities[entity.uuid] = entity
        self.new.add(entity.uuid)
        self.by_surface[norm] = entity.uuid
        if outcome is not None:
            run.event(EntityResolved, name=mention.surface, entity_uuid=entity.uuid, outcome=outcome)
            self.resolved.append(Resolved(mention.surface, outcome, entity.uuid))
        return entity.uuid

    def _merge(
        self,
        norm: str,
        target: Entity,
        *,
        outcome: str,
        better_name: str | None = None,
        shown: tuple[str, ...] = (),
    ) -> None:
        mention = self._mentions[norm]
        current = self.entities.get(target.uuid, target)
        updated = _merged(current, mention.name, mention.label, mention.attributes, better_name)
        self.entities[target.uuid] = updated
        if updated != current and target.uuid not in self.new:
            self.changed.add(target.uuid)
        self.by_surface[norm] = target.uuid
        self.run.event(EntityResolved, name=mention.surface, entity_uuid=target.uuid, outcome=outcome)
        self.resolved.append(Resolved(mention.surface, outcome, target.uuid, shown))


def _plausible(surface: str, entity: Entity, veto: NameVeto | None) -> bool:
    return any(plausible_duplicate(surface, name, veto) for name in (entity.name, *entity.aliases))


def _related(surface: str, entity: Entity, veto: NameVeto | None) -> bool:
    """Shares a word with one of its names and no veto applies (``NameOptions.never_same``)."""
    names = (entity.name, *entity.aliases)
    vetoed = veto is not None and any(veto(surface, n) for n in names)
    return any(share_a_word(surface, n) for n in names) and not vetoed


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
