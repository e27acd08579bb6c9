"""The episode's one resolve_episode call: its ambiguous entities and its new facts with candidates.

One call answers both (``prompts.resolve_episode``): each ambiguous entity against its own candidate
block, each new fact against its own. Facts beyond ``fact_batch`` go to further calls of facts only
(run concurrently); an episode of chat holds fewer. Ids the model names that were not offered for that
item are ignored and reported; a reply that cannot be used keeps every entity and fact new (reported).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..errors import StructuredOutputError
from ..graph.model import Entity, Fact
from ..prompts import resolve_entity as re_
from ..prompts import resolve_episode as rp
from ..prompts import resolve_fact as rf
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
    """Ask the model about ``questions`` (entities) and ``asked`` (facts with their candidates)."""
    if not questions and not asked:
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
    try:
        result = await run_prompt(run.llm, rp.PROMPT, data)
    except StructuredOutputError as exc:
        run.report.warn(
            f"resolve_episode gave no usable reply ({exc}); {len(entity_blocks)} entit(ies) and "
            f"{len(offered_facts)} fact(s) kept as new"
        )
        return answers
    reply: rp.ResolveEpisodeOutput = result.value
    for entity in reply.entities:
        picked = _pick_entity(run, entity, entity_blocks, offered_entities)
        if picked is not None:
            answers.entities[entity_blocks[entity.id].norm] = picked
    drafts = {draft.key: draft.fact for draft, _ in chunk}
    for decision in reply.facts:
        asked = offered_facts.get(decision.id)
        if asked is None:
            run.report.warn(
                f"resolve_episode answered for fact id {decision.id!r}, which was not asked; ignored"
            )
            continue
        said = Decision(
            duplicate_of=_pick(run, asked, decision.duplicate_of, decision.id),
            contradicts=_pick(run, asked, decision.contradicts, decision.id),
        )
        answers.facts[decision.id] = _checked(run, drafts[decision.id], said, len(asked))
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
    return Decision(duplicate_of=duplicates, contradicts=retired)


def _entity_question(eid: str, question: Question, offered: dict[str, Entity]) -> rp.EntityQuestion:
    return rp.EntityQuestion(
        id=eid,
        name=question.surface,
        entity_type=question.label,
        candidates=[
            re_.EntityCandidate(
                id=cid,
                name=e.name,
                entity_type=e.labels[0] if e.labels else None,
                summary=clip(e.summary, 160),
            )
            for cid, e in offered.items()
        ],
    )


def _fact_question(draft: DraftFact, offered: dict[str, Fact]) -> rf.FactToResolve:
    return rf.FactToResolve(
        id=draft.key,
        fact=draft.fact.text,
        valid_at=_iso(draft.fact.valid_at),
        candidates=[
            rf.FactCandidate(id=cid, fact=c.text, valid_at=_iso(c.valid_at), invalid_at=_iso(c.invalid_at))
            for cid, c in offered.items()
        ],
    )


def _pick_entity(
    run: EpisodeRun,
    answer: rp.EntityDecision,
    blocks: dict[str, Question],
    offered: dict[str, dict[str, Entity]],
) -> tuple[Entity, str | None] | None:
    question = blocks.get(answer.id)
    if question is None:
        run.report.warn(f"resolve_episode answered for entity id {answer.id!r}, which was not asked; ignored")
        return None
    chosen = (answer.duplicate_of or "").strip()
    if chosen.casefold() in ("", "null", "none"):
        return None
    if chosen not in offered[answer.id]:
        run.report.warn(
            f"resolve_episode named candidate {chosen!r} for entity {question.surface!r}, "
            "which was not offered; ignored"
        )
        return None
    return offered[answer.id][chosen], (answer.name or "").strip() or None


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
