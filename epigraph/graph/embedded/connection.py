"""The embedded store's calls: each run on its one SQLite thread, and the one place SQLite errors are
translated.

Every SQLite call runs on ONE dedicated thread that owns the connection and the in-memory indexes (BM25
postings, vector matrices; :class:`.sqlite_thread.SqliteThread`). The event loop only awaits; it never
blocks on disk, and concurrent calls from many tasks are serialized, so they are safe without locks and a
reader never sees a write halfway. They run in submission order, except that calls made inside
:func:`epigraph.graph.priority.foreground` (a search someone waits for) go before the background calls
still queued. ``:memory:`` works the same way (one connection, one thread).

The file is opened (:class:`.db.Db`: its schema created or checked) on the first call. Errors from SQLite
become :class:`~epigraph.errors.StoreError` (:class:`~epigraph.errors.StoreUnavailable` once closed).
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable
from functools import partial
from typing import Concatenate, ParamSpec, TypeVar

from ...errors import EpigraphError, StoreError, StoreUnavailable
from ..priority import in_foreground
from .db import Db
from .schema import why_unwritable
from .sqlite_thread import SqliteThread

P = ParamSpec("P")
R = TypeVar("R")


class Connection:
    """The SQLite thread and the ``Db`` it alone uses, for one store (``label`` names it in errors)."""

    def __init__(self, label: str, path: str, create: bool, exact_below: int | None) -> None:
        self.label = label
        self.path = path
        self.create = create
        self.exact_below = exact_below
        self._thread = SqliteThread("epigraph-sqlite")
        self._db: Db | None = None  # created and used on the SQLite thread only
        self._closed = False  # set by close(); checked on the event loop
        self._shut = False  # set on the SQLite thread once the connection is closed

    async def run(self, fn: Callable[Concatenate[Db, P], R], *args: P.args, **kwargs: P.kwargs) -> R:
        """Run ``fn(db, ...)`` on the SQLite thread (ahead of background calls when made in the
        foreground); SQLite errors become StoreError."""
        if self._closed:
            raise StoreUnavailable(f"{self.label} is closed")
        call = partial(self._call, fn, *args, **kwargs)
        return await asyncio.wrap_future(self._thread.submit(call, urgent=in_foreground()))

    def _call(self, fn: Callable[Concatenate[Db, P], R], *args: P.args, **kwargs: P.kwargs) -> R:
        try:
            if self._db is None:
                if self._shut:
                    raise StoreUnavailable(f"{self.label} is closed")
                self._db = Db(self.path, self.create, self.exact_below)
            return fn(self._db, *args, **kwargs)
        except EpigraphError:
            raise
        except sqlite3.IntegrityError as exc:
            raise StoreError(
                f"write rejected by the store ({exc}): facts must join entities of their own group, "
                "mentions an episode and an entity of their group"
            ) from exc
        except sqlite3.Error as exc:
            where = f"SQLite error in {fn.__name__} on {self.path!r}: {exc}"
            raise StoreError(where + (why_unwritable(self.path) if "readonly" in str(exc) else "")) from exc

    async def read(
        self, fn: Callable[Concatenate[sqlite3.Connection, P], R], *args: P.args, **kwargs: P.kwargs
    ) -> R:
        """Run a read query function on the SQLite thread inside one read transaction."""

        def in_read(db: Db) -> R:
            with db.read() as conn:
                return fn(conn, *args, **kwargs)

        in_read.__name__ = fn.__name__
        return await self.run(in_read)

    async def close(self) -> None:
        """Close the connection and stop the SQLite thread once the calls already made have run.

        Idempotent; calls made afterwards raise StoreUnavailable.
        """
        if self._closed:
            return
        self._closed = True
        await asyncio.wrap_future(self._thread.submit(self._close_db))
        self._thread.stop()

    def _close_db(self) -> None:
        self._shut = True
        if self._db is not None:
            self._db.close()
            self._db = None
