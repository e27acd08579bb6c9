"""The server's door to the ingestion queue (``KnowledgeGraph.ingestor``): it constructs none of its own.

``accept`` records the group (:class:`GroupRegistry`), then hands the episodes to the queue, which answers
once every one is stored ``pending`` (an episode the server answered 202 for survives a crash) and runs
them in the background, each group in order, paced by the graph's ``priority`` (reads first: the server
runs the reads someone waits for in its foreground). On start the queue resumes every group of the
registry (a small append-only file: the store has no list of groups) that still has ``pending``
episodes; an episode another process is ingesting is left to it (claims). After each pass over a group's
pending episodes the queue brings its conversations (and communities, if it has some) up to date
(``Ingestor.after_batch``), as a library batch does.

Progress events of a group go to the subscribers of its event stream (bounded queues; a subscriber too
slow to keep up loses events, never blocks ingestion).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from collections.abc import AsyncGenerator, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from ..client import KnowledgeGraph
from ..episodes.events import EpisodeDone, EpisodeFailed, EpisodeResult, EpisodeSaved, ProgressEvent
from ..episodes.inputs import EpisodeInput
from ..graph.model import Episode, EpisodeStatus
from ..ingestion.runner import ALL
from ..overview import OverviewUpdated


def event_dict(event: ProgressEvent) -> dict[str, Any]:
    """A progress event as JSON-ready data: its type and its fields (results reduced to a status; the
    conversations and communities after a batch as their ``to_dict``)."""
    if isinstance(event, OverviewUpdated):
        return event.to_dict()
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


class Intake:
    """The server's intake: episodes taken into ``kg.ingestor`` (paced by :attr:`priority`), their
    progress events fanned out per group."""

    def __init__(self, kg: KnowledgeGraph, registry: GroupRegistry, *, queue_size: int = 1000) -> None:
        self.kg, self.registry, self.queue_size = kg, registry, queue_size
        self._subscribers: dict[str, set[asyncio.Queue[dict[str, Any]]]] = {}
        self.priority = kg.priority
        self.finished: dict[str, int] = {"done": 0, "failed": 0}
        """Episodes the background runs took to ``done`` or ``failed`` (the metrics' counts)."""
        self._waiting: set[tuple[str, str]] = set()

    @property
    def queue_depth(self) -> int:
        """Episodes accepted (or found pending at start, or set pending to retry) not run yet."""
        return len(self._waiting)

    # --- lifecycle ------------------------------------------------------------------------------
    async def resume(self) -> list[str]:
        """Start ingesting in the background (reads first) and resume every known group that has
        pending episodes; returns those groups."""
        for group_id in self.registry.groups:  # read before the runs start: none can end unseen
            pending = await self.kg.ingestor.store.episodes(group_id, status=EpisodeStatus.PENDING, limit=ALL)
            self._waiting.update((group_id, e.uuid) for e in pending)
        return await self.kg.ingestor.start(self.registry.groups, self._publish)

    async def close(self) -> None:
        await self.kg.ingestor.stop()

    # --- the doors --------------------------------------------------------------------------------
    async def accept(self, group_id: str, items: Sequence[EpisodeInput]) -> list[Episode]:
        """Record the group, then store each episode ``pending`` (one already stored is returned as it
        is, a failed one is set pending again); the queue runs them. Returns the stored episodes."""
        await asyncio.to_thread(self.registry.add, group_id)
        stored = await self.kg.ingestor.accept(items)
        if self.kg.llm is None:  # nothing runs (no EpisodeSaved either): what is accepted waits
            self._waiting.update((e.group_id, e.uuid) for e in stored if e.status == EpisodeStatus.PENDING)
        return stored

    def removed(self, group_id: str, uuid: str) -> None:
        """An episode was deleted: it no longer waits, if it did."""
        self._waiting.discard((group_id, uuid))

    async def retry_failed(self, group_id: str) -> list[Episode]:
        """Set the group's failed episodes pending again, in their order; the queue runs them."""
        again = await self.kg.ingestor.requeue_failed(group_id)
        self._waiting.update((group_id, e.uuid) for e in again)  # no run of them began before this
        return again

    # --- events ---------------------------------------------------------------------------------
    def _count(self, event: ProgressEvent) -> None:
        """The metrics' view of an event: accepted (waiting), or ended (no longer waiting; counted unless
        skipped as done already)."""
        key = (event.group_id, event.episode_uuid)
        if isinstance(event, EpisodeSaved):
            self._waiting.add(key)
        elif isinstance(event, EpisodeDone | EpisodeFailed):
            self._waiting.discard(key)
            result = event.result
            if result is not None and not result.skipped:
                status = result.episode.status.value
                self.finished[status] = self.finished.get(status, 0) + 1

    def _publish(self, event: ProgressEvent) -> None:
        self._count(event)
        subscribers = self._subscribers.get(event.group_id)
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
