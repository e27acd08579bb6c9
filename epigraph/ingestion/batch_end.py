"""The end of a batch of the ingestion queue: the entity summaries a group owes, paid in one call, and the
after-batch work (:class:`AfterBatch`: conversation summaries, communities) over the episodes that ran.

A ``batch`` episode's write marks the entities it left wanting a model summary
(``EpisodeWrite.owed_summaries``), so a run killed before its batch ends leaves them to the next run;
:meth:`BatchEnd.pay_summaries` writes them, under the group's lock, with their marks cleared. The
``Ingestor`` ends every batch here (``ingestion/ingestor.py``: which doors end one, and when).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Iterable, Sequence
from dataclasses import replace
from typing import Protocol

from ..episodes.events import EpisodeResult, EpisodeUpdated, ProgressEvent, SummaryUpdated
from ..episodes.reports import merge_reports
from ..pipeline.options import IngestOptions
from ..pipeline.refresh import owed_summaries, refresh_summaries
from ..pipeline.state import Emit
from ..prompts.protocol import LLM
from .runner import EpisodeRunner, ignore

__all__ = ["AfterBatch", "BatchEnd", "last_ran"]

log = logging.getLogger("epigraph.ingest")


class AfterBatch(Protocol):
    """What runs once a batch of episodes ran, given the queue's model and the episodes that ran here;
    returns its progress events. Built with whatever store it keeps up (the client's ``overview.Upkeep``:
    an ``OverviewStore``), which the queue does not need: the queue takes an ``IngestStore`` and reads
    ``ViewUpkeep`` (the summaries a group owes) only when the store has it."""

    def __call__(self, llm: LLM, results: Sequence[EpisodeResult]) -> Awaitable[Sequence[ProgressEvent]]: ...


class BatchEnd:
    """What ends a batch of the queue whose episodes ``runner`` runs (its store, model, embedder and
    group locks), with the queue's ``options`` and its after-batch ``work`` (if any)."""

    def __init__(self, runner: EpisodeRunner, options: IngestOptions, work: AfterBatch | None) -> None:
        self._runner, self._options, self._work = runner, options, work

    async def owed(self, group_id: str) -> list[str]:
        """The entities whose summaries the group owes; none on a store without the ``ViewUpkeep`` role
        (its ``write_episode`` keeps no marks)."""
        return await owed_summaries(self._runner.store, group_id)

    async def pay_summaries(
        self, group_id: str, options: IngestOptions, last: tuple[int, EpisodeResult] | None, emit: Emit
    ) -> None:
        """The summaries the group owes (``EpisodeWrite.owed_summaries``: marked by a ``batch`` episode's
        write, so a run killed before its batch ends leaves them to the next run), in one batched
        summarize call, written with their marks cleared. Its cost is added to the report of ``last``, the
        group's last episode run here (announced by ``EpisodeUpdated``), else to any episode of the group.
        Nothing with ``summary_mode="off"``."""
        if options.summary_mode == "off":
            return
        runner = self._runner
        async with runner.lock(group_id):
            owed = await self.owed(group_id)
            if not owed:
                return
            charged_to = last[1].episode if last is not None else None
            entities, report = await refresh_summaries(
                runner.store, runner.model(), runner.embedder, self._options, group_id, owed,
                charged_to=charged_to,
            )  # fmt: skip
        if last is None:
            return
        index, result = last
        episode = result.episode
        for entity in entities:
            emit(SummaryUpdated(group_id, episode.uuid, index, entity_uuid=entity.uuid))
        charged = episode.model_copy(update={"report": merge_reports(episode.report, report)})
        emit(EpisodeUpdated(group_id, episode.uuid, index, result=replace(result, episode=charged)))

    async def settle(
        self, group_id: str, options: IngestOptions, ran: Iterable[tuple[int, EpisodeResult]], emit: Emit
    ) -> None:
        """:meth:`pay_summaries` (charged to the last of ``ran`` that ran here) for a door that goes on
        whatever happens (a background pass, a Kafka worker's lane): a failure is logged and the marks
        stay, for the group's next batch to pay."""
        try:
            await self.pay_summaries(group_id, options, last_ran(ran), emit)
        except Exception as exc:
            log.warning("group %s: owed summaries not written (%s); its next batch pays them", group_id, exc)

    async def after_batch(self, results: Sequence[EpisodeResult], emit: Emit = ignore) -> list[ProgressEvent]:
        """The after-batch work over the episodes of ``results`` that ran here (not the skipped or
        failed ones), its events sent to ``emit`` and returned; nothing without such an episode, the
        work or an LLM."""
        ran = [r for r in results if r.ok and not r.skipped]
        llm = self._runner.llm
        if not ran or self._work is None or llm is None:
            return []
        events = list(await self._work(llm, ran))
        for event in events:
            emit(event)
        return events


def last_ran(results: Iterable[tuple[int, EpisodeResult]]) -> tuple[int, EpisodeResult] | None:
    """The last of ``results`` (with its index) that ran here: done, not skipped."""
    ran = [(index, r) for index, r in results if r.ok and not r.skipped]
    return ran[-1] if ran else None
