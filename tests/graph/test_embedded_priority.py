"""The embedded store's queue: calls made in the foreground (a search someone waits for) run before the
background calls (ingestion) queued before them; each call still runs whole, one at a time.

The store's one thread is held on a write that waits for SQLite's write lock, taken by another
connection; calls queue up behind it, and the order in which they finish once the lock is released is
the order the thread ran them. No clock is read.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator, Awaitable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from epigraph.graph.embedded import EmbeddedStore
from epigraph.graph.model import Episode
from epigraph.graph.priority import foreground, in_foreground

GROUP = "queue"
T0 = datetime(2024, 1, 1, tzinfo=UTC)


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[EmbeddedStore]:
    async with EmbeddedStore(str(tmp_path / "graph.db")) as backend:
        await backend.setup(embedding_dim=8)
        yield backend


def episode(content: str) -> Episode:
    return Episode(group_id=GROUP, content=content, reference_time=T0)


async def finishing_order(store: EmbeddedStore, calls: list[tuple[str, bool, Awaitable[Any]]]) -> list[str]:
    """Start ``calls`` (name, in the foreground?, call) in order while the store's thread is stuck on a
    write held back by another connection's write lock; the names in the order the calls finished."""
    finished: list[str] = []
    blocker = sqlite3.connect(store.path, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")
    try:
        held = asyncio.create_task(store.save_episode(episode("written while the lock is held")))
        await asyncio.sleep(0)  # the write is queued first

        async def run(name: str, urgent: bool, call: Awaitable[Any]) -> None:
            if urgent:
                with foreground():
                    await call
            else:
                await call
            finished.append(name)

        tasks = []
        for name, urgent, call in calls:
            tasks.append(asyncio.create_task(run(name, urgent, call)))
            await asyncio.sleep(0)  # queued in this order
        assert not held.done() and not finished
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    await held
    await asyncio.gather(*tasks)
    return finished


async def test_a_foreground_read_goes_before_background_calls_queued_earlier(store: EmbeddedStore) -> None:
    stored = episode("Alice moved to Paris")
    await store.save_episode(stored)
    calls = [
        ("background read 1", False, store.get_episode(GROUP, stored.uuid)),
        ("background write", False, store.save_episode(episode("Bob moved to Rome"))),
        ("background read 2", False, store.episodes(GROUP)),
        ("search", True, store.search_episodes_text([GROUP], "Paris")),
    ]
    order = await finishing_order(store, calls)
    assert order == ["search", "background read 1", "background write", "background read 2"]


async def test_foreground_calls_keep_their_own_order(store: EmbeddedStore) -> None:
    calls = [
        ("background", False, store.stats(GROUP)),
        ("first search", True, store.search_episodes_text([GROUP], "Paris")),
        ("second search", True, store.episodes(GROUP)),
    ]
    assert await finishing_order(store, calls) == ["first search", "second search", "background"]


async def test_a_foreground_read_sees_every_write_that_finished_before_it(store: EmbeddedStore) -> None:
    written = episode("Carol took up sailing")
    await store.save_episode(written)
    with foreground():
        hits = await store.search_episodes_text([GROUP], "sailing")
    assert [h.item.uuid for h in hits] == [written.uuid]


async def test_the_foreground_flag_follows_the_tasks_a_search_starts() -> None:
    async def flag() -> bool:
        return in_foreground()

    assert not in_foreground()
    with foreground():
        assert in_foreground()
        assert await asyncio.create_task(flag())
    assert not await asyncio.create_task(flag())
