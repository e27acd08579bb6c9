"""Fact resolution: duplicates extend provenance, contradictions retire facts, scoped structurally.

Candidates of a new fact ``s -REL-> t`` are the facts the graph still believes (not expired) that

- join the same endpoint pair, in either direction, whatever their relation; or
- have the same source ``s`` (the subject) and a compatible relation (equal, or one family such as
  LIVES_IN / MOVED_TO: see ``IngestOptions.relation_families``).

Never group-wide: a fact that shares neither endpoint can never be a candidate, so it can never be
retired by this fact. Decisions:

- same endpoints, same relation and the same normalized sentence: a duplicate, without a model;
- no candidates: new, without a model;
- otherwise resolve_fact, a few facts per call, each with its own candidate ids; ids that were not
  offered for that fact are ignored and reported.

Contradictions are applied by ``graph.temporal.resolve_contradiction`` (ties in time go to the later
statement, so within one session a later turn retires an earlier one) and record ``invalidated_by``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..errors import StructuredOutputError
from ..graph.model import Fact
from ..graph.store import EVERYTHING, FactFilter
from ..graph.temporal import effective_valid_at, resolve_contradiction
from ..prompts import resolve_fact as rp
from ..prompts.runtime import run as run_prompt
from .events import FactInvalidated
from .facts import DraftFact
from .names import compatible_relations, normalize_text
from .state import EpisodeRun

_AROUND_LIMIT = 100


@dataclass
class Decision:
    duplicate_of: list[Fact] = field(default_factory=list)
    contradicts: list[Fact] = field(default_factory=list)


@dataclass
class FactChanges:
    """What the facts of one episode change in the graph."""

    new: dict[str, Fact] = field(default_factory=dict)
    updated: dict[str, Fact] = field(default_factory=dict)
    """Existing facts as they must be written: provenance extended and/or retired."""
    invalidated: list[str] = field(default_factory=list)

    def current(self, fact: Fact) -> Fact:
        return self.updated.get(fact.uuid, fact)


async def scoped_candidates(run: EpisodeRun, fact: Fact) -> list[Fact]:
    """The structurally scoped candidates of ``fact``, newest first, at most ``max_fact_candidates``."""
    store, group = run.store, run.group_id
    pair = await store.facts_between(group, fact.source_uuid, fact.target_uuid, FactFilter(time=EVERYTHING))
    related = compatible_relations(fact.relation, run.options.relation_families)
    flt = FactFilter(time=EVERYTHING, relations=tuple(sorted(related)))
    around = await store.facts_around(group, [fact.source_uuid], flt, limit=_AROUND_LIMIT)
    around = [f for f in around if f.source_uuid == fact.source_uuid]
    unique = {f.uuid: f for f in (*pair, *around) if f.expired_at is None and f.uuid != fact.uuid}
    ranked = sorted(unique.values(), key=lambda f: f.created_at, reverse=True)
    return ranked[: run.options.max_fact_candidates]


def deterministic_duplicate(fact: Fact, candidates: Sequence[Fact]) -> Fact | None:
    text = normalize_text(fact.text)
    for c in candidates:
        same_ends = (c.source_uuid, c.target_uuid) == (fact.source_uuid, fact.target_uuid)
        if same_ends and c.relation == fact.relation and normalize_text(c.text) == text:
            return c
    return None


async def decide(run: EpisodeRun, drafts: Sequence[DraftFact]) -> dict[str, Decision]:
    """A decision per draft key: deterministic where possible, else batched resolve_fact calls."""
    candidates = await asyncio.gather(*(scoped_candidates(run, d.fact) for d in drafts))
    decisions: dict[str, Decision] = {}
    ask: list[tuple[DraftFact, list[Fact]]] = []
    for draft, found in zip(drafts, candidates, strict=True):
        duplicate = deterministic_duplicate(draft.fact, found)
        if duplicate is not None:
            decisions[draft.key] = Decision(duplicate_of=[duplicate])
        elif not found:
            decisions[draft.key] = Decision()
        else:
            ask.append((draft, found))
    size = max(1, run.options.fact_batch)
    chunks = [ask[i : i + size] for i in range(0, len(ask), size)]
    for answered in await asyncio.gather(*(_ask(run, chunk) for chunk in chunks)):
        decisions.update(answered)
    return decisions


async def _ask(run: EpisodeRun, chunk: Sequence[tuple[DraftFact, list[Fact]]]) -> dict[str, Decision]:
    offered: dict[str, dict[str, Fact]] = {}
    items = []
    for draft, found in chunk:
        block = {f"{draft.key}.{j + 1}": c for j, c in enumerate(found)}
        offered[draft.key] = block
        items.append(
            rp.FactToResolve(
                id=draft.key,
                fact=draft.fact.text,
                valid_at=_iso(draft.fact.valid_at),
                candidates=[
                    rp.FactCandidate(
                        id=cid, fact=c.text, valid_at=_iso(c.valid_at), invalid_at=_iso(c.invalid_at)
                    )
                    for cid, c in block.items()
                ],
            )
        )
    decisions = {key: Decision() for key in offered}
    try:
        result = await run_prompt(run.llm, rp.PROMPT, rp.ResolveFactInput(facts=items))
    except StructuredOutputError as exc:
        run.report.warn(f"resolve_fact gave no usable reply ({exc}); {len(items)} fact(s) kept as new")
        return decisions
    answer: rp.ResolveFactOutput = result.value
    for decision in answer.decisions:
        asked = offered.get(decision.id)
        if asked is None:
            run.report.warn(
                f"resolve_fact answered for fact id {decision.id!r}, which was not asked; ignored"
            )
            continue
        decisions[decision.id] = Decision(
            duplicate_of=_pick(run, asked, decision.duplicate_of, decision.id),
            contradicts=_pick(run, asked, decision.contradicts, decision.id),
        )
    return decisions


def _pick(run: EpisodeRun, block: dict[str, Fact], ids: Sequence[str], fact_id: str) -> list[Fact]:
    picked: list[Fact] = []
    for cid in dict.fromkeys(str(i).strip() for i in ids):
        if cid in block:
            picked.append(block[cid])
        else:
            run.report.warn(
                f"resolve_fact named candidate {cid!r} for fact {fact_id}, which was not offered; ignored"
            )
    return picked


def apply(run: EpisodeRun, drafts: Sequence[DraftFact], decisions: dict[str, Decision]) -> FactChanges:
    """Turn decisions into writes: new facts, provenance extensions, retirements (in draft order)."""
    changes = FactChanges()
    for draft in drafts:
        decision = decisions.get(draft.key, Decision())
        if decision.duplicate_of:
            kept = changes.current(decision.duplicate_of[0])
            if run.episode.uuid not in kept.episodes:
                kept = kept.model_copy(update={"episodes": [*kept.episodes, run.episode.uuid]})
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


def _iso(value: object) -> str | None:
    return None if value is None else value.isoformat()  # type: ignore[attr-defined]
