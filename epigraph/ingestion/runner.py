"""How the ingestion queue (``ingestor``) runs one episode, the same from every door:

1. **accepted**: stored ``pending`` (:func:`save_pending`; one already ``done`` is left as it is, a
   ``failed`` one is set pending again; :func:`requeue` sets a group's failed ones pending to retry them);
2. **run** (:meth:`EpisodeRunner.run`), under its group's lock: claimed (``claims``; an episode another
   live process holds is looked at again later, not run), its status read, run if still ``pending``
   (``pipeline.episode.ingest_episode``, the per-episode algorithm), the claim released;
3. its **status** decided, here and nowhere else: the algorithm computes the episode's one write and
   writes nothing (``EpisodeOutcome``); the runner stamps it ``done`` with its report and performs it
   (``unless_done``: of two writers exactly one takes effect; the other's run is reported a
   :data:`~epigraph.episodes.events.DUPLICATE` and skipped), announcing ``EpisodeDone``, or saves the
   episode ``failed`` with the reason, announcing ``EpisodeFailed``; a ``done`` episode is skipped.
   When the store itself is unavailable (``StoreUnavailable``: unreachable, or a database still
   starting) the episode is not the cause: it stays ``pending`` and the error is raised, so nothing of its
   group runs ahead of it (a ``failed`` one retried later would land after the group's later episodes,
   out of order: ``bench/robustness/fault.py``'s ``neo4j_restart``); the queue's ``StoreRetry`` runs it again.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from .. import tracing
from ..embed import Embedder
from ..episodes.events import (
    DUPLICATE,
    EpisodeDone,
    EpisodeFailed,
    EpisodeResult,
    EpisodeSaved,
    EpisodeWaiting,
    ProgressEvent,
)
from ..episodes.outcome import EpisodeOutcome
from ..errors import ConfigError, StoreError, StoreUnavailable
from ..graph.model import Episode, EpisodeStatus
from ..graph.store import Claim, IngestStore
from ..pipeline.episode import ingest_episode
from ..pipeline.metering import MeteredEmbedder, MeteredLLM, ReportBuilder
from ..pipeline.options import IngestOptions
from ..pipeline.state import Emit, EpisodeRun, Prefetched
from ..prompts.protocol import LLM
from .claims import Leases, holding
from .lookahead import Lookahead, Replaying
from .pending import ALL, pending_episodes, requeue, save_pending

__all__ = ["ALL", "NO_LLM", "EpisodeRunner", "Job", "Watch", "pending_episodes", "requeue", "save_pending"]

log = logging.getLogger("epigraph.ingest")

REMOVED = "removed before it ran"
NO_LLM = (
    "ingestion needs an LLM: set EPIGRAPH_LLM_MODEL and EPIGRAPH_LLM_BASE_URL (or EPIGRAPH_LLM_API_KEY), "
    "or pass llm= to KnowledgeGraph"
)
def ignore(_: ProgressEvent) -> None:
    return None


Watch = Callable[[EpisodeResult], None]
"""What is told of each episode run to its end (``EpisodeRunner.watch``)."""


@dataclass
class Job:
    """One episode's run as a door asks for it: its options, where its events go, its position in its
    batch, and where its run's exception is kept (``add_episode`` raises it)."""

    options: IngestOptions
    emit: Emit = ignore
    index: int = 0
    errors: list[BaseException] = field(default_factory=list)
    prefetched: Prefetched | None = None
    """Bulk mode: the episode's lines from its window's call (``bulk``)."""
    after: Sequence[Episode] = ()
    """The episodes its door runs next, in order: those of its group run ahead while it is committed
    (``lookahead``, ``IngestOptions.in_flight``)."""


