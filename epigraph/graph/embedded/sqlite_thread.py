"""The embedded store's one SQLite thread: calls run one at a time, foreground calls first.

Like a single-thread executor, except that its queue is ordered by (urgency, arrival): a call made inside
:func:`epigraph.graph.priority.foreground` (a search someone waits for) runs before the background calls
(ingestion) queued before it, after the call already running. Calls of one urgency keep their arrival
order. Every call runs whole on the one thread, so no call ever observes another halfway.
"""

from __future__ import annotations

import itertools
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

R = TypeVar("R")

_FIRST, _NEXT, _LAST = 0, 1, 2


class SqliteThread:
    """One daemon thread, started on the first call, serving a priority queue of calls."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._queue: queue.PriorityQueue[tuple[int, int, Callable[[], Any] | None, Future[Any]]] = (
            queue.PriorityQueue()
        )
        self._order = itertools.count()
        self._thread: threading.Thread | None = None
        self._start_lock = threading.Lock()

    def submit(self, fn: Callable[[], R], *, urgent: bool = False) -> Future[R]:
        """Queue ``fn``; urgent calls go before every non-urgent call not yet started."""
        future: Future[R] = Future()
        self._queue.put((_FIRST if urgent else _NEXT, next(self._order), fn, future))
        self._ensure_started()
        return future

    def stop(self) -> None:
        """Let the thread end once every call queued so far has run (it does not wait for that)."""
        self._queue.put((_LAST, next(self._order), None, Future()))

    def _ensure_started(self) -> None:
        with self._start_lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._serve, name=self.name, daemon=True)
                self._thread.start()

    def _serve(self) -> None:
        while True:
            _, _, fn, future = self._queue.get()
            if fn is None:
                return
            if not future.set_running_or_notify_cancel():
                continue  # its caller gave up before it started
            try:
                result = fn()
            except BaseException as exc:
                future.set_exception(exc)
            else:
                future.set_result(result)
