"""Summaries regenerated outside an episode's run: at the end of a group (``summary_mode="batch"``, and
the summaries an earlier batch still owes) or after a removal. The caller holds the group's lock."""

from __future__ import annotations

import logging

from ..embed import Embedder
from ..episodes.reports import merge_reports
from ..graph.model import Entity, Episode, IngestReport
from ..graph.roles import optional
from ..graph.store import EpisodeWrite, GraphReads, IngestStore, ViewUpkeep
from ..prompts.protocol import LLM
from .metering import MeteredEmbedder, MeteredLLM, ReportBuilder
from .options import IngestOptions
from .summaries import current_facts, summarize

log = logging.getLogger("epigraph.ingest")


async def owed_summaries(store: IngestStore, group_id: str) -> list[str]:
    """The entities whose summaries the group owes; none on a store without the ``ViewUpkeep`` role
    (its ``write_episode`` keeps no marks)."""
    upkeep = optional(store, ViewUpkeep)
    return [] if upkeep is None else await upkeep.owed_summaries(group_id)


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
    re-upserts ``charged_to`` with the refresh's cost added to its report, and clears the owed marks of
    those of them the group owes (``EpisodeWrite.paid_summaries``). Returns the entities whose summary
    changed and that cost.

    Without ``charged_to`` (a removal) the write carries any existing episode of the group (the store
    writes per episode), and happens only when a summary changed or a mark is paid. A group left with no
    episode (its entities kept by facts added by hand) has nothing to carry it: nothing is written, and
    their summaries change with the next episode that touches them (logged)."""
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
    owed = set(await owed_summaries(store, group_id))
    paid = [e.uuid for e in entities if e.uuid in owed]
    if charged_to is not None:
        charged_to = charged_to.model_copy(update={"report": merge_reports(charged_to.report, built)})
    elif not updated and not paid:
        return [], built
    else:
        charged_to = await _any_episode(store, group_id)
        if charged_to is None:
            unwritten = len({e.uuid for e in updated} | set(paid))
            log.warning(
                "group %s has no episode left to write %d refreshed summaries with; they change with the "
                "next episode that touches them", group_id, unwritten,
            )  # fmt: skip
            return [], built
    await store.write_episode(EpisodeWrite(episode=charged_to, entities=updated, paid_summaries=paid))
    return updated, built


async def _any_episode(store: GraphReads, group_id: str) -> Episode | None:
    found = await store.episodes(group_id, limit=1)
    return found[0] if found else None
