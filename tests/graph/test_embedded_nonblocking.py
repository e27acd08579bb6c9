"""The embedded store never blocks the event loop: SQLite runs on the store's worker thread, and the loop
keeps serving other tasks while a long write or search is under way.

The probe is a heartbeat task that counts its turns (``await asyncio.sleep(0)`` in a loop) while a store
call is awaited. A coroutine that called SQLite synchronously would hold the loop thread from its start to
its end, and no other task gets a turn while a coroutine runs without awaiting: the heartbeat would stand
still (``test_the_heartbeat_stands_still_while_the_loop_is_blocked`` shows it, with the very function the
worker runs called on the loop thread). Nothing here measures wall-clock time.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TypeVar

import pytest

from epigraph.graph.embedded import EmbeddedStore
from epigraph.graph.embedded.db import Db
from epigraph.graph.embedded.writes import write_episode
from epigraph.graph.model import Entity, Episode, Fact, Mention
from epigraph.graph.store import EpisodeWrite

T = TypeVar("T")

DIM = 8
ENTITIES = 200
FACTS = 4000
MIN_TURNS = 50
"""Turns the heartbeat must get during one call; a call run on the loop thread gives it none."""
WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet"]
GROUP = "nonblocking"


async def heartbeats_during(call: Callable[[], Awaitable[T]]) -> tuple[int, T]:
    """Run ``call`` while a heartbeat task counts its turns on the loop; (turns during the call, result)."""
    turns = 0
    beating = True

    async def heartbeat() -> None:
        nonlocal turns
        while beating:
            turns += 1
            await asyncio.sleep(0)

    task = asyncio.create_task(heartbeat())
    await asyncio.sleep(0)  # the heartbeat is running before the call starts
    before = turns
    try:
        result = await call()
    finally:
        beating = False
        await task
    return turns - before, result


def big_write(seed: int = 0) -> EpisodeWrite:
    """One episode with ENTITIES entities, FACTS facts between them (random texts and vectors), and a
    mention of every entity."""
    rng = random.Random(seed)
    start = datetime(2024, 1, 1, tzinfo=UTC)
    episode = Episode(group_id=GROUP, content="a big episode", reference_time=start)

    def vector() -> list[float]:
        return [rng.uniform(-1, 1) for _ in range(DIM)]

    entities = [
        Entity(group_id=GROUP, name=f"entity {i}", labels=["Thing"], name_embedding=vector())
        for i in range(ENTITIES)
    ]
    facts = [
        Fact(group_id=GROUP, source_uuid=rng.choice(entities).uuid, target_uuid=rng.choice(entities).uuid,
             relation="RELATES_TO", text=" ".join(rng.choices(WORDS, k=12)), text_embedding=vector(),
             episodes=[episode.uuid], valid_at=start + timedelta(minutes=i))
        for i in range(FACTS)
    ]  # fmt: skip
    mentions = [Mention(group_id=GROUP, episode_uuid=episode.uuid, entity_uuid=e.uuid) for e in entities]
    return EpisodeWrite(episode=episode, entities=entities, facts=facts, mentions=mentions)


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[EmbeddedStore]:
    """Only the embedded store (this module's ``store`` overrides conftest's, which also covers Neo4j)."""
    async with EmbeddedStore(str(tmp_path / "graph.db")) as backend:
        await backend.setup(embedding_dim=DIM)
        yield backend


async def test_a_big_write_leaves_the_loop_free(store: EmbeddedStore) -> None:
    write = big_write()
    turns, _ = await heartbeats_during(lambda: store.write_episode(write))
    assert turns >= MIN_TURNS
    assert (await store.stats(GROUP)).facts == FACTS


async def test_write_episodes_leaves_the_loop_free(store: EmbeddedStore) -> None:
    writes = [big_write(seed) for seed in range(2)]
    turns, _ = await heartbeats_during(lambda: store.write_episodes(writes))
    assert turns >= MIN_TURNS


async def test_big_searches_leave_the_loop_free(store: EmbeddedStore) -> None:
    """First searches after a write load the whole group (BM25 postings, vector matrix) on the worker."""
    write = big_write()
    await store.write_episode(write)

    turns, text_hits = await heartbeats_during(lambda: store.search_facts_text([GROUP], "alpha juliet", 500))
    assert turns >= MIN_TURNS
    assert len(text_hits) == 500

    query = [0.5] * DIM
    turns, vector_hits = await heartbeats_during(lambda: store.search_facts_vector([GROUP], query, 2000))
    assert turns >= MIN_TURNS
    assert len(vector_hits) == 2000

    start = [write.entities[0].uuid]
    turns, reached = await heartbeats_during(lambda: store.neighbours(GROUP, start, depth=6))
    assert turns >= MIN_TURNS
    assert len(reached) == ENTITIES - 1


async def test_the_heartbeat_stands_still_while_the_loop_is_blocked(tmp_path: Path) -> None:
    """The probe's control: the same write, by the function the worker thread runs, called on the loop
    thread inside a coroutine. The heartbeat gets no turn, so the tests above would fail on a store that
    ran SQLite on the event loop."""
    db = Db(str(tmp_path / "graph.db"))
    write = big_write()

    async def on_the_loop() -> None:
        write_episode(db, write)

    try:
        turns, _ = await heartbeats_during(on_the_loop)
    finally:
        db.close()
    assert turns == 0