class EpisodeRunner:
    """Runs episodes through ``store`` with ``llm`` and ``embedder`` (as constructed: paced in the
    server), under one lock per group and the claims of ``leases``. Without an LLM running one raises
    ConfigError."""

    def __init__(
        self,
        store: IngestStore,
        llm: LLM | None,
        embedder: Embedder,
        leases: Leases,
        watch: Watch | None = None,
    ) -> None:
        self.store, self.llm, self.embedder, self.leases = store, llm, embedder, leases
        self.watch = watch
        """Told of every episode run here once its status is decided (done or failed; not one skipped as
        done already): the webhooks. Called at once, so it must not block (it queues and returns)."""
        self._locks: dict[str, asyncio.Lock] = {}
        self.lookahead = Lookahead(store, self.model, embedder, leases)
        """The runs ahead of the episodes a door will run next (``IngestOptions.in_flight``): what each
        one's run here takes its model replies from."""

    def model(self) -> LLM:
        """The LLM runs use; ConfigError without one."""
        if self.llm is None:
            raise ConfigError(NO_LLM)
        return self.llm

    def lock(self, group_id: str) -> asyncio.Lock:
        """The group's one lock: held while one of its episodes is run, and by a removal."""
        return self._locks.setdefault(group_id, asyncio.Lock())

    async def accept_and_run(self, episode: Episode, job: Job) -> EpisodeResult:
        """Accept ``episode`` and run it (the doors that run now): its result, whatever happens."""
        outcome = await self.run(episode, job, new=True)
        if outcome is None:
            gone = episode.model_copy(update={"status": EpisodeStatus.FAILED, "error": REMOVED})
            return self._finished(gone, job)
        return outcome

    async def run(self, episode: Episode, job: Job, *, new: bool = False) -> EpisodeResult | None:
        """Stored pending first when ``new``, then claimed, run if still pending, released, all under the
        group's lock. Claimed by another live owner, it is looked at again every ``leases.poll_s`` (the lock
        let go meanwhile). None when the episode is no longer stored."""
        waiting = False
        while True:
            async with self.lock(episode.group_id):
                if new:
                    new = False
                    episode, done = await save_pending(self.store, episode)
                    if done is not None:
                        return self._finished(done, job)
                    job.emit(EpisodeSaved(episode.group_id, episode.uuid, job.index))
                await self._ahead(episode, job)
                outcome = await self._claim_and_run(episode, job)
            if not isinstance(outcome, Claim):
                return outcome
            if not waiting:
                waiting = True
                job.emit(EpisodeWaiting(episode.group_id, episode.uuid, job.index, owner=outcome.owner,
                                         until=outcome.expires_at))  # fmt: skip
            await asyncio.sleep(self.leases.poll_s)

    async def _ahead(self, episode: Episode, job: Job) -> None:
        """The next episodes of its group run ahead while ``episode`` is committed (``lookahead``); a store
        failure there only loses time (each episode's own run meets it)."""
        try:
            await self.lookahead.ahead(episode, job.after, job.options)
        except StoreError as exc:
            log.warning("running episodes of group %s ahead failed: %s", episode.group_id, exc)

    async def _claim_and_run(self, episode: Episode, job: Job) -> EpisodeResult | Claim | None:
        """Another owner's claim; or, holding our own: None (gone), the episode as it is (done: skipped;
        failed by another run since it was stored pending), or its run (pending)."""
        store, leases = self.store, self.leases
        claim = await store.claim_episode(episode.group_id, episode.uuid, leases.owner, leases.seconds)
        if claim is None:
            await self.lookahead.settle(episode)  # removed meanwhile
        if claim is None or claim.owner != leases.owner:
            return claim
        async with holding(store, episode, leases):
            current = await store.get_episode(episode.group_id, episode.uuid)
            if current is None or current.status != EpisodeStatus.PENDING:
                await self.lookahead.settle(episode)  # removed, or finished elsewhere: nothing to commit
            if current is None:
                return None
            if current.status != EpisodeStatus.PENDING:
                return self._finished(current, job)
            return await self._run_claimed(current, job)

    def _finished(self, episode: Episode, job: Job) -> EpisodeResult:
        """The result of an episode not run here: ``done`` (skipped) or ``failed`` as it is."""
        where = (episode.group_id, episode.uuid, job.index)
        if episode.status == EpisodeStatus.DONE:
            result = EpisodeResult(episode=episode, skipped=True)
            job.emit(EpisodeDone(*where, result=result))
        else:
            result = EpisodeResult(episode=episode)
            job.emit(EpisodeFailed(*where, error=episode.error or "", result=result))
        return result

    async def _run_claimed(self, episode: Episode, job: Job) -> EpisodeResult:
        """Run a pending, claimed episode: ``done`` by its write, or saved ``failed`` with the reason."""
        model, embedder_used = self.model(), self.embedder
        if (replies := self.lookahead.take(episode)) is not None:  # its run ahead's replies first
            model = embedder_used = Replaying(model, self.embedder, replies)
        llm, embedder = MeteredLLM(model), MeteredEmbedder(embedder_used)
        if job.prefetched is not None:  # the window call is charged to its first turn
            llm.records.extend(job.prefetched.records)
        report = ReportBuilder(llm, embedder)
        options, emit, index = job.options, job.emit, job.index
        now = options.clock()
        run = EpisodeRun(
            episode, self.store, llm, embedder, options, report, emit, index, now, job.prefetched
        )
        with tracing.current("ingest episode", _episode_attributes(episode)) as span:
            try:
                try:
                    outcome = await ingest_episode(run)
                finally:
                    await self.lookahead.settle(episode, report)
                result = await self._write_done(run, outcome)
            except StoreUnavailable as exc:
                span.fail(type(exc).__name__, "the store is unavailable: the episode stays pending")
                raise  # the store failed, not the episode: it stays pending (module docstring)
            except Exception as exc:
                job.errors.append(exc)
                reason = f"{type(exc).__name__}: {exc}"
                failed = episode.model_copy(
                    update={"status": EpisodeStatus.FAILED, "error": reason, "report": report.build()}
                )
                await self.store.save_episode(failed)
                result = EpisodeResult(episode=failed)
                span.fail(type(exc).__name__, reason)
                where = (episode.group_id, episode.uuid, job.index)
                job.emit(EpisodeFailed(*where, error=reason, result=result))
            span.set(_result_attributes(result))
        if self.watch is not None and not result.skipped:
            try:
                self.watch(result)
            except Exception:  # what watches never changes what ran: the episode is written as it is
                log.exception("the watch of episode %s failed", episode.uuid)
        return result

    async def _write_done(self, run: EpisodeRun, outcome: EpisodeOutcome) -> EpisodeResult:
        """The run's one write, its episode stamped ``done`` with its report, and ``EpisodeDone``. A write
        the store refuses (another writer finished the episode first: a Kafka worker that took the
        partition over while this one was frozen) changed nothing: the run is reported a duplicate and
        skipped."""
        done = outcome.write.episode.model_copy(
            update={"status": EpisodeStatus.DONE, "error": None, "report": run.report.build()}
        )
        if await self.store.write_episode(replace(outcome.write, episode=done, unless_done=True)):
            result = replace(outcome.result, episode=done)
        else:
            run.report.warn(DUPLICATE)
            skipped = done.model_copy(update={"report": run.report.build()})
            result = EpisodeResult(episode=skipped, skipped=True)
        run.event(EpisodeDone, result=result)
        return result


def _episode_attributes(episode: Episode) -> dict[str, str]:
    return {"epigraph.group_id": episode.group_id, "epigraph.episode.uuid": episode.uuid}


def _result_attributes(result: EpisodeResult) -> dict[str, str | int | bool]:
    report = result.report
    return {
        "epigraph.episode.status": result.episode.status.value,
        "epigraph.episode.skipped": result.skipped,
        "epigraph.episode.llm_calls": report.llm_calls,
        "epigraph.episode.input_tokens": report.input_tokens,
        "epigraph.episode.output_tokens": report.output_tokens,
        "epigraph.episode.facts": len(result.facts),
        "epigraph.episode.invalidated": len(result.invalidated),
    }
