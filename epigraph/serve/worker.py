"""Ingestion inside the server: accept (store ``pending``), then process in order per group.

``accept`` returns only after every episode of a request is stored ``pending`` (or found already stored),
so an episode the server answered 202 for survives a crash. One task per group drains the group's
``pending`` episodes in the order they were accepted (``created_at``, strictly increasing here); groups
run concurrently and the LLM client's one limiter bounds the calls. On start the server resumes every
group named in its group registry (a small append-only file written before a group's first episode is
stored: the store has no list of groups) that still has ``pending`` episodes.

Progress events of a group go to the subscribers of its event stream (bounded queues; a subscriber too
slow to keep up loses events, never blocks ingestion).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
from collections.abc import AsyncGenerator, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from ..client import KnowledgeGraph
from ..graph.model import Episode, EpisodeStatus, IncreasingClock
from ..pipeline.events import EpisodeDone, EpisodeFailed, EpisodeResult, ProgressEvent
from ..pipeline.ingestor import Ingestor
from ..pipeline.inputs import EpisodeInput
from .priority import Priority, YieldingLLM, YieldingStore

log = logging.getLogger("epigraph.serve")

_ALL = 1_000_000


def event_dict(event: ProgressEvent) -> dict[str, Any]:
    """A progress event as JSON-ready data: its type and its fields (results reduced to a status)."""
    data: dict[str, Any] = {"type": type(event).__name__}
    for name, value in asdict(event).items():
        if name != "result":
            data[name] = value
    result = getattr(event, "result", None)
    if isinstance(result, EpisodeResult):
        data["status"] = result.episode.status.value
        data["error"] = result.episode.error
    return data


class GroupRegistry:
    """The groups that ever had an episode accepted, one JSON string per line (appended, fsynced)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.groups: set[str] = set()
        if path is not None and path.exists():
            for line in path.read_text(encoding="utf-8").splitlines():
                with contextlib.suppress(ValueError):
                    self.groups.add(str(json.loads(line)))

    def add(self, group_id: str) -> None:
        if group_id in self.groups:
            return
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as f:
                f.write(json.dumps(group_id) + "\n")
                f.flush()
                os.fsync(f.fileno())
        self.groups.add(group_id)


