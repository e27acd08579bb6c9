"""Fact resolution: duplicates extend provenance, contradictions retire facts, scoped structurally.

A new fact is compared only with its candidates (``candidates``): believed facts on the same
endpoint pair, or sharing an endpoint (never only the object of both), ranked by meaning. Never
group-wide: a fact that shares no endpoint can never be a candidate, so it can never be retired by this
fact. Decisions:

- same endpoints, same relation and the same normalized sentence: a duplicate, without a model;
- no candidates: new, without a model;
- otherwise resolve_fact, a few facts per call, each with its own candidate ids; ids that were not
  offered for that fact are ignored and reported.

Contradictions are applied by ``graph.temporal.resolve_contradiction`` (ties in time go to the later
statement, so within one session a later turn retires an earlier one) and record ``invalidated_by``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ...episodes.events import FactInvalidated
from ...episodes.verdicts import Verdict
from ...graph.model import Entity, Fact
from ...graph.temporal import effective_valid_at, first_stated, resolve_contradiction
from ..names.resolver import EntityResolver
from ..state import EpisodeRun
from .candidates import candidate_pool, in_scope, interleave, rank, select
from .drafts import DraftFact
from .resolve_call import (
    IN_SCOPE,
    NO_CANDIDATES,
    RESTATED,
    WORD_FOR_WORD,
    Decision,
    resolve_episode,
)
from .restatements import restated
from .wording import normalize_text


@dataclass
class FactChanges:
    """What the facts of one episode change in the graph."""

    new: dict[str, Fact] = field(default_factory=dict)
    updated: dict[str, Fact] = field(default_factory=dict)
    """Existing facts as they must be written: provenance extended and/or retired."""
    invalidated: list[str] = field(default_factory=list)

    def current(self, fact: Fact) -> Fact:
        return self.updated.get(fact.uuid, fact)


_MOST_SHOWN = 12
"""Candidates one fact may be shown when an ambiguous endpoint multiplies its versions (the prompt's
bound): ``FactOptions.max_candidates`` per version, round robin."""


def hypotheses(fact: Fact, questions: Mapping[str, Sequence[Entity]]) -> list[Fact]:
    """The fact as extracted, then with each ambiguous endpoint (provisional uuid -> its candidate
    entities) replaced by each candidate: the candidates it would have under every answer."""
    out = [fact]
    for end, other in (("source_uuid", fact.target_uuid), ("target_uuid", fact.source_uuid)):
        for candidate in questions.get(getattr(fact, end), ()):
            if candidate.uuid != other:
                out.append(fact.model_copy(update={end: candidate.uuid}))
    return out


async def scoped_candidates(
    run: EpisodeRun,
    drafts: Sequence[DraftFact],
    vectors: Mapping[str, Sequence[float]],
    resolver: EntityResolver,
) -> dict[str, list[Fact]]:
    """Each draft's candidates (by draft key), best first, at most ``FactOptions.max_candidates``."""
    questions = {q.uuid: q.candidates for q in resolver.questions.values()}
    guesses = {d.key: hypotheses(d.fact, questions) for d in drafts}
    every = [f for facts in guesses.values() for f in facts]
    pool = await candidate_pool(run, every, vectors)
    names = await _endpoint_names(run, [*every, *pool], resolver.entities)
    options = run.options
    out: dict[str, list[Fact]] = {}
    for key, facts in guesses.items():
        lists = [
            select(
                f,
                rank(f, vectors.get(f.uuid), pool, names, options.facts.relation_families),
                options.facts.max_candidates,
                options.facts.candidates_per_end,
                options.facts.similarity_floor,
                options.facts.candidates_always,
            )
            for f in facts
        ]
        out[key] = interleave(lists)[: min(_MOST_SHOWN, options.facts.max_candidates * len(facts))]
    return out


async def _endpoint_names(
    run: EpisodeRun, facts: Sequence[Fact], known: Mapping[str, Entity]
) -> dict[str, tuple[str, Sequence[float] | None]]:
    """uuid -> (name, name vector) of every endpoint, from the episode's entities or the store."""
    wanted = {u for f in facts for u in (f.source_uuid, f.target_uuid)}
    found = {u: known[u] for u in wanted if u in known}
    missing = sorted(wanted - set(found))
    if missing:
        found.update((e.uuid, e) for e in await run.store.get_entities(run.group_id, missing))
    return {u: (e.name, e.name_embedding) for u, e in found.items()}


def deterministic_duplicate(fact: Fact, candidates: Sequence[Fact]) -> Fact | None:
    text = normalize_text(fact.text)
    for c in candidates:
        same_ends = (c.source_uuid, c.target_uuid) == (fact.source_uuid, fact.target_uuid)
        if same_ends and c.relation == fact.relation and normalize_text(c.text) == text:
            return c
    return None


