"""The episode's one resolve_episode call: its ambiguous entities and its new facts with candidates.

One call answers both (``prompts.resolve_episode``): each ambiguous entity against its own candidate
block, each new fact against its own. Facts beyond ``fact_batch`` go to further calls of facts only
(run concurrently); an episode of chat holds fewer. Ids the model names that were not offered for that
item are ignored and reported; an item the reply leaves undecided (cut, unreadable) stays new (reported).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..graph.model import Entity, Fact
from ..prompts import resolve_episode as rp
from ..prompts.runtime import run as run_prompt
from .entities import Question
from .facts import DraftFact
from .retirements import restatements, retires_everything
from .state import EpisodeRun, clip


@dataclass
class Decision:
    duplicate_of: list[Fact] = field(default_factory=list)
    contradicts: list[Fact] = field(default_factory=list)


@dataclass
class Answers:
    facts: dict[str, Decision] = field(default_factory=dict)
    """draft key -> decision"""
    entities: dict[str, tuple[Entity, str | None]] = field(default_factory=dict)
    """normalized name -> (the candidate it is, a better name); entities not listed stay new"""


async def resolve_episode(
    run: EpisodeRun, questions: Sequence[Question], asked: Sequence[tuple[DraftFact, list[Fact]]]
) -> Answers:
    """Ask the model about ``questions`` (entities) and ``asked`` (facts with their candidates); no
    call when there is nothing to ask or the options say not to (``IngestOptions.resolve``): all new."""
    if not run.options.resolve or (not questions and not asked):
        return Answers()
    size = max(1, run.options.fact_batch)
    chunks = [list(asked[i : i + size]) for i in range(0, len(asked), size)] or [[]]
    answers = Answers()
    calls = [_call(run, questions if i == 0 else (), chunk) for i, chunk in enumerate(chunks)]
    for answered in await asyncio.gather(*calls):
        answers.facts.update(answered.facts)
        answers.entities.update(answered.entities)
    return answers


async def _call(
    run: EpisodeRun, questions: Sequence[Question], chunk: Sequence[tuple[DraftFact, list[Fact]]]
) -> Answers:
    entity_blocks = {f"E{i + 1}": q for i, q in enumerate(questions)}
    offered_entities = {
        eid: {f"{eid}.{j + 1}": c for j, c in enumerate(q.candidates)} for eid, q in entity_blocks.items()
    }
    offered_facts = {
        draft.key: {f"{draft.key}.{j + 1}": c for j, c in enumerate(found)} for draft, found in chunk
    }
    data = rp.ResolveEpisodeInput(
        episode=clip(run.episode.content, run.options.clip_chars),
        entities=[_entity_question(eid, q, offered_entities[eid]) for eid, q in entity_blocks.items()],
        facts=[_fact_question(draft, offered_facts[draft.key]) for draft, _ in chunk],
    )
    answers = Answers(facts={key: Decision() for key in offered_facts})
    result = await run_prompt(run.llm, rp.PROMPT, data)
    for dropped in result.dropped:
        run.report.warn(f"resolve_episode: line {dropped.line_no} unusable ({dropped.reason}); ignored")
    answered = {v.id for v in result.items}
    missing = [i for i in [*entity_blocks, *offered_facts] if i not in answered]
    if missing:
        run.report.warn(f"resolve_episode gave no decision for {', '.join(missing)}; kept as new")
    drafts = {draft.key: draft.fact for draft, _ in chunk}
    for verdict in result.items:
        if isinstance(verdict, rp.EntityVerdict):
            picked = _pick_entity(run, verdict, entity_blocks, offered_entities)
            if picked is not None:
                answers.entities[entity_blocks[verdict.id].norm] = picked
            continue
        asked = offered_facts.get(verdict.id)
        if asked is None:
            run.report.warn(
                f"resolve_episode answered for fact id {verdict.id!r}, which was not asked; ignored"
            )
            continue
        said = Decision(
            duplicate_of=_pick(run, asked, verdict.duplicate_of, verdict.id),
            contradicts=_pick(run, asked, verdict.contradicts, verdict.id),
        )
        answers.facts[verdict.id] = _checked(run, drafts[verdict.id], said, len(asked))
    return answers


def _checked(run: EpisodeRun, fact: Fact, decision: Decision, shown: int) -> Decision:
    """The decision with the retirements ``retirements`` refuses taken out (each reported)."""
    retired = list(decision.contradicts)
    guard = run.options.retire_all_guard
    if retired and retires_everything(retired, shown, guard):
        run.report.warn(
            f"resolve_episode retired all {shown} candidates shown for {fact.text[:80]!r}; none retired "
            f"(a decision retiring every one of {guard} or more candidates is not applied: retire_all_guard)"
        )
        retired = []
    duplicates = list(decision.duplicate_of)
    for old in restatements(fact, retired):
        retired.remove(old)
        if not duplicates:
            duplicates.append(old)
        run.report.warn(
            f"resolve_episode retired {old.text[:80]!r} by {fact.text[:80]!r}, which says the same; "
            "read as a duplicate, not retired"
        )
    if retired and not run.options.retire:
        run.report.warn(
            f"resolve_episode asked {fact.text[:80]!r} to retire {len(retired)} fact(s); none retired "
            "(IngestOptions.retire is off)"
        )
        retired = []
    return Decision(duplicate_of=duplicates, contradicts=retired)


def _entity_question(eid: str, question: Question, offered: dict[str, Entity]) -> rp.EntityQuestion:
    return rp.EntityQuestion(
        id=eid,
        name=question.surface,
        entity_type=question.label,
        candidates=[
            rp.EntityCandidate(
                id=cid,
                name=e.name,
                entity_type=e.labels[0] if e.labels else None,
                summary=clip(e.summary, 160),
            )
            for cid, e in offered.items()
        ],
    )


def _fact_question(draft: DraftFact, offered: dict[str, Fact]) -> rp.FactToResolve:
    return rp.FactToResolve(
        id=draft.key,
        fact=draft.fact.text,
        valid_at=_iso(draft.fact.valid_at),
        candidates=[
            rp.FactCandidate(id=cid, fact=c.text, valid_at=_iso(c.valid_at), invalid_at=_iso(c.invalid_at))
            for cid, c in offered.items()
        ],
    )


def _pick_entity(
    run: EpisodeRun,
    verdict: rp.EntityVerdict,
    blocks: dict[str, Question],
    offered: dict[str, dict[str, Entity]],
) -> tuple[Entity, str | None] | None:
    question = blocks.get(verdict.id)
    if question is None:
        run.report.warn(
            f"resolve_episode answered for entity id {verdict.id!r}, which was not asked; ignored"
        )
        return None
    if verdict.same_as is None:
        return None
    if verdict.same_as not in offered[verdict.id]:
        run.report.warn(
            f"resolve_episode named candidate {verdict.same_as!r} for entity {question.surface!r}, "
            "which was not offered; ignored"
        )
        return None
    return offered[verdict.id][verdict.same_as], None


def _pick(run: EpisodeRun, block: dict[str, Fact], ids: Sequence[str], fact_id: str) -> list[Fact]:
    picked: list[Fact] = []
    for cid in dict.fromkeys(str(i).strip() for i in ids):
        if cid in block:
            picked.append(block[cid])
        else:
            run.report.warn(
                f"resolve_episode named candidate {cid!r} for fact {fact_id}, which was not offered; ignored"
            )
    return picked


def _iso(value: object) -> str | None:
    return None if value is None else value.isoformat()  # type: ignore[attr-defined]
