"""Who is waiting: a store call made for someone waiting for an answer may go before background work.

A server answers searches while it ingests. Both reach the same store, and a store that serializes its
calls (the embedded store's one SQLite thread) would otherwise make a search wait behind every call
ingestion queued before it. Code that answers someone runs inside :func:`foreground`; a store that
queues its calls serves those first (each call still runs whole, so nothing observes a write halfway).
Stores that run calls concurrently (Neo4j) ignore it. The flag is a context variable, so it follows
the tasks a search starts.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_FOREGROUND: ContextVar[bool] = ContextVar("epigraph_foreground", default=False)


@contextmanager
def foreground() -> Iterator[None]:
    """Mark the store calls made inside (and in tasks started inside) as wanted by someone waiting."""
    token = _FOREGROUND.set(True)
    try:
        yield
    finally:
        _FOREGROUND.reset(token)


def in_foreground() -> bool:
    """Whether the current call is made for someone waiting (see :func:`foreground`)."""
    return _FOREGROUND.get()
