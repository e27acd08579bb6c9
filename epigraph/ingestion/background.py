"""The queue's background runs: the doors that answer once an episode is stored (the HTTP server and
MCP: ``Ingestor.accept``, ``Ingestor.requeue_failed``) leave it ``pending``, and each group's background
task runs what its group has pending, in the order accepted, once :meth:`Background.start` was called.

A group's task makes a pass over its pending episodes, each run as any other (``runner``), then ends the
pass as a batch (``BatchEnd.run_batch_end``: the summaries the group owes, the after-batch work), and makes
another pass while a pass found episodes; else it sleeps until the group is woken. A store failure is
retried with backoff (``StoreRetry``), the episode staying pending meanwhile; a failure of the batch's
summaries is logged, their marks kept for the next pass. Stopped, an interrupted episode stays
``pending`` and is resumed at the next start.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterable
from functools import partial

from ..episodes.events import EpisodeResult, ProgressEvent
from ..graph.model import EpisodeStatus
from ..pipeline.options import IngestOptions
from ..pipeline.state import Emit
from .batch_end import BatchEnd
from .retry import StoreRetry
from .runner import EpisodeRunner, Job, ignore, pending_episodes

log = logging.getLogger("epigraph.ingest")


class Background:
    """The background runs of the queue whose episodes ``runner`` runs with ``options``, each pass ended by
    ``batch_end``. Idle until :meth:`start`."""

    def __init__(self, runner: EpisodeRunner, batch_end: BatchEnd, options: IngestOptions) -> None:
        self._runner, self._batch_end, self._options = runner, batch_end, options
        self._emit: Emit | None = None
        self._wake: dict[str, asyncio.Event] = {}
        self._tasks: dict[str, asyncio.Task[None]] = {}

    async def start(self, groups: Iterable[str], emit: Emit) -> list[str]:
        """Run accepted episodes from now on, each group in its own task, their progress events sent to
        ``emit``; resume those of ``groups`` that have pending episodes or owed summaries (returned).
        Without an LLM nothing runs: accepted episodes wait ``pending`` for a process that has one."""
        if self._runner.llm is None:
            log.warning("no LLM configured: accepted episodes stay pending")
            return []
        self._emit = emit
        store, resumed = self._runner.store, []
        for group_id in sorted(set(groups)):
            pending = await store.episodes(group_id, status=EpisodeStatus.PENDING, limit=1)
            if pending or await self._batch_end.owed(group_id):
                self.wake(group_id)
                resumed.append(group_id)
        return resumed

    async def stop(self) -> None:
        """Stop the runs; an interrupted episode stays ``pending`` (resumed at the next start)."""
        self._emit = None
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks.clear()

    def send(self, event: ProgressEvent) -> None:
        """``event`` to where the background runs send theirs; dropped while they are not running."""
        if self._emit is not None:
            self._emit(event)

    def wake(self, group_id: str) -> None:
        """The group has new pending episodes: when running, start its task or wake it."""
        if self._emit is None:
            return
        self._wake.setdefault(group_id, asyncio.Event()).set()
        task = self._tasks.get(group_id)
        if task is None or task.done():
            self._tasks[group_id] = asyncio.create_task(self._run(group_id), name=f"ingest:{group_id}")

    async def _run(self, group_id: str) -> None:
        """The group's task: a pass over its pending episodes, again while a pass found some, else asleep
        until the group is woken."""
        wake = self._wake[group_id]
        while True:
            wake.clear()
            if not await self._pass(group_id):
                await wake.wait()

    async def _pass(self, group_id: str) -> bool:
        """One pass over the group's pending episodes, ended as a batch; whether it found any episode."""
        retry = StoreRetry(partial(_store_failed, group_id))
        pending = await retry.run(partial(pending_episodes, self._runner.store, group_id))
        emit = self._emit or ignore
        results: list[EpisodeResult] = []
        try:
            for position, episode in enumerate(pending):
                job = Job(self._options, emit, after=pending[position + 1 :])
                result = await retry.run(partial(self._runner.run, episode, job))
                if result is not None:
                    results.append(result)
        finally:
            await self._runner.lookahead.drop(pending)
        ran = [(0, r) for r in results]  # background events carry index 0
        await self._batch_end.run_batch_end(self._options, [group_id], ran, emit, keep_going=True)
        return bool(pending)


def _store_failed(group_id: str, exc: Exception, wait_s: float) -> None:
    log.error("ingesting group %s: the store failed (%s); trying again in %.0f s", group_id, exc, wait_s)
