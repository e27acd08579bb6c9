"""The ingestion queue: ``Ingestor``, the one road of an episode into the graph, whatever door it came in by.

Doors (each only connects to this class):

- run now, results back: ``add_episode(s)`` / ``ingest`` / ``retry_failed`` (``KnowledgeGraph``: library
  and CLI) and :meth:`Ingestor.process` (the Kafka worker, one delivered episode);
- run in the background: :meth:`Ingestor.accept` (the HTTP server and MCP: answered once stored), run by
  the group's background task once :meth:`Ingestor.start` was called; :meth:`Ingestor.requeue_failed`
  (retry route).

The queue is built once with everything it uses: one store and one model (paced or not, as given: the
server's are paced, reads first), the embedder, the options, the claims' leases and the work that ends a
batch. Nothing of it changes afterwards, and it calls nothing back.

Every door takes the same steps (``runner``): accepted (stored ``pending``), run under the group's lock
(claimed, run if still pending, released), the status decided in one place. A door that ingests in
batches ends each one with :meth:`Ingestor.after_batch` (the :class:`AfterBatch` work it was built with:
conversation summaries and communities, ``overview.Upkeep``), after paying the summaries its groups
owe: ``add_episodes`` / ``ingest`` and ``retry_failed`` after their episodes, a background pass after
each pass, the Kafka worker (:meth:`Ingestor.finish_batch`) when a lane has run what it had fetched. Never
per episode: ``add_episode`` and ``process`` alone do not. What ends a batch, the summaries a group owes
and that work, is ``batch_end``.

Guarantees: idempotent (ids from group, content and time, or the caller's; a ``done`` episode is
skipped); atomic (an episode's graph changes and its ``done`` status are one write; a failure saves it
``failed`` with the reason and leaves the graph untouched); ordered (per group, in the given or accepted
order; groups concurrently; LLM concurrency bounded by the client's one limiter); single-spent (claims:
two processes on one store never run one episode at once; a crashed owner's claim lapses); observable
(every result carries its report; ``ingest`` and background runs send typed progress events).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

from ..embed import Embedder
from ..episodes.events import (
    EpisodeDone,
    EpisodeFailed,
    EpisodeResult,
    EpisodeSaved,
    EpisodeUpdated,
    ProgressEvent,
)
from ..episodes.inputs import EpisodeInput
from ..graph.model import Entity, Episode, EpisodeStatus, IncreasingClock, IngestReport
from ..graph.store import DeletionResult, IngestStore
from ..pipeline.bulk import extract_window
from ..pipeline.episode import together
from ..pipeline.options import IngestOptions, Mode, SummaryMode
from ..pipeline.refresh import refresh_summaries
from ..pipeline.state import Emit, Prefetched
from ..prompts.protocol import LLM
from .batch_end import AfterBatch, BatchEnd, last_ran
from .claims import Leases
from .retry import StoreRetry
from .runner import ALL, NO_LLM, EpisodeRunner, Job, Watch, ignore, requeue, save_pending

log = logging.getLogger("epigraph.ingest")

Item = EpisodeInput | Mapping[str, Any]

__all__ = ["NO_LLM", "AfterBatch", "Ingestor", "Item", "RemovalResult"]


@dataclass(frozen=True)
class RemovalResult:
    deletion: DeletionResult
    entities: list[Entity] = field(default_factory=list)
    """Touched entities whose summaries changed, written (none when the group has no episode left)."""
    report: IngestReport = field(default_factory=IngestReport)


class Ingestor:
    """The ingestion queue over ``store`` with ``llm`` and ``embedder`` (see the module docstring), built
    once: what it is given is what it uses. Without an LLM it still accepts episodes (they wait
    ``pending``); running one raises ConfigError."""

    def __init__(
        self,
        store: IngestStore,
        llm: LLM | None,
        embedder: Embedder,
        options: IngestOptions | None = None,
        *,
        leases: Leases | None = None,
        after_batch: AfterBatch | None = None,
        watch: Watch | None = None,
    ) -> None:
        """``watch``: told of each episode run here once done or failed (the webhooks; it must not
        block)."""
        self._options_given = options or IngestOptions()
        self._runner = EpisodeRunner(store, llm, embedder, leases or Leases(), watch)
        self._batch_end = BatchEnd(self._runner, self._options_given, after_batch)
        self._accepting: dict[str, asyncio.Lock] = {}
        # strictly increasing, so episodes sharing a reference time keep their given order
        self._created_at = IncreasingClock(lambda: self._options_given.clock())
        self._background: Emit | None = None
        self._wake: dict[str, asyncio.Event] = {}
        self._tasks: dict[str, asyncio.Task[None]] = {}

    @property
    def store(self) -> IngestStore:
        return self._runner.store

    @property
    def llm(self) -> LLM | None:
        return self._runner.llm

    @property
    def embedder(self) -> Embedder:
        return self._runner.embedder

    @property
    def options(self) -> IngestOptions:
        return self._options_given

    @property
    def leases(self) -> Leases:
        return self._runner.leases

    # --- doors that run now -----------------------------------------------------------------------

    async def add_episode(
        self, item: EpisodeInput, *, mode: Mode | None = None, raise_on_failure: bool = True
    ) -> EpisodeResult:
        """Ingest one episode. On failure the episode is saved ``failed`` (retry it with
        :meth:`retry_failed`) and the error is raised, unless ``raise_on_failure=False``."""
        self._runner.model()
        job = Job(self._options(mode, None))
        result = await self._runner.accept_and_run(self._episode(item), job)
        if job.errors and raise_on_failure:
            raise job.errors[0]
        return result

    async def add_episodes(
        self, items: Iterable[Item], *, mode: Mode | None = None, summary_mode: SummaryMode | None = "batch"
    ) -> list[EpisodeResult]:
        """Ingest many episodes: groups concurrently, each group's episodes in order. Failures do not
        stop the batch: they come back as results with ``ok == False`` and ``error`` set."""
        results: dict[int, EpisodeResult] = {}
        async for event in self.ingest(items, mode=mode, summary_mode=summary_mode):
            if isinstance(event, EpisodeDone | EpisodeUpdated | EpisodeFailed) and event.result is not None:
                results[event.index] = event.result
        return [results[i] for i in sorted(results)]

    async def ingest(
        self, items: Iterable[Item], *, mode: Mode | None = None, summary_mode: SummaryMode | None = "batch"
    ) -> AsyncIterator[ProgressEvent]:
        """Ingest many episodes, yielding typed progress events as they happen.

        Each episode gets exactly one ``EpisodeDone`` or ``EpisodeFailed``, after its other events.
        A batch summary refresh at the end of a group yields ``SummaryUpdated`` events and an
        ``EpisodeUpdated`` with the new result of the group's last done episode (it pays for it). The
        batch's ``after_batch`` events come last. Closing the iterator early cancels the run; an
        interrupted episode stays ``pending`` and :meth:`retry_failed` picks it up."""
        self._runner.model()
        queue: asyncio.Queue[ProgressEvent | None] = asyncio.Queue()
        options = self._options(mode, summary_mode)
        episodes = [self._episode(EpisodeInput.coerce(item)) for item in items]
        runner = asyncio.create_task(self._run_groups(episodes, options, queue.put_nowait))
        runner.add_done_callback(lambda _: queue.put_nowait(None))
        try:
            while (event := await queue.get()) is not None:
                yield event
            await runner
        finally:
            if not runner.done():
                runner.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await runner

    async def retry_failed(self, group_id: str, *, mode: Mode | None = None) -> list[EpisodeResult]:
        """Run again, in order, the group's failed episodes and those left pending by a crash."""
        self._runner.model()
        await requeue(self.store, group_id)
        options = self._options(mode, None)
        results = []
        for index, episode in enumerate(await self._pending(group_id)):
            result = await self._runner.run(episode, Job(options, index=index))
            if result is not None:
                results.append(result)
        await self._batch_end.pay_summaries(group_id, options, last_ran(enumerate(results)), ignore)
        await self.after_batch(results)
        return results

    async def process(
        self,
        episode: Episode,
        *,
        emit: Emit | None = None,
        mode: Mode | None = None,
        store_retry: StoreRetry | None = None,
    ) -> EpisodeResult:
        """Ingest one episode already built (e.g. decoded from a Kafka message), as any other: stored
        pending, then run under the group's lock, its progress events sent to ``emit``; never raises
        for a failed episode (the result says ``ok == False``). A ``done`` episode is skipped. A store
        failure is raised, or with ``store_retry`` tried again until the store takes it."""
        self._runner.model()
        step = partial(self._runner.accept_and_run, episode, Job(self._options(mode, None), emit or ignore))
        return await (store_retry.run(step) if store_retry else step())

    async def finish_batch(self, results: Sequence[EpisodeResult]) -> list[ProgressEvent]:
        """End a batch of episodes run one at a time with :meth:`process` (a Kafka worker's lane): the
        summaries each of their groups owes (this batch's, and any an earlier run left: a crashed
        worker's, paid when its episodes come again), then :meth:`after_batch`; returns the events of
        both. A group's summaries that fail to be written are logged, their marks left to its next batch."""
        events: list[ProgressEvent] = []
        for group_id in dict.fromkeys(r.episode.group_id for r in results):
            ran = [(i, r) for i, r in enumerate(results) if r.episode.group_id == group_id]
            await self._batch_end.settle(group_id, self.options, ran, events.append)
        return [*events, *await self.after_batch(results)]

    async def after_batch(self, results: Sequence[EpisodeResult], emit: Emit = ignore) -> list[ProgressEvent]:
        """End a batch: the ``after_batch`` work over the episodes of ``results`` that ran here (not the
        skipped or failed ones), its events sent to ``emit`` and returned. Every door that ingests in
        batches calls it once per batch (module docstring); nothing runs without such an episode, an
        ``after_batch`` or an LLM."""
        return await self._batch_end.after_batch(results, emit)

    # --- doors that run in the background -------------------------------------------------------------

    async def start(self, groups: Iterable[str], emit: Emit) -> list[str]:
        """Run accepted episodes in the background from now on, each group in its own task, their progress
        events sent to ``emit``; resume those of ``groups`` that have pending episodes or owed summaries
        (returned). Without
        an LLM nothing runs: accepted episodes wait ``pending`` for a process that has one."""
        if self.llm is None:
            log.warning("no LLM configured: accepted episodes stay pending")
            return []
        self._background = emit
        resumed = []
        for group_id in sorted(set(groups)):
            pending = await self.store.episodes(group_id, status=EpisodeStatus.PENDING, limit=1)
            if pending or await self._batch_end.owed(group_id):
                self._wake_group(group_id)
                resumed.append(group_id)
        return resumed

    async def stop(self) -> None:
        """Stop the background runs; an interrupted episode stays ``pending`` (resumed at the next start)."""
        self._background = None
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks.clear()

    async def accept(self, items: Iterable[Item]) -> list[Episode]:
        """Validate every item (nothing is stored when one is invalid), then store each ``pending`` in
        order and wake its group's background run. Returns the stored episodes, in order: one stored
        before is returned as it is (a failed one set pending again)."""
        episodes = [self._episode(EpisodeInput.coerce(item)) for item in items]
        stored: dict[int, Episode] = {}
        for group_id in dict.fromkeys(e.group_id for e in episodes):
            async with self._accepting.setdefault(group_id, asyncio.Lock()):
                for i, episode in enumerate(episodes):
                    if episode.group_id == group_id:
                        saved, done = await save_pending(self.store, episode)
                        stored[i] = done or saved
                        if done is None and self._background is not None:
                            self._background(EpisodeSaved(group_id, saved.uuid, 0))
            self._wake_group(group_id)
        return [stored[i] for i in range(len(episodes))]

    async def requeue_failed(self, group_id: str) -> list[Episode]:
        """Set the group's failed episodes pending again, in their order; the background run runs them."""
        again = await requeue(self.store, group_id)
        if again:
            self._wake_group(group_id)
        return again

    # --- changing what was ingested -------------------------------------------------------------------

    def group_lock(self, group_id: str) -> asyncio.Lock:
        """The group's one lock (held while one of its episodes is run here): what other changes of
        the group take so that they never run beside one of its episodes (corrections by hand)."""
        return self._runner.lock(group_id)

    async def remove_episode(self, group_id: str, uuid: str) -> RemovalResult:
        """Delete an episode with provenance cleanup (facts it retired are restored) and regenerate
        the summaries of the entities it touched. Waits for a run of the group in flight here: an
        episode removed while it waited is not stored again by its run."""
        llm = self._runner.model()
        async with self._runner.lock(group_id):
            deletion = await self.store.delete_episode(group_id, uuid)
            entities, report = await refresh_summaries(
                self.store, llm, self.embedder, self.options, group_id, deletion.touched_entities,
                charged_to=None,
            )  # fmt: skip
        return RemovalResult(deletion, entities, report)

    # --- internals ------------------------------------------------------------------------------------

    def _options(self, mode: Mode | None, summary_mode: SummaryMode | None) -> IngestOptions:
        options = self.options
        if mode is not None:
            options = replace(options, mode=mode)
        if summary_mode is not None and not (summary_mode == "batch" and options.summary_mode == "off"):
            options = replace(options, summary_mode=summary_mode)
        return options

    def _episode(self, item: EpisodeInput) -> Episode:
        return item.to_episode(created_at=self._created_at())

    async def _pending(self, group_id: str) -> list[Episode]:
        """The group's pending episodes in the order they were accepted."""
        pending = await self.store.episodes(
            group_id, status=EpisodeStatus.PENDING, limit=ALL, newest_first=False
        )
        return sorted(pending, key=lambda e: (e.created_at, e.uuid))

    def _wake_group(self, group_id: str) -> None:
        """The group has new pending episodes: when running in the background, start its task or wake it."""
        if self._background is None:
            return
        self._wake.setdefault(group_id, asyncio.Event()).set()
        task = self._tasks.get(group_id)
        if task is None or task.done():
            self._tasks[group_id] = asyncio.create_task(
                self._background_run(group_id), name=f"ingest:{group_id}"
            )

    async def _background_run(self, group_id: str) -> None:
        """The group's background task: a pass over its pending episodes, again while a pass found some,
        else asleep until the group is woken."""
        wake = self._wake[group_id]
        while True:
            wake.clear()
            if not await self._background_pass(group_id):
                await wake.wait()

    async def _background_pass(self, group_id: str) -> bool:
        """One pass over the group's pending episodes, then the summaries the group owes and the batch's
        ``after_batch``; whether it found any episode. A store failure is retried with backoff (the episode
        stays pending meanwhile)."""
        retry = StoreRetry(partial(_store_failed, group_id))
        pending = await retry.run(partial(self._pending, group_id))
        emit = self._background or ignore
        results = []
        for episode in pending:
            result = await retry.run(partial(self._runner.run, episode, Job(self.options, emit)))
            if result is not None:
                results.append(result)
        await self._batch_end.settle(group_id, self.options, ((0, r) for r in results), emit)
        await self.after_batch(results, emit)
        return bool(pending)

    async def _run_groups(self, episodes: list[Episode], options: IngestOptions, emit: Emit) -> None:
        by_group: dict[str, list[tuple[int, Episode]]] = {}
        for index, episode in enumerate(episodes):
            by_group.setdefault(episode.group_id, []).append((index, episode))
        results: list[EpisodeResult] = []
        # A group's failure that is not its episode's (the store unavailable) stops the batch with that
        # error itself, not an ExceptionGroup; the other groups' runs are cancelled, their episodes pending.
        await together(*(self._run_group(members, options, emit, results) for members in by_group.values()))
        await self.after_batch(results, emit)

    async def _run_group(
        self,
        members: list[tuple[int, Episode]],
        options: IngestOptions,
        emit: Emit,
        results: list[EpisodeResult],
    ) -> None:
        """Run the group's episodes in order, appending their results to ``results``; then the summaries
        the group owes (its batch's, and any an earlier run left owed)."""
        ran: list[tuple[int, EpisodeResult]] = []
        prefetched: dict[str, Prefetched] = {}
        windowed: set[str] = set()  # bulk: a turn of a window already asked for (no line: its own call)
        for position, (index, episode) in enumerate(members):
            if options.mode == "bulk" and episode.uuid not in windowed:
                window = [e for _, e in members[position : position + max(1, options.window)]]
                windowed.update(e.uuid for e in window)
                prefetched.update(await extract_window(self.store, self._runner.model(), options, window))
            job = Job(options, emit, index, prefetched=prefetched.pop(episode.uuid, None))
            result = await self._runner.accept_and_run(episode, job)
            results.append(result)
            ran.append((index, result))
        await self._batch_end.pay_summaries(members[0][1].group_id, options, last_ran(ran), emit)


def _store_failed(group_id: str, exc: Exception, wait_s: float) -> None:
    log.error("ingesting group %s: the store failed (%s); trying again in %.0f s", group_id, exc, wait_s)