async def decide(
    run: EpisodeRun,
    drafts: Sequence[DraftFact],
    vectors: Mapping[str, Sequence[float]],
    resolver: EntityResolver,
) -> dict[str, Decision]:
    """A decision per draft key, and the ambiguous entities settled, with ONE resolve_episode call.
    Each draft's decision says what decided it (``Decision.by``), in this order: a candidate it repeats
    word for word (``WORD_FOR_WORD``) or by meaning (``RESTATED``, with ``FactOptions.restated_similarity``);
    no candidate at all (``NO_CANDIDATES``: new); else the resolve call (``MODEL``; ``UNASKED`` when no
    call answered it), whose decision is checked (``resolve_call``) and kept ``IN_SCOPE``.

    ``vectors``: the drafts' fact vectors (by fact uuid). After the call the drafts' facts point at the
    entities their ambiguous endpoints were merged into, and a picked candidate that no longer shares
    an endpoint with its fact (it was offered for an answer the model did not give) is dropped.
    """
    candidates = await scoped_candidates(run, drafts, vectors, resolver)
    decisions: dict[str, Decision] = {}
    ask: list[tuple[DraftFact, list[Fact]]] = []
    for draft in drafts:
        found = candidates[draft.key]
        if (same := deterministic_duplicate(draft.fact, found)) is not None:
            decisions[draft.key] = Decision(duplicate_of=[same], by=WORD_FOR_WORD)
        elif (same := _restated(run, draft, vectors, found)) is not None:
            decisions[draft.key] = Decision(duplicate_of=[same], by=RESTATED)
        elif not found:
            decisions[draft.key] = Decision(by=NO_CANDIDATES)
        else:
            ask.append((draft, found))
    answers = await resolve_episode(run, list(resolver.questions.values()), ask)
    moved = resolver.settle(answers.entities)
    for draft in drafts:
        draft.fact = _repointed(draft.fact, moved)
    for draft, _ in ask:
        decisions[draft.key] = _still_in_scope(run, draft.fact, answers.facts.get(draft.key, Decision()))
    for draft in drafts:
        decisions[draft.key].shown = tuple(f.uuid for f in candidates[draft.key])
    return decisions


def _restated(
    run: EpisodeRun, draft: DraftFact, vectors: Mapping[str, Sequence[float]], found: Sequence[Fact]
) -> Fact | None:
    threshold = run.options.facts.restated_similarity
    if threshold is None:
        return None
    return restated(draft.fact, vectors.get(draft.fact.uuid), found, threshold)


def _repointed(fact: Fact, moved: Mapping[str, str]) -> Fact:
    source, target = (
        moved.get(fact.source_uuid, fact.source_uuid),
        moved.get(fact.target_uuid, fact.target_uuid),
    )
    if (source, target) == (fact.source_uuid, fact.target_uuid):
        return fact
    return fact.model_copy(update={"source_uuid": source, "target_uuid": target})


def _still_in_scope(run: EpisodeRun, fact: Fact, decision: Decision) -> Decision:
    verdicts = list(decision.verdicts)

    def keep(picked: list[Fact]) -> list[Fact]:
        kept = [old for old in picked if in_scope(fact, old)]
        for old in picked:
            if old not in kept:
                why = (
                    f"resolve_episode picked {old.text[:80]!r} for {fact.text[:80]!r}, which shares no "
                    "endpoint with it once the entities were decided; ignored"
                )
                verdicts.append(Verdict(IN_SCOPE, fact.text, why, refused=False))
                run.report.warn(why)
        return kept

    duplicates, retired = keep(decision.duplicate_of), keep(decision.contradicts)
    return Decision(duplicates, retired, decision.by, verdicts)


def apply(run: EpisodeRun, drafts: Sequence[DraftFact], decisions: dict[str, Decision]) -> FactChanges:
    """Turn decisions into writes: new facts, provenance extensions, retirements (in draft order)."""
    changes = FactChanges()
    for draft in drafts:
        decision = decisions.get(draft.key, Decision())
        if decision.duplicate_of:
            kept = changes.current(decision.duplicate_of[0])
            if run.episode.uuid not in kept.episodes:
                kept = kept.model_copy(
                    update={
                        "episodes": [*kept.episodes, run.episode.uuid],
                        "stated_at": first_stated([kept.stated_at, run.episode.reference_time]),
                    }
                )
            changes.updated[kept.uuid] = kept
            actor = kept
        else:
            actor = draft.fact
        duplicates = {f.uuid for f in decision.duplicate_of}
        for retired in decision.contradicts:
            if retired.uuid not in duplicates and retired.uuid != actor.uuid:
                actor = _contradict(run, changes, changes.current(retired), actor)
        if actor.uuid in changes.updated or decision.duplicate_of:
            changes.updated[actor.uuid] = actor
        else:
            changes.new[actor.uuid] = actor
    return changes


def _contradict(run: EpisodeRun, changes: FactChanges, existing: Fact, actor: Fact) -> Fact:
    episode = run.episode
    if actor.valid_at is None:
        start = effective_valid_at(None, episode.reference_time)
        if actor.invalid_at is not None and actor.invalid_at < start:
            # It ended before it was said, and its start is unknown: dating it from the episode would
            # turn its interval inside out. Kept as it is, (unknown start, invalid_at), retiring nothing.
            run.report.warn(
                f"fact {actor.text[:80]!r} ended at {actor.invalid_at.isoformat()}, before this episode, and "
                f"has no start date: it does not retire {existing.text[:80]!r}"
            )
            return actor
        actor = actor.model_copy(update={"valid_at": start})
    existing_after, actor_after = resolve_contradiction(existing, actor, episode.uuid, run.now)
    if existing_after != existing:
        changes.updated[existing.uuid] = existing_after
        if existing.uuid not in changes.invalidated:
            changes.invalidated.append(existing.uuid)
        run.event(FactInvalidated, fact_uuid=existing.uuid, by_fact_uuid=actor.uuid)
    return actor_after
