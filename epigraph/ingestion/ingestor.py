"""The ingestion queue: ``Ingestor``, the one road of an episode into the graph, whatever door it came in by.

Doors (each only connects to this class):

- run now, results back: ``add_episode(s)`` / ``ingest`` / ``retry_failed`` (``KnowledgeGraph``: library
  and CLI) and :meth:`Ingestor.process` (the Kafka worker, one delivered episode);
- run in the background: :meth:`Ingestor.accept` (the HTTP server and MCP: answered once stored), run by
  the group's drain once :meth:`Ingestor.start` was called; :meth:`Ingestor.requeue_failed` (retry route).

Every door takes the same steps (``road``): accepted (stored ``pending``), settled under the group's lock
(claimed, run if still pending, released), the status decided in one place. A door that ingests in
batches ends each one with :meth:`Ingestor.after_batch` (the ``after_batch`` work ``KnowledgeGraph`` wires:
conversation summaries and communities, ``overview.upkeep``): ``add_episodes`` / ``ingest`` and
``retry_failed`` after their episodes, a background drain after each pass, the Kafka worker when a lane
has run what it had fetched. Never per episode: ``add_episode`` and ``process`` alone do not.

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
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import partial
from typing import Any, cast

from ..embed import Embedder
from ..errors import ConfigError
from ..graph.model import Entity, Episode, EpisodeKind, EpisodeStatus, IncreasingClock, IngestReport, to_utc
from ..graph.store import DeletionResult, GraphStore
from ..pipeline.bulk import extract_window
from ..pipeline.options import IngestOptions, Mode, SummaryMode
from ..pipeline.refresh import refresh_summaries
from ..pipeline.state import Emit, Prefetched
from ..prompts.protocol import LLM
from .claims import Leases
from .drains import Drains, StoreRetry
from .events import (
    EpisodeDone,
    EpisodeFailed,
    EpisodeResult,
    EpisodeSaved,
    EpisodeUpdated,
    ProgressEvent,
    SummaryUpdated,
)
from .inputs import EpisodeInput
from .pacing import PacedLLM, PacedStore, Pacer
from .reports import merge_reports
from .road import ALL, Road, Trip, ignore, requeue, save_pending

log = logging.getLogger("epigraph.ingest")

Item = EpisodeInput | Mapping[str, Any]

AfterBatch = Callable[[GraphStore, LLM, Sequence[EpisodeResult]], Awaitable[Sequence[ProgressEvent]]]
"""What runs once a batch of episodes ran (the store and model as the queue's runs see them: paced in the
server; the episodes that ran here), and its progress events."""

NO_LLM = (
    "ingestion needs an LLM: set EPIGRAPH_LLM_MODEL and EPIGRAPH_LLM_BASE_URL (or EPIGRAPH_LLM_API_KEY), "
    "or pass llm= to KnowledgeGraph"
)


@dataclass(frozen=True)
class RemovalResult:
    deletion: DeletionResult
    entities: list[Entity] = field(default_factory=list)
    """Touched entities whose summaries were regenerated."""
    report: IngestReport = field(default_factory=IngestReport)


class Ingestor:
    """The ingestion queue over ``store`` with ``llm`` and ``embedder`` (see the module docstring).
    Without an LLM it still accepts episodes (they wait ``pending``); running one raises ConfigError."""

    def __init__(
        self,
        store: GraphStore,
        llm: LLM | None,
        embedder: Embedder,
        options: IngestOptions | None = None,
        *,
        leases: Leases | None = None,
        after_batch: AfterBatch | None = None,
    ) -> None:
        self.store, self.llm, self.embedder = store, llm, embedder
        self.options = options or IngestOptions()
        self.leases = leases or Leases()
        self._after_batch = after_batch
        self._pacer: Pacer | None = None
        self._road = Road(store, embedder, self.leases, self._llm)
        self._accepting: dict[str, asyncio.Lock] = {}
        # strictly increasing, so episodes sharing a reference time keep their given order
        self._created_at = IncreasingClock(lambda: self.options.clock())
        self._drains = Drains(self._drain)
        self._background: Emit | None = None

    # --- doors that run now -----------------------------------------------------------------------

    async def add_episode(
        self,
        content: str,
        *,
        group_id: str = "default",
        reference_time: datetime,
        kind: EpisodeKind | str = EpisodeKind.MESSAGE,
        name: str = "",
        source_description: str = "",
        episode_id: str | None = None,
        speaker: str | None = None,
        mode: Mode | None = None,
        raise_on_failure: bool = True,
    ) -> EpisodeResult:
        """Ingest one episode. On failure the episode is saved ``failed`` (retry it with
        :meth:`retry_failed`) and the error is raised, unless ``raise_on_failure=False``."""
        self._llm()
        item = EpisodeInput(
            content=content,
            reference_time=to_utc(reference_time),
            group_id=group_id,
            kind=EpisodeKind(kind),
            speaker=speaker,
            name=name,
            source_description=source_description,
            episode_id=episode_id,
        )
        trip = Trip(self._options(mode, None))
        result, _ = await self._road.settle_new(self._episode(item), trip)
        if trip.errors and raise_on_failure:
            raise trip.errors[0]
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
        self._llm()
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
        self._llm()
        await requeue(self.store, group_id)
        options = self._options(mode, None)
        results = []
        for index, episode in enumerate(await self._pending(group_id)):
            settled = await self._road.settle(episode, Trip(options, index=index))
            if settled is not None:
                results.append(settled[0])
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
        pending, then settled under the group's lock, its progress events sent to ``emit``; never raises
        for a failed episode (the result says ``ok == False``). A ``done`` episode is skipped. A store
        failure is raised, or with ``store_retry`` tried again until the store takes it."""
        self._llm()
        step = partial(self._road.settle_new, episode, Trip(self._options(mode, None), emit or ignore))
        result, _ = await (store_retry.run(step) if store_retry else step())
        return result

    async def after_batch(self, results: Sequence[EpisodeResult], emit: Emit = ignore) -> list[ProgressEvent]:
        """End a batch: the ``after_batch`` work over the episodes of ``results`` that ran here (not the
        skipped or failed ones), its events sent to ``emit`` and returned. Every door that ingests in
        batches calls it once per batch (module docstring); nothing runs without such an episode, an
        ``after_batch`` or an LLM."""
        ran = [r for r in results if r.ok and not r.skipped]
        if not ran or self._after_batch is None or self.llm is None:
            return []
        events = list(await self._after_batch(self._road.store, self._llm(), ran))
        for event in events:
            emit(event)
        return events

    # --- doors that run in the background -------------------------------------------------------------

    def pace(self, pacer: Pacer) -> None:
        """From now on every store and LLM call of a run waits for ``pacer.turn()`` (the server: reads
        first). Accepting does not: someone waits for its answer."""
        self._pacer = pacer
        self._road.store = cast(GraphStore, PacedStore(self.store, pacer))

    async def start(self, groups: Iterable[str], emit: Emit) -> list[str]:
        """Run accepted episodes in the background from now on, each group in its own task, their progress
        events sent to ``emit``; resume those of ``groups`` that have pending episodes (returned). Without
        an LLM nothing runs: accepted episodes wait ``pending`` for a process that has one."""
        if self.llm is None:
            log.warning("no LLM configured: accepted episodes stay pending")
            return []
        self._background = emit
        resumed = []
        for group_id in sorted(set(groups)):
            if await self.store.episodes(group_id, status=EpisodeStatus.PENDING, limit=1):
                self._drains.kick(group_id)
                resumed.append(group_id)
        return resumed

    async def stop(self) -> None:
        """Stop the background runs; an interrupted episode stays ``pending`` (resumed at the next start)."""
        self._background = None
        await self._drains.close()

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
            self._kick(group_id)
        return [stored[i] for i in range(len(episodes))]

    async def requeue_failed(self, group_id: str) -> list[Episode]:
        """Set the group's failed episodes pending again, in their order; the background run runs them."""
        again = await requeue(self.store, group_id)
        if again:
            self._kick(group_id)
        return again

    # --- changing what was ingested -------------------------------------------------------------------

    def group_lock(self, group_id: str) -> asyncio.Lock:
        """The group's one lock (held while one of its episodes is settled here): what other changes of
        the group take so that they never run beside one of its episodes (corrections by hand)."""
        return self._road.lock(group_id)

    async def remove_episode(self, group_id: str, uuid: str) -> RemovalResult:
        """Delete an episode with provenance cleanup (facts it retired are restored) and regenerate
        the summaries of the entities it touched. Waits for a run of the group in flight here: an
        episode removed while it waited is not stored again by its run."""
        llm = self._llm()
        async with self._road.lock(group_id):
            deletion = await self.store.delete_episode(group_id, uuid)
            entities, report = await refresh_summaries(
                self.store, llm, self.embedder, self.options, group_id, deletion.touched_entities,
                carrier=None,
            )  # fmt: skip
        return RemovalResult(deletion, entities, report)

    async def refresh_summaries(self, group_id: str, entity_uuids: Iterable[str]) -> list[Entity]:
        """Regenerate summaries from currently believed facts (e.g. lazily, before showing them)."""
        llm = self._llm()
        async with self._road.lock(group_id):
            entities, _ = await refresh_summaries(
                self.store, llm, self.embedder, self.options, group_id, list(entity_uuids), carrier=None
            )
        return entities

    # --- internals ------------------------------------------------------------------------------------

    def _llm(self) -> LLM:
        if self.llm is None:
            raise ConfigError(NO_LLM)
        return self.llm if self._pacer is None else PacedLLM(self.llm, self._pacer)

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

    def _kick(self, group_id: str) -> None:
        if self._background is not None:
            self._drains.kick(group_id)

    async def _drain(self, group_id: str) -> bool:
        """One background pass over the group's pending episodes, then the batch's ``after_batch``; whether
        it found any. A store failure is retried with backoff (the episode stays pending meanwhile)."""
        retry = StoreRetry(partial(_store_failed, group_id))
        pending = await retry.run(partial(self._pending, group_id))
        emit = self._background or ignore
        results = []
        for episode in pending:
            settled = await retry.run(partial(self._road.settle, episode, Trip(self.options, emit)))
            if settled is not None:
                results.append(settled[0])
        await self.after_batch(results, emit)
        return bool(pending)

    async def _run_groups(self, episodes: list[Episode], options: IngestOptions, emit: Emit) -> None:
        by_group: dict[str, list[tuple[int, Episode]]] = {}
        for index, episode in enumerate(episodes):
            by_group.setdefault(episode.group_id, []).append((index, episode))
        results: list[EpisodeResult] = []
        async with asyncio.TaskGroup() as tasks:
            for members in by_group.values():
                tasks.create_task(self._run_group(members, options, emit, results))
        await self.after_batch(results, emit)

    async def _run_group(
        self,
        members: list[tuple[int, Episode]],
        options: IngestOptions,
        emit: Emit,
        results: list[EpisodeResult],
    ) -> None:
        """Settle the group's episodes in order, appending their results to ``results``; then its batch
        summaries."""
        wanting: set[str] = set()
        last: tuple[int, EpisodeResult] | None = None
        prefetched: dict[str, Prefetched] = {}
        windowed: set[str] = set()  # bulk: a turn of a window already asked for (no line: its own call)
        for position, (index, episode) in enumerate(members):
            if options.mode == "bulk" and episode.uuid not in windowed:
                window = [e for _, e in members[position : position + max(1, options.window)]]
                windowed.update(e.uuid for e in window)
                prefetched.update(await extract_window(self._road.store, self._llm(), options, window))
            trip = Trip(options, emit, index, prefetched=prefetched.pop(episode.uuid, None))
            result, wants = await self._road.settle_new(episode, trip)
            results.append(result)
            if result.ok and not result.skipped:
                wanting |= wants
                last = (index, result)
        if wanting and last is not None and options.summary_mode == "batch":
            await self._batch_summaries(last, sorted(wanting), emit)

    async def _batch_summaries(self, last: tuple[int, EpisodeResult], uuids: list[str], emit: Emit) -> None:
        """One batched summarize call for the group's entities that outgrew composed summaries; its
        cost is added to the report of the group's last episode (written with the summaries)."""
        index, result = last
        episode = result.episode
        group_id, llm = episode.group_id, self._llm()
        async with self._road.lock(group_id):
            entities, report = await refresh_summaries(
                self._road.store, llm, self.embedder, self.options, group_id, uuids, carrier=episode
            )
        for entity in entities:
            emit(SummaryUpdated(episode.group_id, episode.uuid, index, entity_uuid=entity.uuid))
        carrier = episode.model_copy(update={"report": merge_reports(episode.report, report)})
        emit(EpisodeUpdated(episode.group_id, episode.uuid, index, result=replace(result, episode=carrier)))


def _store_failed(group_id: str, exc: Exception, wait_s: float) -> None:
    log.error("ingesting group %s: the store failed (%s); trying again in %.0f s", group_id, exc, wait_s)
