"""The end of a batch of the ingestion queue, and the upkeep after a removal: the entity summaries a
group owes (or a removal left stale), computed by ``pipeline.refresh`` in one call and written here, and
the after-batch work (:class:`AfterBatch`: conversation summaries, communities) over the episodes that ran.

A ``batch`` episode's write marks the entities it left wanting a model summary
(``EpisodeWrite.owed_summaries``), so a run killed before its batch ends leaves them to the next run.
Every door of the ``Ingestor`` that ingests in batches ends each one with ONE call,
:meth:`BatchEnd.run_batch_end` (``ingestion/ingestor.py``: which doors end one, and when): the summaries each
of its groups owes, written under the group's lock with their marks cleared, then the after-batch work.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Iterable, Sequence
from dataclasses import replace
from typing import Protocol

from ..episodes.events import EpisodeResult, EpisodeUpdated, ProgressEvent, SummaryUpdated
from ..episodes.reports import merge_reports
from ..graph.model import Episode
from ..pipeline.options import IngestOptions
from ..pipeline.refresh import Refresh, owed_summaries, refresh_summaries
from ..pipeline.state import Emit
from ..prompts.protocol import LLM
from .runner import EpisodeRunner, ignore

__all__ = ["AfterBatch", "BatchEnd", "last_ran"]

log = logging.getLogger("epigraph.ingest")


class AfterBatch(Protocol):
    """The derived records the queue keeps up, given its model: what runs once a batch of episodes ran
    (over the episodes that ran here; returns its progress events), and what follows an episode's
    removal. Built with whatever store it keeps up (the client's ``overview.Upkeep``: an
    ``OverviewStore``), which the queue does not need: the queue takes an ``IngestStore`` and reads
    ``ViewUpkeep`` (the summaries a group owes) only when the store has it."""

    def __call__(self, llm: LLM, results: Sequence[EpisodeResult]) -> Awaitable[Sequence[ProgressEvent]]: ...

    def after_removal(self, llm: LLM, episode: Episode) -> Awaitable[None]:
        """``episode`` was removed (its facts and mentions are gone): what was derived from it follows."""
        ...


class BatchEnd:
    """What ends a batch of the queue whose episodes ``runner`` runs (its store, model, embedder and
    group locks), with the queue's ``options`` and its after-batch ``work`` (if any)."""

    def __init__(self, runner: EpisodeRunner, options: IngestOptions, work: AfterBatch | None) -> None:
        self._runner, self._options, self._work = runner, options, work

    async def owed(self, group_id: str) -> list[str]:
        """The entities whose summaries the group owes; none on a store without the ``ViewUpkeep`` role
        (its ``write_episode`` keeps no marks)."""
        return await owed_summaries(self._runner.store, group_id)

    async def run_batch_end(
        self,
        options: IngestOptions,
        groups: Iterable[str],
        ran: Iterable[tuple[int, EpisodeResult]],
        emit: Emit = ignore,
        *,
        keep_going: bool = False,
    ) -> list[ProgressEvent]:
        """End a batch run with ``options``: for each of ``groups`` in turn, the summaries it owes (its
        batch's, and any an earlier run left owed), charged to its last episode of ``ran`` (each with its
        index in the batch) that ran here; then the after-batch work over the episodes of ``ran``. The
        events of both are sent to ``emit`` and returned.

        A group's summaries that fail to be written raise, unless ``keep_going`` (a door that goes on
        whatever happens: a background pass, a Kafka worker's lane): then the failure is logged and the
        marks stay, for the group's next batch to pay."""
        events: list[ProgressEvent] = []

        def sent(event: ProgressEvent) -> None:
            events.append(event)
            emit(event)

        ran = list(ran)
        for group_id in dict.fromkeys(groups):
            last = last_ran((i, r) for i, r in ran if r.episode.group_id == group_id)
            try:
                await self._pay_summaries(group_id, options, last, sent)
            except Exception as exc:
                if not keep_going:
                    raise
                log.warning("group %s: owed summaries not written (%s); its next batch pays them",
                            group_id, exc)  # fmt: skip
        await self._after_batch([r for _, r in ran], sent)
        return events

    async def refresh(self, group_id: str, uuids: list[str], *, charged_to: Episode | None) -> Refresh:
        """The summaries of ``uuids`` refreshed (``pipeline.refresh``) and written in the one write the
        refresh wants. The caller holds the group's lock."""
        runner = self._runner
        refresh = await refresh_summaries(
            runner.store, runner.model(), runner.embedder, self._options, group_id, uuids,
            charged_to=charged_to,
        )  # fmt: skip
        if refresh.write is not None:
            await runner.store.write_episode(refresh.write)
        return refresh

    async def after_removal(self, episode: Episode) -> None:
        """The after-batch work's upkeep once ``episode`` was removed (its conversation's summary folded
        again from the start); nothing without that work."""
        if self._work is not None:
            await self._work.after_removal(self._runner.model(), episode)

    async def _pay_summaries(
        self, group_id: str, options: IngestOptions, last: tuple[int, EpisodeResult] | None, emit: Emit
    ) -> None:
        """The summaries the group owes, in one batched summarize call, written with their marks cleared.
        Its cost is added to the report of ``last``, the group's last episode run here (announced by
        ``EpisodeUpdated``), else to any episode of the group. Nothing with ``summary_mode="off"``."""
        if options.summaries.mode == "off":
            return
        async with self._runner.lock(group_id):
            owed = await self.owed(group_id)
            if not owed:
                return
            refresh = await self.refresh(group_id, owed, charged_to=last[1].episode if last else None)
        if last is None:
            return
        index, result = last
        episode = result.episode
        for entity in refresh.entities:
            emit(SummaryUpdated(group_id, episode.uuid, index, entity_uuid=entity.uuid))
        charged = episode.model_copy(update={"report": merge_reports(episode.report, refresh.report)})
        emit(EpisodeUpdated(group_id, episode.uuid, index, result=replace(result, episode=charged)))

    async def _after_batch(self, results: Sequence[EpisodeResult], emit: Emit) -> None:
        """The after-batch work over the episodes of ``results`` that ran here (not the skipped or
        failed ones), its events sent to ``emit``; nothing without such an episode, the work or an LLM."""
        ran = [r for r in results if r.ok and not r.skipped]
        llm = self._runner.llm
        if not ran or self._work is None or llm is None:
            return
        for event in await self._work(llm, ran):
            emit(event)


def last_ran(results: Iterable[tuple[int, EpisodeResult]]) -> tuple[int, EpisodeResult] | None:
    """The last of ``results`` (with its index) that ran here: done, not skipped."""
    ran = [(index, r) for index, r in results if r.ok and not r.skipped]
    return ran[-1] if ran else None
