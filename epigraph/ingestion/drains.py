"""Background draining: one task per group runs the group's ``pending`` episodes, woken when some arrive;
and the one policy for a store that fails under a run (retry with backoff, never give the episode up).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")

Notify = Callable[[Exception, float], None]
"""Told of each store failure and the wait before the next try."""


@dataclass(frozen=True)
class StoreRetry:
    """A step that raised (the store failed: a failing episode is saved ``failed`` by the step itself)
    is tried again after ``first_s``, doubling up to ``max_s``, until it goes through."""

    notify: Notify
    first_s: float = 1.0
    max_s: float = 30.0

    async def run(self, step: Callable[[], Awaitable[T]]) -> T:
        wait = self.first_s
        while True:
            try:
                return await step()
            except Exception as exc:
                self.notify(exc, wait)
                await asyncio.sleep(wait)
                wait = min(wait * 2, self.max_s)


class Drains:
    """``drain(group)`` runs while a group may have pending episodes: after each pass that found some it
    runs again, else it waits for :meth:`kick`. Groups drain concurrently, each in one task."""

    def __init__(self, drain: Callable[[str], Awaitable[bool]]) -> None:
        self._drain = drain
        self._wake: dict[str, asyncio.Event] = {}
        self._tasks: dict[str, asyncio.Task[None]] = {}

    def kick(self, group_id: str) -> None:
        """The group has new pending episodes: start its task, or wake it."""
        self._wake.setdefault(group_id, asyncio.Event()).set()
        task = self._tasks.get(group_id)
        if task is None or task.done():
            self._tasks[group_id] = asyncio.create_task(self._loop(group_id), name=f"ingest:{group_id}")

    async def _loop(self, group_id: str) -> None:
        wake = self._wake[group_id]
        while True:
            wake.clear()
            if not await self._drain(group_id):
                await wake.wait()

    async def close(self) -> None:
        """Cancel every group's task (an episode in flight stays ``pending``) and wait for them."""
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks.clear()
