"""One episode, start to finish: the algorithm of DESIGN.md §5 (the episode was saved ``pending`` first).

Separate mode, with the LLM round trips on the critical path numbered::

    context -> (1) extract_entities, streamed: each line starts its exact/alias + BM25 lookups
            -> (2) extract_facts  ||  one name-embedding batch, vector candidates (exact merges settled)
            -> map fact endpoints (ambiguous entities provisionally new), check types, date
            -> one fact-embedding batch, fact candidates ranked by meaning, then (3) ONE
               resolve_episode call for the ambiguous entities and the facts (none when nothing is
               ambiguous and no fact has a candidate)
            -> re-point facts to merged entities, apply contradictions (graph.temporal)
            -> (4) summarize_entities (only when needed)
            -> the ONE write of everything it wants (``EpisodeOutcome``), with its decision record
               (``record``: what each stage decided), returned with its result

Combined mode replaces (1) and (2)'s extract_facts by one extract_combined call. Nothing is written here:
the queue's runner (``ingestion.runner``) stamps the episode ``done`` with its report and performs the
write, or saves it ``failed`` when this raised, so any exception leaves the graph as it was.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable
from datetime import datetime, timedelta
from typing import Any, TypeVar

from ..concurrency import gather
from ..episodes.events import EpisodeResult, SummaryUpdated
from ..episodes.outcome import EpisodeOutcome
from ..episodes.verdicts import Verdict
from ..graph.decisions import DecisionRecord
from ..graph.model import Entity, Fact, Mention, speaker_of
from ..graph.store import EpisodeWrite
from ..prompts import extract_combined as cp
from ..prompts import extract_entities as ep
from ..prompts import extract_facts as fp
from ..prompts.base import Prompt
from ..prompts.extraction import ExtractedFact, ExtractionInput
from ..prompts.runtime import PromptResult, stream
from .context import context_block, context_text, previous_episodes
from .facts.resolution import FactChanges
from .facts.settle import settle_facts
from .names.reply import Reply
from .names.resolver import EntityResolver
from .record import decision_record
from .state import EpisodeRun
from .summaries import current_facts, summarize

T = TypeVar("T")


async def ingest_episode(run: EpisodeRun) -> EpisodeOutcome:
    """Run every stage; returns the write the episode wants and its result (nothing is written)."""
    entity_context, fact_context = await _context(run)
    resolver = EntityResolver(run, context=entity_context)
    try:
        if run.prefetched is not None and run.prefetched.delivered:
            lines = _take_prefetched(run, resolver)
            await _timed(run, "resolve_entities", resolver.finish())
        elif run.options.mode in ("combined", "bulk"):
            _window_failed(run)
            combined = cp.ExtractCombinedInput(**_inputs(run, entity_context))
            lines = await _extract(run, cp.PROMPT, combined, Reply(run, resolver))
            await _timed(run, "resolve_entities", resolver.finish())
        else:
            names = ep.ExtractEntitiesInput(**_inputs(run, entity_context))
            await _extract(run, ep.PROMPT, names, Reply(run, resolver))
            lines, _ = await gather(
                [
                    _extract_facts(run, resolver, resolver.names, fact_context),
                    _timed(run, "resolve_entities", resolver.finish()),
                ]
            )
    finally:
        resolver.cancel()
    settled = await settle_facts(run, resolver, lines)
    changes = settled.changes
    entities, wanting = await _timed(run, "summaries", _summaries(run, resolver, changes))
    verdicts = (*resolver.verdicts, *settled.verdicts)
    started = time.perf_counter()
    record = decision_record(run, resolver, lines, settled)
    run.report.stage("decision_record", started)
    return _outcome(run, resolver, changes, entities, wanting, verdicts, record)


async def _timed(run: EpisodeRun, stage: str, step: Awaitable[T]) -> T:
    started = time.perf_counter()
    try:
        return await step
    finally:
        run.report.stage(stage, started)


async def _context(run: EpisodeRun) -> tuple[str, str]:
    started = time.perf_counter()
    options = run.options
    previous = await previous_episodes(run.store, run.episode, options.context.episodes)
    texts = (
        context_text(previous, options.context.tokens),
        context_text(previous, options.context.fact_tokens),
    )
    run.report.stage("context", started)
    return texts


def _absorb(run: EpisodeRun, result: PromptResult[Any]) -> None:
    """Partial output is kept; what was lost is reported. A broken stream fails the episode."""
    result.raise_for_error()
    if result.dropped:
        run.report.dropped_lines += len(result.dropped)
        run.report.warn(f"{result.prompt_name}: {len(result.dropped)} invalid line(s) dropped")
    if result.truncated:
        run.report.truncated = True
        run.report.warn(
            f"{result.prompt_name}: reply {_cut_why(result)}; kept {len(result.items)} valid line(s)"
        )


def _cut_why(result: PromptResult[Any]) -> str:
    return f"stopped ({result.stopped})" if result.stopped else "cut at the token limit"


def _inputs(run: EpisodeRun, context: str) -> dict[str, Any]:
    """The fields every extraction prompt takes: the episode (speaker and text), its context window and
    the declared types."""
    episode = run.episode
    fields = {
        "context": context_block(context),
        "sentences_from_message": run.options.facts.sentences_from_message,
        **run.options.ontology.prompt_fields(),
    }
    return ExtractionInput.of(episode.content, speaker_of(episode), **fields)


async def _extract(run: EpisodeRun, prompt: Prompt[Any, Any], data: Any, reply: Reply) -> list[ExtractedFact]:
    """One extraction call, whichever prompt: its lines taken into ``reply`` as they stream, settled when
    it ends, timed as the prompt's stage; the fact lines returned."""
    started = time.perf_counter()
    lines = stream(run.llm, prompt, data)
    async for line in lines:
        reply.take(line)
    facts = reply.settle()
    _absorb(run, lines.result)
    run.report.stage(prompt.name, started)
    return facts


