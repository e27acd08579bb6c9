"""An episode's result is written once: ``EpisodeWrite.unless_done`` on both stores (issue 22).

Two writers of one episode (a Kafka worker frozen past its session timeout and the next owner of its
partition) both finish it; the store checks ``done`` inside the write's transaction, under a lock, so
the second write changes nothing and says so, sequentially and concurrently (two connections).
"""

from __future__ import annotations

import asyncio
import dataclasses
import os

import pytest

from epigraph.graph.model import Entity, Episode, EpisodeStatus
from epigraph.graph.store import EpisodeWrite, GraphStore, StoreStats
from tests.support.records import make_entity, make_episode, make_fact, write_of
from tests.support.stores import neo4j_store, second_store


def _result(episode: Episode, who: str) -> tuple[EpisodeWrite, list[Entity]]:
    """One writer's result for ``episode``: its own entity, a fact and the episode marked done."""
    group = episode.group_id
    ann, other = make_entity(group, "Ann"), make_entity(group, f"{who} city")
    fact = make_fact(group, ann, other, f"Ann lives in {who} city", [episode.uuid])
    done = episode.model_copy(update={"status": EpisodeStatus.DONE})
    write = write_of(done, [ann, other], [fact])
    return dataclasses.replace(write, unless_done=True), [ann, other]


async def test_a_second_done_write_of_an_episode_is_refused(store: GraphStore, group: str) -> None:
    episode = make_episode(group)
    await store.save_episode(episode)
    first, _ = _result(episode, "first")
    second, (_, theirs) = _result(episode, "second")
    assert await store.write_episode(first) is True
    assert await store.write_episode(second) is False
    assert await store.stats(group) == StoreStats(
        episodes=1, entities=2, facts=1, current_facts=1, mentions=2
    )
    assert await store.get_entities(group, [theirs.uuid]) == []  # nothing of the second was written
    stored = await store.get_episode(group, episode.uuid)
    assert stored is not None and stored.status == EpisodeStatus.DONE


async def test_without_unless_done_a_done_episode_is_rewritten(store: GraphStore, group: str) -> None:
    """Callers that re-upsert a done episode on purpose (summary carriers, bulk loads) still can."""
    episode = make_episode(group)
    first, _ = _result(episode, "first")
    assert await store.write_episode(first) is True
    again = dataclasses.replace(first, unless_done=False)
    assert await store.write_episode(again) is True
    assert (await store.stats(group)).facts == 1


async def test_a_pending_or_new_episode_is_written(store: GraphStore, group: str) -> None:
    fresh = make_episode(group, "never saved")
    assert await store.write_episode(_result(fresh, "fresh")[0]) is True
    failed = make_episode(group, "failed before", status=EpisodeStatus.FAILED)
    await store.save_episode(failed)
    assert await store.write_episode(_result(failed, "retry")[0]) is True
    assert (await store.stats(group)).facts == 2


async def test_of_two_concurrent_writers_exactly_one_takes_effect(store: GraphStore, group: str) -> None:
    other = second_store(store)
    await other.setup(embedding_dim=384)
    try:
        for i in range(8):
            episode = make_episode(group, f"turn {i}")
            await store.save_episode(episode)
            (a, a_entities), (b, b_entities) = _result(episode, f"a{i}"), _result(episode, f"b{i}")
            won = await asyncio.gather(store.write_episode(a), other.write_episode(b))
            assert sorted(won) == [False, True], f"round {i}: {won}"
            loser = b_entities if won[0] else a_entities
            assert await store.get_entities(group, [loser[1].uuid]) == []
        assert (await store.stats(group)).facts == 8
    finally:
        await other.close()


@pytest.mark.skipif(not os.environ.get("EPIGRAPH_NEO4J_URI"), reason="needs a Neo4j")
@pytest.mark.neo4j
async def test_neo4j_second_writer_waits_for_the_first_then_skips(group: str) -> None:
    """Deterministic: the first transaction holds the episode's lock while the second writer starts."""
    from epigraph.graph.neo4j import writing

    store, other = neo4j_store(), neo4j_store()
    await store.setup(embedding_dim=384)
    await other.setup(embedding_dim=384)
    try:
        episode = make_episode(group)
        await store.save_episode(episode)
        first, second = _result(episode, "first")[0], _result(episode, "second")[0]
        locked = asyncio.Event()
        late: list[asyncio.Task[bool]] = []

        async def slow_first(tx: object) -> bool:
            written = await writing.write_tx(tx, writing.prepare(first, None))  # type: ignore[arg-type]
            late.append(asyncio.create_task(other.write_episode(second)))
            locked.set()
            await asyncio.sleep(0.5)  # the second writer now waits on the episode's lock
            assert not late[0].done()
            return written

        conn = store._conn  # type: ignore[attr-defined]
        assert await conn.write(slow_first, what="first") is True
        assert locked.is_set()
        assert await late[0] is False
        assert (await store.stats(group)).facts == 1
    finally:
        await store.close()
        await other.close()