class Workers:
    """Accepts episodes and runs them through ``kg.ingestor`` (see the module docstring)."""

    def __init__(self, kg: KnowledgeGraph, registry: GroupRegistry, *, queue_size: int = 1000) -> None:
        self.kg, self.registry, self.queue_size = kg, registry, queue_size
        self._wake: dict[str, asyncio.Event] = {}
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._subscribers: dict[str, set[asyncio.Queue[dict[str, Any]]]] = {}
        self._accept_locks: dict[str, asyncio.Lock] = {}
        self._run_locks: dict[str, asyncio.Lock] = {}
        self._created_at = IncreasingClock()
        self.processed = 0
        self.priority = Priority()
        self._ingestor: Ingestor | None = None

    @property
    def ingestor(self) -> Ingestor:
        """The graph's ingestor, seen through :mod:`.priority`: its steps wait while reads are answered."""
        if self._ingestor is None:
            base = self.kg.ingestor
            store: Any = YieldingStore(base.store, self.priority)
            llm = YieldingLLM(base.llm, self.priority)
            self._ingestor = Ingestor(store, llm, base.embedder, base.options)
        return self._ingestor

    # --- lifecycle ------------------------------------------------------------------------------
    async def resume(self) -> list[str]:
        """Start a worker for every known group that has pending episodes; returns those groups."""
        resumed = []
        for group_id in sorted(self.registry.groups):
            pending = await self.kg.store.episodes(group_id, status=EpisodeStatus.PENDING, limit=1)
            if pending:
                self._kick(group_id)
                resumed.append(group_id)
        return resumed

    async def close(self) -> None:
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks.clear()

    # --- accepting ------------------------------------------------------------------------------
    async def accept(self, group_id: str, items: Sequence[EpisodeInput]) -> list[Episode]:
        """Store each episode ``pending`` (one already stored is returned as it is, a failed one is
        set pending again) and wake the group's worker. Returns the stored episodes, in order."""
        out: list[Episode] = []
        async with self._accept_locks.setdefault(group_id, asyncio.Lock()):
            await asyncio.to_thread(self.registry.add, group_id)
            for item in items:
                episode = item.to_episode(created_at=self._created_at())
                stored = await self.kg.store.get_episode(group_id, episode.uuid)
                if stored is not None and stored.status != EpisodeStatus.FAILED:
                    out.append(stored)
                    continue
                if stored is not None:
                    episode = stored.model_copy(update={"status": EpisodeStatus.PENDING, "error": None})
                await self.kg.store.save_episode(episode)
                out.append(episode)
        self._kick(group_id)
        return out

    async def retry_failed(self, group_id: str) -> list[Episode]:
        """Set the group's failed episodes pending again, in their order; the worker runs them."""
        failed = await self.kg.store.episodes(
            group_id, status=EpisodeStatus.FAILED, limit=_ALL, newest_first=False
        )
        again = [e.model_copy(update={"status": EpisodeStatus.PENDING, "error": None}) for e in failed]
        for episode in again:
            await self.kg.store.save_episode(episode)
        if again:
            self._kick(group_id)
        return again

    # --- running --------------------------------------------------------------------------------
    def _kick(self, group_id: str) -> None:
        self._wake.setdefault(group_id, asyncio.Event()).set()
        task = self._tasks.get(group_id)
        if task is None or task.done():
            self._tasks[group_id] = asyncio.create_task(self._drain(group_id), name=f"ingest:{group_id}")

    async def _drain(self, group_id: str) -> None:
        wake = self._wake[group_id]
        while True:
            wake.clear()
            pending = await self.kg.store.episodes(
                group_id, status=EpisodeStatus.PENDING, limit=_ALL, newest_first=False
            )
            pending.sort(key=lambda e: (e.created_at, e.uuid))
            for episode in pending:
                await self._run_one(group_id, episode)
            if not pending:
                await wake.wait()

    def lock(self, group_id: str) -> asyncio.Lock:
        """Held while one of the group's episodes is checked and run; a removal takes it too, so an
        episode deleted while it waited is not stored again by its run."""
        return self._run_locks.setdefault(group_id, asyncio.Lock())

    async def _run_one(self, group_id: str, episode: Episode) -> None:
        async with self.lock(group_id):
            await self._run_checked(group_id, episode)

    async def _run_checked(self, group_id: str, episode: Episode) -> None:
        current = await self.kg.store.get_episode(group_id, episode.uuid)
        if current is None or current.status != EpisodeStatus.PENDING:
            return  # deleted, or already run meanwhile
        try:
            result = await self.ingestor.process(current, emit=lambda e: self._publish(group_id, e))
        except Exception as exc:  # the store failed: leave it pending, retried on the next wake
            log.error("ingesting episode %s of group %s failed: %s", episode.uuid, group_id, exc)
            await asyncio.sleep(1.0)
            self._wake[group_id].set()
            return
        self.processed += 1
        if not result.ok:
            log.warning("episode %s of group %s failed: %s", episode.uuid, group_id, result.error)

    # --- events ---------------------------------------------------------------------------------
    def _publish(self, group_id: str, event: ProgressEvent) -> None:
        subscribers = self._subscribers.get(group_id)
        if not subscribers:
            return
        data = event_dict(event)
        for queue in subscribers:
            with contextlib.suppress(asyncio.QueueFull):
                queue.put_nowait(data)

    async def events(self, group_id: str) -> AsyncGenerator[dict[str, Any], None]:
        """The group's progress events as they happen, with a keep-alive every 15 s of silence."""
        queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue(self.queue_size)
        self._subscribers.setdefault(group_id, set()).add(queue)
        try:
            while True:
                try:
                    yield await asyncio.wait_for(queue.get(), timeout=15.0)
                except TimeoutError:
                    yield {"type": "KeepAlive"}
        finally:
            self._subscribers[group_id].discard(queue)


def finished(event: dict[str, Any]) -> bool:
    """Whether an event dict ends an episode's run (done or failed)."""
    return event.get("type") in (EpisodeDone.__name__, EpisodeFailed.__name__)
