"""The driver, created lazily inside the running loop, and the one place driver errors are translated.

- ``read``: one auto-commit statement in a READ session of the configured database (always named, never
  the server's default); one round trip, no retry.
- ``write``: one ``session.execute_write`` transaction running an async function; the function may run
  more than once (driver retries), so it must not leak state between attempts.
- Every ``neo4j`` exception becomes a :class:`~epigraph.errors.StoreError`: ``StoreUnavailable`` when the
  server cannot be reached, refuses the credentials or its database is not available (still starting),
  ``StoreError`` otherwise. Messages name the server and the failure, never the password.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import neo4j
from neo4j import exceptions as nx

from ...errors import StoreError, StoreUnavailable

T = TypeVar("T")

_UNAVAILABLE = (
    nx.ServiceUnavailable,
    nx.DatabaseUnavailable,  # the server is up but its database is still starting (or stopping)
    nx.SessionExpired,
    nx.AuthError,
    nx.ConnectionAcquisitionTimeoutError,
)
_MAX_MESSAGE = 600


class Connection:
    """Owns (or borrows) one ``AsyncDriver``; see the module docstring."""

    def __init__(
        self,
        uri: str,
        user: str,
        password: str | None,
        database: str,
        *,
        driver: neo4j.AsyncDriver | None = None,
        connection_timeout: float = 10.0,
        max_retry_time: float = 15.0,
    ) -> None:
        self.uri, self.database = uri, database
        self._user, self._password = user, password
        self._driver = driver
        self._owned = driver is None
        self._timeouts = (connection_timeout, max_retry_time)
        self._lock = asyncio.Lock()
        self._closed = False

    # --- lifecycle -------------------------------------------------------------------------------------
    async def driver(self) -> neo4j.AsyncDriver:
        if self._closed:
            raise StoreUnavailable(f"the neo4j store ({self.uri}) is closed")
        if self._driver is not None:
            return self._driver
        async with self._lock:
            if self._driver is None:
                self._driver = await self._connect()
        return self._driver

    async def _connect(self) -> neo4j.AsyncDriver:
        auth = None if not self._password else (self._user, self._password)
        async with self.errors("connect"):
            connection_timeout, max_retry_time = self._timeouts
            driver = neo4j.AsyncGraphDatabase.driver(
                self.uri,
                auth=auth,
                connection_timeout=connection_timeout,
                max_transaction_retry_time=max_retry_time,
                # Our statements are fixed; server notifications (unknown label on an empty graph,
                # deprecations) are for us, not for users, and would be logged on every call.
                notifications_min_severity="OFF",
            )
            try:
                await driver.verify_connectivity()
            except BaseException:
                await driver.close()
                raise
        return driver

    async def close(self) -> None:
        """Close the driver (if we own it). Idempotent; later calls raise StoreUnavailable."""
        self._closed = True
        driver, self._driver = self._driver, None
        if driver is not None and self._owned:
            async with self.errors("close"):
                await driver.close()

    # --- queries -----------------------------------------------------------------------------------------
    async def read(
        self, query: str, params: dict[str, Any] | None = None, *, what: str = "read"
    ) -> list[Any]:
        """One auto-commit read: RUN and PULL in one round trip (a managed transaction adds BEGIN and
        COMMIT round trips). Reads are not retried: a single server has no transient read errors worth a
        retry, and a failure is reported at once."""
        driver = await self.driver()
        async with self.errors(what):
            async with driver.session(database=self.database, default_access_mode=neo4j.READ_ACCESS) as s:
                result = await s.run(query, params or {})
                return [record async for record in result]

    async def run_write(
        self, query: str, params: dict[str, Any] | None = None, *, what: str = "write"
    ) -> list[Any]:
        """A one-statement auto-committed write (schema DDL, single upserts)."""
        driver = await self.driver()
        async with self.errors(what):
            result = await driver.execute_query(
                query, params or {}, database_=self.database, routing_=neo4j.RoutingControl.WRITE
            )
        return list(result.records)

    async def write(self, work: Callable[[neo4j.AsyncManagedTransaction], Awaitable[T]], *, what: str) -> T:
        """Run ``work`` in ONE write transaction (committed when it returns, rolled back if it raises)."""
        driver = await self.driver()
        async with self.errors(what):
            async with driver.session(database=self.database) as session:
                return await session.execute_write(work)

    @asynccontextmanager
    async def transaction(self, *, what: str) -> AsyncIterator[neo4j.AsyncTransaction]:
        """One explicit transaction in a write session, held open while the caller works through it
        (e.g. reads under the locks it took); closed at the end, which rolls back what was not committed."""
        driver = await self.driver()
        async with self.errors(what):
            async with driver.session(database=self.database) as session:
                tx = await session.begin_transaction()
                try:
                    yield tx
                finally:
                    await tx.close()

    # --- errors -------------------------------------------------------------------------------------------
    @asynccontextmanager
    async def errors(self, what: str) -> AsyncIterator[None]:
        try:
            yield
        except StoreError:
            raise
        except _UNAVAILABLE as exc:
            raise StoreUnavailable(self._message(what, exc)) from exc
        except (nx.Neo4jError, nx.DriverError) as exc:
            raise StoreError(self._message(what, exc)) from exc
        except OSError as exc:
            raise StoreUnavailable(self._message(what, exc)) from exc

    def _message(self, what: str, exc: BaseException) -> str:
        if isinstance(exc, nx.Neo4jError):
            first = (exc.message or "").strip().splitlines()
            detail = f"{exc.code}: {first[0] if first else ''}"
        else:
            detail = f"{type(exc).__name__}: {exc}"
        if len(detail) > _MAX_MESSAGE:
            detail = detail[:_MAX_MESSAGE] + "..."
        message = f"neo4j {what} failed ({self.uri}, database {self.database!r}): {detail}"
        return message.replace(self._password, "***") if self._password else message
