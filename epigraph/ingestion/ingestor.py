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
(claimed, run if still pending, released), the status decided and the episode written in one place. A
door that ingests in batches ends each one with ONE call, ``BatchEnd.run_batch_end`` (``batch_end``: the
summaries its groups owe, then the :class:`AfterBatch` work it was built with: conversation summaries and
communities, ``overview.Upkeep``): ``add_episodes`` / ``ingest`` and ``retry_failed`` after their
episodes, a background pass (``background``) after each pass, the Kafka worker
(:meth:`Ingestor.finish_batch`) when a lane has run what it had fetched. Never per episode:
``add_episode`` and ``process`` alone do not. A removal (:meth:`Ingestor.remove_episode`) refreshes the
summaries it left stale and hands the episode to the same work (its conversation folded again).

Before anything is stored, every door replaces the personal data of an episode when the options ask
for it (``IngestOptions.redact``: ``door_privacy``), so neither the store nor the model ever sees it.

Guarantees: idempotent (ids from group, content and time, or the caller's; a ``done`` episode is
skipped; an id taken by other content refused, ``conflicts``); atomic (an episode's graph changes and
its ``done`` status are one write; a failure saves it ``failed`` with the reason and leaves the graph
untouched); ordered (per group, in the given or accepted
order; groups concurrently; LLM concurrency bounded by the client's one limiter); single-spent (claims:
two processes on one store never run one episode at once; a crashed owner's claim lapses); observable
(every result carries its report; ``ingest`` and background runs send typed progress events).
"""

from __future__ import annotations

import asyncio
import contextlib
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
from ..graph.model import Entity, Episode, IncreasingClock, IngestReport
from ..graph.store import DeletionResult, IngestStore
from ..pipeline.options import IngestOptions, Mode, SummaryMode
from ..pipeline.state import Emit
from ..privacy.redactor import Redactor
from ..privacy.vault import VaultKey
from ..prompts.protocol import LLM
from .background import Background
from .batch_end import AfterBatch, BatchEnd
from .batches import run_groups
from .claims import Leases
from .conflicts import ConflictCheck
from .door_privacy import DoorPrivacy
from .retry import StoreRetry
from .runner import NO_LLM, EpisodeRunner, Job, Watch, ignore, pending_episodes, requeue, save_pending

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
        redact_key: VaultKey | None = None,
    ) -> None:
        """``watch``: told of each episode run here once done or failed (the webhooks; it must not
        block)."""
        self._options_given = options or IngestOptions()
        self._privacy = DoorPrivacy(store, self._options_given.redact, redact_key)
        self._runner = EpisodeRunner(store, llm, embedder, leases or Leases(), watch)
        self._batch_end = BatchEnd(self._runner, self._options_given, after_batch)
        self._background = Background(self._runner, self._batch_end, self._options_given)
        self._accepting: dict[str, asyncio.Lock] = {}
        # strictly increasing, so episodes sharing a reference time keep their given order
        self._created_at = IncreasingClock(lambda: self._options_given.clock())

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
        :meth:`retry_failed`) and the error is raised, unless ``raise_on_failure=False``. EpisodeConflict
        (nothing stored) when its id is taken by a stored episode with other content."""
        self._runner.model()
        job = Job(self._options(mode, None))
        (episode,) = await self._episodes([item])
        result = await self._runner.accept_and_run(episode, job)
        if job.errors and raise_on_failure:
            raise job.errors[0]
        return result

    async def add_episodes(
        self, items: Iterable[Item], *, mode: Mode | None = None, summary_mode: SummaryMode | None = "batch"
    ) -> list[EpisodeResult]:
        """Ingest many episodes: groups concurrently, each group's episodes in order. Failures do not
        stop the batch: they come back as results with ``ok == False`` and ``error`` set. EpisodeConflict
        before anything is stored when an id is taken by other content (stored, or earlier in ``items``)."""
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
        Once every group has run, the batch ends: each group's summary refresh yields ``SummaryUpdated``
        events and an ``EpisodeUpdated`` with the new result of the group's last done episode (it pays for
        it), and the after-batch work's events come last. Closing the iterator early cancels the run; an
        interrupted episode stays ``pending`` and :meth:`retry_failed` picks it up."""
        self._runner.model()
        queue: asyncio.Queue[ProgressEvent | None] = asyncio.Queue()
        options = self._options(mode, summary_mode)
        episodes = await self._episodes(items)
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

    async def retry_failed(
        self, group_id: str, *, mode: Mode | None = None, emit: Emit | None = None
    ) -> list[EpisodeResult]:
        """Run again, in order, the group's failed episodes and those left pending by a crash; their
        progress events (one another process's claim makes wait, ``EpisodeWaiting``) sent to ``emit``."""
        self._runner.model()
        await requeue(self.store, group_id)
        options = self._options(mode, None)
        results = []
        pending = await pending_episodes(self.store, group_id)
        try:
            for index, episode in enumerate(pending):
                job = Job(options, emit or ignore, index=index, after=pending[index + 1 :])
                result = await self._runner.run(episode, job)
                if result is not None:
                    results.append(result)
        finally:
            await self._runner.lookahead.drop(pending)
        await self._batch_end.run_batch_end(options, [group_id], enumerate(results))
        return results

    async def process(
        self,
        episode: Episode,
        *,
        emit: Emit | None = None,
        mode: Mode | None = None,
        store_retry: StoreRetry | None = None,
        redacted_in: str | None = None,
        after: Sequence[Episode] = (),
    ) -> EpisodeResult:
        """Ingest one episode already built (e.g. decoded from a Kafka message), as any other: stored
        pending, then run under the group's lock, its progress events sent to ``emit``; never raises
        for a failed episode (the result says ``ok == False``). A ``done`` episode is skipped. A store
        failure is raised, or with ``store_retry`` tried again until the store takes it.
        ``redacted_in``: the id of the vault a producer redacted it against (a Kafka envelope's
        ``vault``): InputError, nothing stored, unless it is the group's vault in this store. An episode
        keyed by an id a stored episode with other content holds: EpisodeConflict, nothing stored. ``after``:
        the episodes it will be given next, in order (a Kafka lane's buffered ones, each already checked
        against its producer's vault): those of the episode's group are redacted and run ahead meanwhile
        (``IngestOptions.in_flight``); those it is never given are given up with :meth:`drop_ahead`."""
        self._runner.model()
        if redacted_in is not None:
            await self.vault("an episode redacted by its producer").check_vault(episode.group_id, redacted_in)
        check = partial(self.conflict_check().episode, episode)  # a store read: retried as the run is
        if (conflict := await (store_retry.run(check) if store_retry else check())) is not None:
            raise conflict
        episode = await self._privacy.episode(episode)
        options = self._options(mode, None)
        mine = [later for later in after if later.group_id == episode.group_id][: options.in_flight - 1]
        job = Job(options, emit or ignore, after=[await self._privacy.episode(later) for later in mine])
        step = partial(self._runner.accept_and_run, episode, job)
        return await (store_retry.run(step) if store_retry else step())

    async def drop_ahead(self, episodes: Sequence[Episode]) -> None:
        """Give up the runs ahead of ``episodes`` (a lane's partition revoked): their claims released,
        the episodes left pending for whoever gets them."""
        await self._runner.lookahead.drop(episodes)

    async def finish_batch(self, results: Sequence[EpisodeResult]) -> list[ProgressEvent]:
        """End a batch of episodes run one at a time with :meth:`process` (a Kafka worker's lane): the
        summaries each of their groups owes (this batch's, and any an earlier run left: a crashed
        worker's, paid when its episodes come again), then the after-batch work over those that ran here
        (not the skipped or failed ones); returns the events of both. A group's summaries that fail to be
        written are logged, their marks left to its next batch."""
        groups = [r.episode.group_id for r in results]
        return await self._batch_end.run_batch_end(self.options, groups, enumerate(results), keep_going=True)

    async def pay_owed_summaries(self, group_id: str) -> None:
        """The summaries ``group_id`` owes, written now as a batch's end writes them (charged to an
        episode of the group), outside any batch: after a forgetting marked them owed. Nothing with
        ``summary_mode="off"``; a failure is raised, the marks left to the group's next batch."""
        await self._batch_end.run_batch_end(self.options, [group_id], [])

    # --- doors that run in the background -------------------------------------------------------------

    async def start(self, groups: Iterable[str], emit: Emit) -> list[str]:
        """Run accepted episodes in the background from now on, each group in its own task
        (``background``), their progress events sent to ``emit``; resume those of ``groups`` that have
        pending episodes or owed summaries (returned). Without an LLM nothing runs: accepted episodes wait
        ``pending`` for a process that has one."""
        return await self._background.start(groups, emit)

    async def stop(self) -> None:
        """Stop the background runs; an interrupted episode stays ``pending`` (resumed at the next start)."""
        await self._background.stop()

    async def accept(self, items: Iterable[Item]) -> list[Episode]:
        """Validate every item and check its id (as ``_episodes``), then store each ``pending`` in order,
        both under the groups' accepting locks (two requests at once cannot both take an id), and wake
        their background runs. Returns the stored episodes, in order: one stored before as it is (a
        failed one set pending again)."""
        inputs = [EpisodeInput.coerce(item) for item in items]
        groups = sorted({item.group_id for item in inputs})  # locks taken in one order: no deadlock
        async with contextlib.AsyncExitStack() as held:
            for group_id in groups:
                await held.enter_async_context(self._accepting.setdefault(group_id, asyncio.Lock()))
            episodes = await self._episodes(inputs)
            stored = [await self._accepted(episode) for episode in episodes]
        for group_id in groups:
            self._background.wake(group_id)
        return stored

    async def _accepted(self, episode: Episode) -> Episode:
        saved, done = await save_pending(self.store, episode)
        if done is None:
            self._background.send(EpisodeSaved(episode.group_id, saved.uuid, 0))
        return done or saved

    async def requeue_failed(self, group_id: str) -> list[Episode]:
        """Set the group's failed episodes pending again, in their order; the background run runs them."""
        again = await requeue(self.store, group_id)
        if again:
            self._background.wake(group_id)
        return again

    # --- changing what was ingested -------------------------------------------------------------------

    def group_lock(self, group_id: str) -> asyncio.Lock:
        """The group's one lock (held while one of its episodes is run here): what other changes of
        the group take so that they never run beside one of its episodes (corrections by hand)."""
        return self._runner.lock(group_id)

    async def remove_episode(self, group_id: str, uuid: str) -> RemovalResult:
        """Delete an episode with provenance cleanup (facts it retired are restored), regenerate the
        summaries of the entities it touched, then hand it to the after-batch work (its conversation's
        summary is folded again from the start). Waits for a run of the group in flight here: an episode
        removed while it waited is not stored again by its run."""
        self._runner.model()
        async with self._runner.lock(group_id):
            episode = await self.store.get_episode(group_id, uuid)
            deletion = await self.store.delete_episode(group_id, uuid)
            refresh = await self._batch_end.refresh(group_id, deletion.touched_entities, charged_to=None)
        if episode is not None:
            await self._batch_end.after_removal(episode)
        return RemovalResult(deletion, refresh.entities, refresh.report)

    # --- personal data --------------------------------------------------------------------------------

    @property
    def redactor(self) -> Redactor | None:
        """What replaces personal data at the door (``IngestOptions.redact``), None when it is off: the
        doors that are not episodes (a search, a question, a correction, a load, a Kafka producer) use
        it too, so every text of a group is redacted into its one vault."""
        return self._privacy.redactor

    async def redacted(self, episode: Episode) -> tuple[Episode, str | None]:
        """``episode`` as the door would store it, and the id of the vault its placeholders are numbered
        in (None when nothing was replaced): for a producer that redacts before publishing."""
        return await self._privacy.redacted(episode)

    def vault(self, feature: str) -> Redactor:
        """The store's redaction vault under the policy (or every kind when it is off): reading
        originals back, reserving a loaded dump's placeholders, checking a producer's vault.
        StoreRoleMissing (naming ``feature``) when the store has no vault."""
        return self._privacy.vault(feature)

    # --- internals ------------------------------------------------------------------------------------

    def conflict_check(self) -> ConflictCheck:
        """Ids taken by other content (``conflicts``), compared as this door stores them (redacted)."""
        return ConflictCheck(self.store, self._privacy.episode)

    async def _episodes(self, items: Iterable[Item]) -> list[Episode]:
        """Every item validated and its id checked first (nothing redacted or stored when one is invalid
        or an EpisodeConflict), then built."""
        inputs = [EpisodeInput.coerce(item) for item in items]
        await self.conflict_check().refuse(inputs)
        return [await self._episode(item) for item in inputs]

    def _options(self, mode: Mode | None, summary_mode: SummaryMode | None) -> IngestOptions:
        options = self.options
        if mode is not None:
            options = replace(options, mode=mode)
        if summary_mode is not None and not (summary_mode == "batch" and options.summaries.mode == "off"):
            options = replace(options, summaries=replace(options.summaries, mode=summary_mode))
        return options

    async def _episode(self, item: EpisodeInput) -> Episode:
        return await self._privacy.episode(item.to_episode(created_at=self._created_at()))

    async def _run_groups(self, episodes: list[Episode], options: IngestOptions, emit: Emit) -> None:
        """The batch run (``batches``: groups concurrently, each in order), then ended."""
        groups, ran = await run_groups(self._runner, episodes, options, emit)
        await self._batch_end.run_batch_end(options, groups, ran, emit)