async def _extract_facts(
    run: EpisodeRun, resolver: EntityResolver, names: list[str], context: str
) -> list[ExtractedFact]:
    if len(names) < 2:
        return []  # a fact needs two entities: no call for "Bye!" or a lone speaker
    prompt = fp.prompt_for(run.options.facts.line_format)  # brackets, or numbered names and free sentences
    data = prompt.input_model(**_inputs(run, context), entities=names)
    return await _extract(run, prompt, data, Reply(run, resolver, known=names))


def _window_failed(run: EpisodeRun) -> None:
    """Bulk mode, the first turn of a window whose call failed: the failure goes into its report."""
    failed = run.prefetched.result if run.prefetched is not None else None
    if failed is not None:
        why = (
            str(failed.error)
            if failed.error is not None
            else f"reply {_cut_why(failed)} before its first line"
        )
        run.report.warn(f"extract_window failed ({why}); the window's turns extracted one by one")


def _take_prefetched(run: EpisodeRun, resolver: EntityResolver) -> list[ExtractedFact]:
    """Bulk mode: this turn's lines from its window's call, taken as its own extraction's would be."""
    prefetched = run.prefetched
    assert prefetched is not None
    if prefetched.result is not None:  # the window's first turn carries the call and reports on it
        _absorb(run, prefetched.result)
    reply = Reply(run, resolver)
    for line in prefetched.lines:
        reply.take(line)
    return reply.settle()


async def _summaries(
    run: EpisodeRun, resolver: EntityResolver, changes: FactChanges
) -> tuple[dict[str, Entity], set[str]]:
    """Touched entities with summaries from their believed facts (this episode's changes included)."""
    entities = dict(resolver.entities)
    pending: dict[str, Fact] = {**changes.updated, **changes.new}
    touched = set(resolver.new) | resolver.changed
    touched |= {u for f in pending.values() for u in (f.source_uuid, f.target_uuid)}
    missing = [u for u in touched if u not in entities]
    entities.update({e.uuid: e for e in await run.store.get_entities(run.group_id, missing)})
    ordered = [entities[u] for u in sorted(touched) if u in entities]
    facts = await current_facts(run.store, run.group_id, [e.uuid for e in ordered], run.now, pending)
    use_model = run.options.summaries.mode == "episode"
    summaries, wanting = await summarize(
        run.llm, run.options.summaries, run.report, [(e, facts[e.uuid]) for e in ordered], use_model=use_model
    )
    updated: dict[str, Entity] = {}
    for entity in ordered:
        summary = summaries.get(entity.uuid, entity.summary)
        changed = summary != entity.summary
        if changed:
            entity = entity.model_copy(update={"summary": summary})
            run.event(SummaryUpdated, entity_uuid=entity.uuid)
        if changed or entity.uuid in resolver.new or entity.uuid in resolver.changed:
            updated[entity.uuid] = entity
    return updated, wanting


def _retention(run: EpisodeRun) -> datetime | None:
    """Before when the group's decision records are forgotten with this write (``RecordOptions.days``)."""
    days = run.options.record.days
    return None if days is None else run.now - timedelta(days=days)


def _outcome(
    run: EpisodeRun,
    resolver: EntityResolver,
    changes: FactChanges,
    entities: dict[str, Entity],
    wanting: set[str],
    verdicts: tuple[Verdict, ...],
    record: DecisionRecord | None,
) -> EpisodeOutcome:
    """The episode's one write and its result. In ``batch`` summary mode the entities still wanting a
    model summary are marked owed with it, so they are paid even if the run dies before its batch ends."""
    mentioned = dict.fromkeys([*resolver.by_surface.values(), *resolver.entities])
    episode, group_id = run.episode, run.group_id
    write = EpisodeWrite(
        episode=episode,
        entities=list(entities.values()),
        facts=[*changes.updated.values(), *changes.new.values()],
        mentions=[Mention(group_id=group_id, episode_uuid=episode.uuid, entity_uuid=u) for u in mentioned],
        owed_summaries=sorted(wanting) if run.options.summaries.mode == "batch" else (),
        decisions=record,
        forget_decisions_before=_retention(run),
    )
    new_and_restated = [
        *changes.new.values(),
        *(f for u, f in changes.updated.items() if u not in changes.invalidated),
    ]
    result = EpisodeResult(
        episode=episode,
        entities=list(entities.values()),
        facts=new_and_restated,
        invalidated=[changes.updated[u] for u in changes.invalidated],
    )
    return EpisodeOutcome(write, result, verdicts)
