"""Summaries regenerated outside an episode's run: at the end of a group (``summary_mode="batch"``, and
the summaries an earlier batch still owes) or after a removal. The caller holds the group's lock."""

from __future__ import annotations

from ..embed import Embedder
from ..graph.model import Entity, Episode, IngestReport
from ..graph.store import EpisodeWrite, GraphReads, IngestStore
from ..ingestion.reports import merge_reports
from ..prompts.protocol import LLM
from .metering import MeteredEmbedder, MeteredLLM, ReportBuilder
from .options import IngestOptions
from .summaries import current_facts, summarize


async def refresh_summaries(
    store: IngestStore,
    llm: LLM,
    embedder: Embedder,
    options: IngestOptions,
    group_id: str,
    uuids: list[str],
    *,
    charged_to: Episode | None,
) -> tuple[list[Entity], IngestReport]:
    """Model summaries for ``uuids`` (composed ones for small entities), written in one write that
    re-upserts ``charged_to`` (an existing episode of the group, any when None: the store writes per
    episode) with the refresh's cost added to its report, and clears their owed marks
    (``EpisodeWrite.paid_summaries``). Returns the entities whose summary changed and that cost."""
    metered = MeteredLLM(llm)
    report = ReportBuilder(metered, MeteredEmbedder(embedder))
    entities = await store.get_entities(group_id, uuids)
    if not entities:
        return [], report.build()
    facts = await current_facts(store, group_id, [e.uuid for e in entities], options.clock())
    use_model = options.summary_mode != "off"
    summaries, _ = await summarize(
        metered, options, report, [(e, facts[e.uuid]) for e in entities], use_model=use_model
    )
    updated = [
        e.model_copy(update={"summary": summaries[e.uuid]})
        for e in entities
        if e.uuid in summaries and summaries[e.uuid] != e.summary
    ]
    built = report.build()
    if charged_to is None:
        charged_to = await _any_episode(store, group_id)
    else:
        charged_to = charged_to.model_copy(update={"report": merge_reports(charged_to.report, built)})
    paid = [e.uuid for e in entities]
    await store.write_episode(EpisodeWrite(episode=charged_to, entities=updated, paid_summaries=paid))
    return updated, built


async def _any_episode(store: GraphReads, group_id: str) -> Episode:
    found = await store.episodes(group_id, limit=1)
    if not found:
        raise LookupError(f"group {group_id!r} has entities but no episode to write them with")
    return found[0]
