"""Summaries regenerated outside an episode's run: at the end of a group (``summary_mode="batch"``, and
the summaries an earlier batch still owes) or after a removal. Computed here, written by the queue
(``ingestion.batch_end``), which holds the group's lock."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from ..embed import Embedder
from ..episodes.reports import merge_reports
from ..graph.model import Entity, Episode, IngestReport
from ..graph.roles import optional
from ..graph.store import EpisodeWrite, GraphReads, ViewUpkeep
from ..prompts.protocol import LLM
from .metering import MeteredEmbedder, MeteredLLM, ReportBuilder
from .options import IngestOptions
from .summaries import current_facts, summarize

log = logging.getLogger("epigraph.ingest")


@dataclass(frozen=True)
class Refresh:
    """A refresh computed: the entities whose summary changed, what it cost, and the one write it wants
    (None: nothing to write)."""

    entities: list[Entity] = field(default_factory=list)
    report: IngestReport = field(default_factory=IngestReport)
    write: EpisodeWrite | None = None


async def owed_summaries(store: GraphReads, group_id: str) -> list[str]:
    """The entities whose summaries the group owes; none on a store without the ``ViewUpkeep`` role
    (its ``write_episode`` keeps no marks)."""
    upkeep = optional(store, ViewUpkeep)
    return [] if upkeep is None else await upkeep.owed_summaries(group_id)


async def refresh_summaries(
    store: GraphReads,
    llm: LLM,
    embedder: Embedder,
    options: IngestOptions,
    group_id: str,
    uuids: list[str],
    *,
    charged_to: Episode | None,
) -> Refresh:
    """Model summaries for ``uuids`` (composed ones for small entities), and the one write that stores
    them: it re-upserts ``charged_to`` with the refresh's cost added to its report, and clears the owed
    marks of those of them the group owes (``EpisodeWrite.paid_summaries``). Returns the entities whose
    summary changed, that cost and the write.

    Without ``charged_to`` (a removal) the write carries any existing episode of the group (the store
    writes per episode), and is wanted only when a summary changed or a mark is paid. A group left with
    no episode (its entities kept by facts added by hand) has nothing to carry it: no write, and their
    summaries change with the next episode that touches them (logged)."""
    metered = MeteredLLM(llm)
    report = ReportBuilder(metered, MeteredEmbedder(embedder))
    entities = await store.get_entities(group_id, uuids)
    if not entities:
        return Refresh(report=report.build())
    facts = await current_facts(store, group_id, [e.uuid for e in entities], options.clock())
    use_model = options.summaries.mode != "off"
    summaries, _ = await summarize(
        metered, options.summaries, report, [(e, facts[e.uuid]) for e in entities], use_model=use_model
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
        return Refresh(report=built)
    else:
        charged_to = await _any_episode(store, group_id)
        if charged_to is None:
            unwritten = len({e.uuid for e in updated} | set(paid))
            log.warning(
                "group %s has no episode left to write %d refreshed summaries with; they change with the "
                "next episode that touches them", group_id, unwritten,
            )  # fmt: skip
            return Refresh(report=built)
    return Refresh(updated, built, EpisodeWrite(episode=charged_to, entities=updated, paid_summaries=paid))


async def _any_episode(store: GraphReads, group_id: str) -> Episode | None:
    found = await store.episodes(group_id, limit=1)
    return found[0] if found else None
