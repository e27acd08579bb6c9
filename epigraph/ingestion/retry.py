"""The one policy for a store that fails under a run: try again with backoff, never give the episode up
(the queue's background runs, the Kafka worker)."""

from __future__ import annotations

import asyncio
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
