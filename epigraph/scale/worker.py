"""``epigraph worker``: one member of a Kafka consumer group that ingests its partitions' episodes.

Guarantees (at-least-once delivery + deterministic episode ids = every episode takes effect once):

- **in order per group**: a topic is keyed by group id, so a group's episodes are on one partition; each
  assigned partition has one *lane* (a task) that hands its episodes strictly one after another to the
  graph's ingestion queue (``Ingestor.process``: the group lock, the claim, the episode's one atomic
  write). Different partitions run concurrently; the LLM client's limiter bounds the calls of the whole
  process.
- **commit after the write**: auto-commit is off; a lane commits ``offset + 1`` only once the episode's
  write (``done`` or ``failed``) is in the store. A crash before the commit re-delivers the episode to the
  next owner, which redoes it from scratch if it is still ``pending`` (nothing of it was written) or
  skips it if it is ``done`` (the write landed; the redelivery is a no-op: no LLM call, no write). A
  previous owner still running it (frozen past its session timeout) holds its claim: the next owner
  waits until it is done (then skips it) or the claim lapses (then runs it).
- **rebalance**: on revoke each lane of a revoked partition stops taking episodes; an episode in flight
  gets ``revoke_grace_s`` to finish (and commit), else it is cancelled without a commit and the next
  owner redoes it. Fetching never stops while episodes run (partitions with a full buffer are paused),
  so a slow episode never exceeds ``max.poll.interval.ms`` and never costs the worker its membership.
- **after a batch**: once a lane ran what it had fetched (or ``buffer`` episodes), it ends the batch with
  the queue's ``finish_batch``: the entity summaries its groups owe (``summary_mode="batch"``, or marks a
  killed run left: a crashed worker's are paid when its episodes come again, as skipped ones), then
  the conversation summaries of the chains it touched and the communities of groups that have some
  (``overview.upkeep``): calls per batch, never per episode. An upkeep lost to a crash or a revoke is
  caught up by the next batch of the chain (or group), wherever it runs.
- **failures**: an episode that fails (the LLM after its retries, a reply that cannot be used) is saved
  ``failed`` with its reason by the ingestor; a payload that is not an episode cannot be stored, nor one
  its producer redacted into another store's vault (envelope v2: its placeholders mean other values
  here, ``privacy.redactor.Redactor.check_vault``), nor one whose id a stored episode with other
  content holds (``errors.EpisodeConflict``: refused, never dropped). All are
  published to the dead-letter topic ``<topic>.dead`` with the reason, then committed, so the group moves
  on (``epigraph retry`` / the server's retry route rerun failed episodes later). A store that refuses
  a write (down, unreachable) is retried with backoff (the queue's ``StoreRetry``) and never committed
  past: an outage stops progress on that partition, it does not drop episodes.

The LLM limit is per process: with N workers sharing one endpoint limit L, give each ``L / N``
(``worker_config.share_llm_limits``; ``epigraph worker --llm-share N`` divides
``EPIGRAPH_LLM_MAX_IN_FLIGHT``, ``_RPM`` and ``_TPM`` by N).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.abc import ConsumerRebalanceListener
from aiokafka.errors import KafkaError

from ..client import KnowledgeGraph
from ..episodes.events import DUPLICATE, EpisodeResult
from ..errors import EpisodeConflict, InputError
from ..graph.model import Episode
from ..ingestion.retry import StoreRetry
from ..overview import OverviewUpdated
from ..publish.envelope import Envelope
from ..publish.envelope import decode as decode_envelope
from ..tokens import load_encoding
from .logs import note
from .worker_config import Counts, WorkerConfig

log = logging.getLogger("epigraph.worker")

@dataclass(eq=False)
class _Lane:
    """One assigned partition: its buffered records, run one at a time by ``task``."""

    tp: Any
    queue: deque[Any] = field(default_factory=deque)
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    idle: asyncio.Event = field(default_factory=asyncio.Event)
    closing: bool = False
    task: asyncio.Task[None] | None = None
    ran: list[EpisodeResult] = field(default_factory=list)
    """Results of the episodes run since the lane's last batch ended."""


