"""The episode's one resolve_episode call: its ambiguous entities and its new facts with candidates.

One call answers both (``prompts.resolve_episode``): each ambiguous entity against its own candidate
block, each new fact against its own. Facts beyond ``FactOptions.batch`` go to further calls of facts only
(run concurrently); an episode of chat holds fewer. Ids the model names that were not offered for that
item are ignored and reported; an item the reply leaves undecided (cut, unreadable) stays new (reported).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field

from ...episodes.verdicts import Verdict
from ...graph.model import Entity, Fact
from ...prompts import resolve_episode as rp
from ...prompts.runtime import run as run_prompt
from ..names.resolver import Question
from ..state import EpisodeRun, clip
from .drafts import DraftFact
from .retirements import restatements, retires_everything

WORD_FOR_WORD, RESTATED, NO_CANDIDATES = "word_for_word", "restated", "no_candidates"
MODEL, UNASKED = "resolve_call", "unasked"
"""What decided a new fact (``Decision.by``): the same ends, relation and words as a candidate; the
same meaning on the same two entities (``FactOptions.restated_similarity``); no candidate at all; the
resolve call; no call (``FactOptions.resolve`` off, or the reply gave no decision): new."""
RETIRE_ALL_GUARD, RESTATEMENT, RETIRE_OFF, IN_SCOPE = (
    "retire_all_guard",
    "restatement",
    "retire_off",
    "in_scope",
)
"""The checks on the resolve call's decisions, in the order they run: a decision retiring every candidate
shown (``FactOptions.retire_all_guard``), a retirement of a fact said again, a retirement with
``FactOptions.retire`` off, a pick no longer in scope once the names are decided."""


@dataclass
class Decision:
    """What a new fact does: it repeats ``duplicate_of``'s first (its episode becomes one more source),
    retires those it ``contradicts``; neither: it is new. ``by``: the step that decided (``MODEL``...);
    ``verdicts``: what the checks took out of the model's decision, in order."""

    duplicate_of: list[Fact] = field(default_factory=list)
    contradicts: list[Fact] = field(default_factory=list)
    by: str = UNASKED
    verdicts: list[Verdict] = field(default_factory=list)
    shown: tuple[str, ...] = ()
    """The candidates (fact uuids) the draft was compared with (the decision record's)."""


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
    call when there is nothing to ask or the options say not to (``FactOptions.resolve``): all new."""
    if not run.options.facts.resolve or (not questions and not asked):
        return Answers()
    size = max(1, run.options.facts.batch)
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
        episode=clip(run.episode.content, run.options.facts.clip_chars),
        entities=[_entity_question(eid, q, offered_entities[eid]) for eid, q in entity_blocks.items()],
        facts=[_fact_question(draft, offered_facts[draft.key]) for draft, _ in chunk],
    )
    answers = Answers(facts={key: Decision() for key in offered_facts})  # unanswered: new
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
            by=MODEL,
        )
        answers.facts[verdict.id] = _checked(run, drafts[verdict.id], said, len(asked))
    return answers


def _checked(run: EpisodeRun, fact: Fact, decision: Decision, shown: int) -> Decision:
    """The decision with the retirements the checks refuse taken out (``RETIRE_ALL_GUARD``, then
    ``RESTATEMENT``, then ``RETIRE_OFF``), each reported and kept as a verdict."""
    retired, verdicts = list(decision.contradicts), list(decision.verdicts)
    guard = run.options.facts.retire_all_guard
    said = fact.text[:80]
    if retired and retires_everything(retired, shown, guard):
        why = (
            f"resolve_episode retired all {shown} candidates shown for {said!r}; none retired "
            f"(a decision retiring every one of {guard} or more candidates is not applied: retire_all_guard)"
        )
        verdicts.append(Verdict(RETIRE_ALL_GUARD, fact.text, why, refused=False))
        run.report.warn(why)
        retired = []
    duplicates = list(decision.duplicate_of)
    for old in restatements(fact, retired):
        retired.remove(old)
        if not duplicates:
            duplicates.append(old)
        why = (
            f"resolve_episode retired {old.text[:80]!r} by {said!r}, which says the same; "
            "read as a duplicate, not retired"
        )
        verdicts.append(Verdict(RESTATEMENT, fact.text, why, refused=False))
        run.report.warn(why)
    if retired and not run.options.facts.retire:
        why = (
            f"resolve_episode asked {said!r} to retire {len(retired)} fact(s); none retired "
            "(IngestOptions.facts.retire is off)"
        )
        verdicts.append(Verdict(RETIRE_OFF, fact.text, why, refused=False))
        run.report.warn(why)
        retired = []
    return Decision(duplicates, retired, decision.by, verdicts)


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
