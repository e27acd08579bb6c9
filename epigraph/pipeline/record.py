"""An episode's decision record (``graph.decisions``): what its two rooms decided, gathered from what they
return, for the episode's one write (``EpisodeWrite.decisions``).

Nothing here decides anything: the names room's verdicts (refused, repaired) and resolutions
(``EntityResolver.resolved``), the facts room's verdicts (each line dropped, a date left unknown, a
retirement overruled), its drafts and their decisions (``SettledFacts``: what decided each, the
candidates shown) and the facts retired (``FactChanges.invalidated``) become steps, in that order.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from ..episodes.verdicts import Verdict
from ..graph import decisions as d
from ..prompts.extraction import ExtractedFact
from .dating import time_words
from .facts.drafts import DraftFact, outside_names
from .facts.resolve_call import Decision
from .facts.settle import SettledFacts
from .names.resolver import EntityResolver
from .state import EpisodeRun


def decision_record(
    run: EpisodeRun, resolver: EntityResolver, lines: Sequence[ExtractedFact], settled: SettledFacts
) -> d.DecisionRecord | None:
    """The episode's record (``None`` when ``RecordOptions.keep`` is off)."""
    options = run.options.record
    if not options.keep:
        return None
    steps = [*_name_steps(resolver), *_fact_steps(lines, settled), *_retirements(settled)]
    texts = (
        tuple(json.dumps(line.model_dump(), ensure_ascii=False) for line in lines) if options.texts else ()
    )
    episode = run.episode
    return d.DecisionRecord(
        group_id=episode.group_id,
        episode_uuid=episode.uuid,
        created_at=run.now,
        steps=tuple(steps),
        texts=texts,
    )


def _name_steps(resolver: EntityResolver) -> list[d.Step]:
    steps = [_verdict_step(d.NAME, v) for v in resolver.verdicts]
    for resolved in resolver.resolved:
        steps.append(
            d.Step(
                stage=d.NAME,
                act=resolved.outcome,
                subject=resolved.surface,
                by=resolved.outcome,
                ids=(resolved.entity_uuid,),
                shown=resolved.shown,
            )
        )
    return steps


def _verdict_step(stage: str, verdict: Verdict, line: int = 0) -> d.Step:
    """A gate's verdict: refused (a name) or dropped (a fact line); else a change (repaired)."""
    act = (d.REFUSED if stage == d.NAME else d.DROPPED) if verdict.refused else d.REPAIRED
    return d.Step(
        stage=stage, act=act, subject=verdict.subject, by=verdict.gate, why=verdict.why, line=line,
        became=verdict.became,
    )  # fmt: skip


def _fact_steps(lines: Sequence[ExtractedFact], settled: SettledFacts) -> list[d.Step]:
    numbers: dict[str, int] = {}
    for number, line in enumerate(lines, start=1):
        numbers.setdefault(line.fact, number)
    steps = []
    for verdict in settled.verdicts:
        if verdict.gate in _DECISION_CHECKS:
            steps.append(d.Step(stage=d.FACT, act=d.OVERRULED, subject=verdict.subject, by=verdict.gate,
                                why=verdict.why))  # fmt: skip
        else:
            steps.append(_verdict_step(d.FACT, verdict, numbers.get(verdict.subject, 0)))
    for draft in settled.drafts:
        decision = settled.decisions.get(draft.key, Decision())
        said = lines[draft.line - 1] if 0 < draft.line <= len(lines) else None
        steps.append(_draft_step(draft, decision, said))
    return steps


_DECISION_CHECKS = frozenset({"retire_all_guard", "restatement", "retire_off", "in_scope"})
"""The checks on the resolve call's decisions (``resolve_call``): what they take out is ``overruled``."""


def _draft_step(draft: DraftFact, decision: Decision, line: ExtractedFact | None) -> d.Step:
    fact = draft.fact
    restated = bool(decision.duplicate_of)
    into = decision.duplicate_of[0].uuid if restated else fact.uuid
    dated = ""
    if fact.valid_at is not None or fact.invalid_at is not None:
        dated = time_words(outside_names(line) if line is not None else fact.text)
    return d.Step(
        stage=d.FACT,
        act=d.RESTATED if restated else d.NEW,
        subject=fact.text,
        by=decision.by,
        ids=(into, *(f.uuid for f in decision.contradicts)),
        shown=decision.shown,
        line=draft.line,
        dated=dated,
    )


def _retirements(settled: SettledFacts) -> list[d.Step]:
    changes, steps = settled.changes, []
    by_fact = _deciders(settled)
    for uuid in changes.invalidated:
        retired = changes.updated[uuid]
        cause = retired.invalidated_by.fact_uuid if retired.invalidated_by is not None else ""
        steps.append(
            d.Step(
                stage=d.RETIRE,
                act=d.RETIRED,
                subject=retired.text,
                by=by_fact.get(cause, ""),
                ids=(uuid, *([cause] if cause else [])),
            )
        )
    return steps


def _deciders(settled: SettledFacts) -> dict[str, str]:
    """Fact uuid (as written) -> what decided the draft that became it."""
    out: dict[str, str] = {}
    for draft in settled.drafts:
        decision = settled.decisions.get(draft.key, Decision())
        into = decision.duplicate_of[0].uuid if decision.duplicate_of else draft.fact.uuid
        out[into] = decision.by
    return out