async def _watch_loop(period_s: float = 0.5, warn_s: float = 2.0) -> None:
    """Log when the event loop stalls: the consumer's heartbeats share it, and a stall longer than the
    session timeout costs the worker its partitions (while its lanes still run: a zombie)."""
    loop = asyncio.get_running_loop()
    while True:
        started = loop.time()
        await asyncio.sleep(period_s)
        late = loop.time() - started - period_s
        if late > warn_s:
            note(log, "loop.stalled", logging.WARNING, seconds=round(late, 2))


class _Listener(ConsumerRebalanceListener):  # type: ignore[misc]
    def __init__(self, worker: KafkaWorker) -> None:
        self.worker = worker

    async def on_partitions_revoked(self, revoked: Sequence[Any]) -> None:
        await self.worker.release(list(revoked))

    async def on_partitions_assigned(self, assigned: Sequence[Any]) -> None:
        self.worker.assign(list(assigned))


class KafkaWorker:
    """Consumes ``config.topic`` in ``config.group_id`` and ingests into ``kg`` (module docstring)."""

    def __init__(
        self,
        kg: KnowledgeGraph,
        config: WorkerConfig,
        decode: Callable[[bytes | None], Envelope] | None = None,
    ) -> None:
        self.kg, self.config = kg, config
        self.decode = decode or decode_envelope
        self.counts = Counts()
        self._lanes: dict[Any, _Lane] = {}
        self._consumer: Any = None
        self._producer: Any = None

    async def run(self, stop: asyncio.Event) -> Counts:
        """Consume until ``stop`` is set; then finish or abandon what runs, leave the group, return."""
        cfg = self.config
        await self.kg.open()
        # Slow first-use loads hold the GIL (the BPE tables: seconds on a loaded machine, see
        # docs/decisions/2026-11-25-kafka-workers.md) and would stall the consumer's heartbeats
        # mid-episode: done before joining the group.
        await asyncio.to_thread(load_encoding)
        self._producer = AIOKafkaProducer(
            bootstrap_servers=cfg.bootstrap, acks="all", enable_idempotence=True
        )
        self._consumer = AIOKafkaConsumer(
            bootstrap_servers=cfg.bootstrap, group_id=cfg.group_id, client_id=cfg.client_id,
            enable_auto_commit=False, auto_offset_reset="earliest", max_poll_records=cfg.buffer,
            session_timeout_ms=cfg.session_timeout_ms, heartbeat_interval_ms=cfg.heartbeat_interval_ms,
            rebalance_timeout_ms=max(cfg.rebalance_timeout_ms, int(cfg.revoke_grace_s * 1000) + 10_000),
        )  # fmt: skip
        self._consumer.subscribe([cfg.topic], listener=_Listener(self))
        await self._producer.start()
        try:
            await self._consumer.start()
            note(log, "worker.started", topic=cfg.topic, group_id=cfg.group_id, client_id=cfg.client_id,
                 store=self.kg.settings.store_kind)  # fmt: skip
            await self._fetch(stop)
        finally:
            await self.release(list(self._lanes))
            with contextlib.suppress(Exception):
                await self._consumer.stop()
            await self._producer.stop()
            note(log, "worker.stopped", **vars(self.counts))
        return self.counts

    # --- fetching and the partitions' lanes -------------------------------------------------------
    async def _fetch(self, stop: asyncio.Event) -> None:
        watch = asyncio.create_task(_watch_loop())
        try:
            await self._fetch_until(stop)
        finally:
            watch.cancel()

    async def _fetch_until(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            try:
                batches = await self._consumer.getmany(timeout_ms=200)
            except KafkaError as exc:
                if not getattr(exc, "retriable", False):
                    raise
                note(log, "fetch.retry", logging.WARNING, reason=repr(exc))
                await asyncio.sleep(self.config.retry_s)
                continue
            for tp, records in batches.items():
                lane = self._lanes.get(tp)
                if lane is None or lane.closing:
                    continue
                lane.queue.extend(records)
                lane.wake.set()
                if len(lane.queue) >= self.config.buffer:
                    self._consumer.pause(tp)

    def assign(self, tps: list[Any]) -> None:
        """Start a lane for each newly assigned partition (it reads from the committed offset)."""
        for tp in tps:
            if tp not in self._lanes:
                lane = _Lane(tp)
                lane.idle.set()
                lane.task = asyncio.create_task(self._drain(lane), name=f"lane:{tp.topic}:{tp.partition}")
                self._lanes[tp] = lane
        note(log, "partitions.assigned", partitions=sorted(tp.partition for tp in tps))

    async def release(self, tps: list[Any]) -> None:
        """Stop the lanes of ``tps``: an episode in flight may finish (and commit) within the grace
        period, else it is cancelled uncommitted (the next owner redoes it); buffered records are
        dropped (they were not committed either)."""
        lanes = [self._lanes.pop(tp) for tp in tps if tp in self._lanes]
        for lane in lanes:
            lane.closing = True
            lane.wake.set()
        running = [asyncio.create_task(lane.idle.wait()) for lane in lanes if not lane.idle.is_set()]
        abandoned = 0
        if running:
            _, late = await asyncio.wait(running, timeout=self.config.revoke_grace_s)
            for waiter in late:
                waiter.cancel()
            abandoned = len(late)
            self.counts.abandoned += abandoned
        # A lane out of its episode ends by itself (closing), giving up its runs ahead in its finally;
        # only one still in an episode past the grace (or not ending within it) is cancelled.
        tasks = {lane.task: lane for lane in lanes if lane.task is not None}
        for task, lane in tasks.items():
            if not lane.idle.is_set():
                task.cancel()
        if tasks:
            _, stuck = await asyncio.wait(tasks, timeout=self.config.revoke_grace_s)
            for task in stuck:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        if lanes:
            note(log, "partitions.released", partitions=sorted(lane.tp.partition for lane in lanes),
                 abandoned=abandoned)  # fmt: skip

    async def _drain(self, lane: _Lane) -> None:
        try:
            await self._drain_until_closed(lane)
        finally:
            await self.kg.ingestor.drop_ahead([m.to_episode() for m in self._decoded(lane.queue, whole=True)])

    async def _drain_until_closed(self, lane: _Lane) -> None:
        while not lane.closing:
            if lane.ran and (not lane.queue or len(lane.ran) >= self.config.buffer):
                await self._end_batch(lane)
                continue
            if not lane.queue:
                lane.wake.clear()
                await lane.wake.wait()
                continue
            record = lane.queue[0]
            lane.idle.clear()
            try:
                result = await self._handle(record, after=await self._ahead(islice(lane.queue, 1, None)))
                if result is not None:
                    lane.ran.append(result)
                await self._commit(lane.tp, record.offset + 1)
                lane.queue.popleft()
            finally:
                lane.idle.set()
            if len(lane.queue) <= self.config.buffer // 2 and lane.tp in self._consumer.paused():
                self._consumer.resume(lane.tp)

    def _decoded(self, records: Iterable[Any], whole: bool = False) -> list[Envelope]:
        """The messages of the first buffered records (as many as ``IngestOptions.in_flight``, or all of
        them when ``whole``), in order, those that decode (the others are dead-lettered in their turn)."""
        messages = []
        for record in islice(records, None if whole else self.kg.ingestor.options.in_flight):
            with contextlib.suppress(InputError):
                messages.append(self.decode(record.value))
        return messages

    async def _ahead(self, records: Iterable[Any]) -> list[Episode]:
        """The episodes of buffered records to run ahead (``IngestOptions.in_flight``): those that decode,
        less those redacted against another store's vault (refused, nothing stored, in their turn)."""
        episodes = []
        for message in self._decoded(records):
            episode = message.to_episode()
            if message.vault is not None:
                try:
                    await self.kg.ingestor.vault("an episode redacted by its producer").check_vault(
                        episode.group_id, message.vault
                    )
                except InputError:
                    continue
            episodes.append(episode)
        return episodes

    async def _end_batch(self, lane: _Lane) -> None:
        """The queue's end of a batch over the episodes the lane ran since its last batch: the summaries
        their groups owe, then the after-batch work (offsets are committed already: a crash here loses
        no episode, the marks and the chain's next batch catch up)."""
        ran, lane.ran = lane.ran, []
        lane.idle.clear()
        try:
            events = await self.kg.ingestor.finish_batch(ran)
        finally:
            lane.idle.set()
        for event in events:
            if isinstance(event, OverviewUpdated):
                note(log, "batch.overview", group=event.group_id, conversations=len(event.conversations),
                     llm_calls=event.report.llm_calls, error=event.error)  # fmt: skip

    async def _commit(self, tp: Any, offset: int) -> None:
        try:
            await self._consumer.commit({tp: offset})
        except KafkaError as exc:  # the partition moved: its next owner redoes the episode (a no-op)
            self.counts.commit_failures += 1
            note(log, "offset.commit_failed", logging.WARNING, partition=tp.partition, offset=offset,
                 reason=type(exc).__name__)  # fmt: skip

    # --- one record ---------------------------------------------------------------------------------
    async def _handle(self, record: Any, after: Sequence[Episode] = ()) -> EpisodeResult | None:
        """Decode and ingest one record; its result (None for a payload that is no episode)."""
        where = {"partition": record.partition, "offset": record.offset}
        try:
            message = self.decode(record.value)
        except InputError as exc:
            self.counts.failed += 1
            await self._dead(record, f"bad payload: {exc}", None)
            return None
        episode = message.to_episode()
        try:
            result = await self._ingest(episode, where, message.vault, after)
        except (InputError, EpisodeConflict) as exc:  # redacted into another store's vault; or its id
            self.counts.failed += 1  # taken by another episode with other content: refused, never dropped
            await self._dead(record, f"refused: {exc}", episode)
            return None
        fields = {"group": episode.group_id, "uuid": episode.uuid, **where}
        if result.skipped:
            self.counts.skipped += 1
            duplicate = DUPLICATE in result.report.warnings  # done by another writer meanwhile
            note(log, "episode.skipped", **fields, reason="duplicate" if duplicate else "already done")
        elif result.ok:
            self.counts.done += 1
            report = result.report
            note(log, "episode.done", **fields, llm_calls=report.llm_calls, facts=len(result.facts),
                 invalidated=len(result.invalidated))  # fmt: skip
        else:
            self.counts.failed += 1
            await self._dead(record, result.error or "failed", episode)
        return result

    async def _ingest(
        self, episode: Episode, where: dict[str, int], vault: str | None, after: Sequence[Episode]
    ) -> EpisodeResult:
        """The queue's ``process`` (which saves a failing episode ``failed`` itself); the store failing is
        retried with backoff until it takes the write."""

        def noted(exc: Exception, wait_s: float) -> None:
            note(log, "store.retry", logging.WARNING, group=episode.group_id, uuid=episode.uuid, **where,
                 reason=f"{type(exc).__name__}: {exc}"[:500], wait_s=wait_s)  # fmt: skip

        retry = StoreRetry(noted, first_s=self.config.retry_s)
        return await self.kg.ingestor.process(episode, store_retry=retry, redacted_in=vault, after=after)

    async def _dead(self, record: Any, reason: str, episode: Episode | None) -> None:
        """Publish the record to the dead-letter topic with ``reason`` (retried until Kafka takes it)."""
        letter = {
            "v": 1, "reason": reason, "group": episode.group_id if episode else None,
            "uuid": episode.uuid if episode else None, "topic": record.topic,
            "partition": record.partition, "offset": record.offset,
            "payload": record.value.decode("utf-8", "replace") if record.value is not None else None,
        }  # fmt: skip
        wait = self.config.retry_s
        while True:
            try:
                await self._producer.send_and_wait(
                    self.config.dead_topic, json.dumps(letter).encode(), key=record.key
                )
                break
            except KafkaError as exc:
                note(log, "dead_letter.retry", logging.WARNING, reason=repr(exc), wait_s=wait)
                await asyncio.sleep(wait)
                wait = min(wait * 2, 30.0)
        self.counts.dead += 1
        note(log, "episode.dead_lettered", logging.WARNING, group=letter["group"], uuid=letter["uuid"],
             partition=record.partition, offset=record.offset, reason=reason[:500])  # fmt: skip
