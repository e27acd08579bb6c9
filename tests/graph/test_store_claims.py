"""Episode claims on both stores (issue 31): a lease with an owner and an expiry, taken atomically, so two
processes on one store never run one episode at once; a crashed owner's claim lapses by itself.

Expiry is judged by the store's clock, so the lapse test sleeps past a short claim (a lower bound: a slow
machine only sleeps longer); every refusal is checked against a claim of a minute.
"""

from __future__ import annotations

import asyncio
import dataclasses

from epigraph.graph.model import EpisodeStatus
from epigraph.graph.store import GraphStore
from tests.support.records import make_entity, make_episode, make_fact, write_of
from tests.support.stores import second_store

MINUTE = 60.0


async def claimant(store: GraphStore, group: str, uuid: str, who: str, seconds: float = MINUTE) -> str | None:
    """``who`` claims the episode; returns the owner of the claim in force afterwards (None: no episode)."""
    claim = await store.claim_episode(group, uuid, who, seconds)
    return None if claim is None else claim.owner


async def test_a_claim_is_taken_refused_to_another_owner_renewed_and_released(
    store: GraphStore, group: str
) -> None:
    episode = make_episode(group)
    await store.save_episode(episode)
    mine = await store.claim_episode(group, episode.uuid, "a", MINUTE)
    assert mine is not None and mine.owner == "a"
    assert await claimant(store, group, episode.uuid, "b") == "a"  # refused: the claim in force is a's
    renewed = await store.claim_episode(group, episode.uuid, "a", 2 * MINUTE)
    assert renewed is not None and renewed.owner == "a" and renewed.expires_at > mine.expires_at
    await store.release_episode(group, episode.uuid, "b")  # not b's to release
    assert await claimant(store, group, episode.uuid, "b") == "a"
    await store.release_episode(group, episode.uuid, "a")
    assert await claimant(store, group, episode.uuid, "b") == "b"


async def test_a_lapsed_claim_is_taken_by_another_owner(store: GraphStore, group: str) -> None:
    episode = make_episode(group)
    await store.save_episode(episode)
    assert await claimant(store, group, episode.uuid, "crashed", 0.2) == "crashed"
    await asyncio.sleep(0.5)  # the owner never renews it: it died
    assert await claimant(store, group, episode.uuid, "next") == "next"


async def test_no_claim_on_an_episode_the_group_does_not_hold(
    store: GraphStore, group: str, other_group: str
) -> None:
    episode = make_episode(group)
    await store.save_episode(episode)
    assert await claimant(store, group, "no-such-episode", "a") is None
    assert await claimant(store, other_group, episode.uuid, "a") is None
    await store.release_episode(other_group, episode.uuid, "a")  # nothing to release: no error


async def test_a_claim_survives_saving_and_writing_the_episode_and_goes_with_its_deletion(
    store: GraphStore, group: str
) -> None:
    episode = make_episode(group)
    await store.save_episode(episode)
    await store.claim_episode(group, episode.uuid, "a", MINUTE)
    await store.save_episode(episode.model_copy(update={"status": EpisodeStatus.FAILED, "error": "x"}))
    ann, bob = make_entity(group, "Ann"), make_entity(group, "Bob")
    done = episode.model_copy(update={"status": EpisodeStatus.DONE})
    write = write_of(done, [ann, bob], [make_fact(group, ann, bob, "Ann knows Bob", [episode.uuid])])
    assert await store.write_episode(dataclasses.replace(write, unless_done=True))
    assert await claimant(store, group, episode.uuid, "b") == "a"
    assert await store.get_episode(group, episode.uuid) == done  # the claim is not part of the episode
    await store.delete_episode(group, episode.uuid)
    assert await claimant(store, group, episode.uuid, "b") is None
    await store.save_episode(episode)  # the same episode again: stored afresh, unclaimed
    assert await claimant(store, group, episode.uuid, "b") == "b"


async def test_of_two_concurrent_claimants_exactly_one_wins(store: GraphStore, group: str) -> None:
    other = second_store(store)  # its own connection (SQLite) or driver (Neo4j): another process
    await other.setup(embedding_dim=384)
    try:
        for i in range(8):
            episode = make_episode(group, f"turn {i}")
            await store.save_episode(episode)
            claims = await asyncio.gather(
                store.claim_episode(group, episode.uuid, f"a{i}", MINUTE),
                other.claim_episode(group, episode.uuid, f"b{i}", MINUTE),
            )
            owners = {c.owner for c in claims if c is not None}
            assert len(owners) == 1 and owners <= {f"a{i}", f"b{i}"}, f"round {i}: {claims}"
    finally:
        await other.close()
