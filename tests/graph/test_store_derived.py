"""The GraphStore contract for derived records (``graph.derived``), on both stores: the fact graph that
communities are computed from, the communities themselves, conversation chains and their summaries.

The same ``store`` fixture as the contract suite (embedded, and the real Neo4j under ``make test``).
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

import pytest

from epigraph.errors import StoreError
from epigraph.graph.derived import Community, ConversationSummary, members_digest
from epigraph.graph.model import EpisodeStatus, Invalidation
from epigraph.graph.store import EVERYTHING, ChainRead, FactFilter, GraphStore, TimeFilter
from tests.support.records import T0, day, make_entity, make_episode, make_fact, vec, write_of
from tests.support.stores import second_store


async def _people(store: GraphStore, group: str, names: list[str]) -> list[str]:
    """Entities ``names`` (written with one episode), their uuids in order."""
    ents = [make_entity(group, n) for n in names]
    await store.write_episode(write_of(make_episode(group, " ".join(names)), ents))
    return [e.uuid for e in ents]


def _community(group: str, name: str, members: list[str], **kw: Any) -> Community:
    return Community(group_id=group, name=name, members=members, summary=f"about {name}", **kw)


# --- the fact graph -----------------------------------------------------------------------------------


async def test_fact_endpoints_follow_the_time_filter(store: GraphStore, group: str, other_group: str) -> None:
    ep = make_episode(group, "a b c d")
    a, b, c, d = (make_entity(group, n) for n in "abcd")
    now_ab = make_fact(group, a, b, "a knows b", [ep.uuid], valid_at=T0)
    twice_ab = make_fact(group, a, b, "a works with b", [ep.uuid], valid_at=T0)
    later_cd = make_fact(group, c, d, "c will meet d", [ep.uuid], valid_at=T0 + timedelta(days=3650))
    ended_bc = make_fact(group, b, c, "b lived with c", [ep.uuid], valid_at=day(-30), invalid_at=day(-10))
    retired = make_fact(
        group, a, d, "a liked d", [ep.uuid], valid_at=day(-5),
        expired_at=day(1), invalidated_by=Invalidation(fact_uuid=now_ab.uuid, episode_uuid=ep.uuid),
        invalid_at=day(1),
    )  # fmt: skip
    await store.write_episode(write_of(ep, [a, b, c, d], [now_ab, twice_ab, later_cd, ended_bc, retired]))
    await _people(store, other_group, ["a", "b"])

    current = await store.fact_endpoints(group)
    assert sorted(current) == sorted([(a.uuid, b.uuid), (a.uuid, b.uuid)])  # one pair per fact
    then = await store.fact_endpoints(group, FactFilter(time=TimeFilter(as_of=day(-20))))
    assert then == [(b.uuid, c.uuid)]
    everything = await store.fact_endpoints(group, FactFilter(time=EVERYTHING))
    assert len(everything) == 5
    assert await store.fact_endpoints(other_group) == []


# --- communities --------------------------------------------------------------------------------------


async def test_communities_round_trip_largest_first(store: GraphStore, group: str) -> None:
    uuids = await _people(store, group, ["Ann", "Bob", "Cy", "Dee", "Eve"])
    small = _community(group, "pair", uuids[3:], embedding=vec(7))
    big = _community(group, "trio", uuids[:3], summarized=members_digest(uuids[:3]))
    await store.replace_communities(group, [small, big])
    assert await store.communities(group) == [big, small]
    assert not big.stale and small.stale  # summarized for exactly its members / never by a model


async def test_replacing_moves_members_and_drops_the_others(store: GraphStore, group: str) -> None:
    uuids = await _people(store, group, ["Ann", "Bob", "Cy", "Dee"])
    first = _community(group, "one", uuids[:2])
    second = _community(group, "two", uuids[2:])
    await store.replace_communities(group, [first, second])
    # Cy moves from "two" to "one" in the same write; "two" goes, a new community takes Dee
    grown = first.model_copy(update={"members": sorted(uuids[:3]), "name": "one grown"})
    fresh = _community(group, "three", [uuids[3]])
    await store.replace_communities(group, [grown, fresh])
    assert await store.communities(group) == [grown, fresh]
    await store.replace_communities(group, [])
    assert await store.communities(group) == []


async def test_bad_community_writes_are_refused_and_write_nothing(
    store: GraphStore, group: str, other_group: str
) -> None:
    uuids = await _people(store, group, ["Ann", "Bob", "Cy"])
    (stranger,) = await _people(store, other_group, ["Zed"])
    kept = _community(group, "kept", uuids[:2])
    await store.replace_communities(group, [kept])
    bad = [
        [_community(other_group, "elsewhere", [stranger])],  # another group's community
        # one entity in two communities
        [_community(group, "a", [uuids[0]]), _community(group, "b", [uuids[0], uuids[2]])],
        [kept, kept.model_copy(update={"name": "again"})],  # one uuid twice
        [_community(group, "ghost", [uuids[2], "no-such-entity"])],  # unknown member
        [_community(group, "foreign", [uuids[2], stranger])],  # another group's entity
        [_community(group, "wide", [uuids[2]], embedding=[0.5] * 7)],  # wrong dimension
    ]
    for communities in bad:
        with pytest.raises(StoreError):
            await store.replace_communities(group, communities)
        assert await store.communities(group) == [kept]
    assert await store.communities(other_group) == []


async def test_a_deleted_entity_leaves_its_community(store: GraphStore, group: str) -> None:
    shared = make_episode(group, "Ann and Bob")
    ann, bob = make_entity(group, "Ann"), make_entity(group, "Bob")
    await store.write_episode(write_of(shared, [ann, bob]))
    only = make_episode(group, "Cy alone", at=day(1))
    cy = make_entity(group, "Cy")
    await store.write_episode(write_of(only, [cy]))
    lone = make_episode(group, "Dee alone", at=day(2))
    dee = make_entity(group, "Dee")
    await store.write_episode(write_of(lone, [dee]))
    await store.replace_communities(
        group, [_community(group, "abc", [ann.uuid, bob.uuid, cy.uuid]), _community(group, "d", [dee.uuid])]
    )
    await store.delete_episode(group, only.uuid)  # Cy is mentioned by nothing else: deleted
    await store.delete_episode(group, lone.uuid)
    (left,) = await store.communities(group)
    assert left.name == "abc" and left.members == sorted([ann.uuid, bob.uuid])


# --- chains ---------------------------------------------------------------------------------------------


async def test_chains_keep_their_order_whatever_the_arrival(
    store: GraphStore, group: str, other_group: str
) -> None:
    chat = "chat: 'weekly' \u00e9t\u00e9"
    # written newest first; two share a reference time and keep their recording order
    late = make_episode(group, "third", at=day(3), source_description=chat, created_at=day(10))
    tie_b = make_episode(group, "second b", at=day(2), source_description=chat, created_at=day(12))
    tie_a = make_episode(group, "second a", at=day(2), source_description=chat, created_at=day(11))
    early = make_episode(group, "first", at=day(1), source_description=chat, created_at=day(13),
                         status=EpisodeStatus.DONE)  # fmt: skip
    mail = make_episode(group, "a mail", at=day(5), source_description="mail")
    loose = make_episode(group, "no source", at=day(4))
    for episode in (late, tie_b, tie_a, early, mail, loose):
        await store.save_episode(episode)
    elsewhere = make_episode(other_group, "elsewhere", source_description=chat)
    await store.save_episode(elsewhere)

    chains = await store.chains(group)
    assert [(c.key, c.episodes, c.first_at, c.last_at) for c in chains] == [
        (chat, 4, day(1), day(3)),
        ("mail", 1, day(5), day(5)),
    ]
    ordered = [early.uuid, tie_a.uuid, tie_b.uuid, late.uuid]
    assert [e.uuid for e in await store.chain_episodes(group, chat)] == ordered
    newest = await store.chain_episodes(group, chat, ChainRead(newest_first=True))
    assert [e.uuid for e in newest] == ordered[::-1]
    assert [e.uuid for e in await store.chain_episodes(group, chat, ChainRead(limit=2))] == ordered[:2]
    recorded = await store.chain_episodes(group, chat, ChainRead(recorded_after=day(11)))
    assert [e.uuid for e in recorded] == [early.uuid, tie_b.uuid]  # recorded after, in chain order
    done = await store.chain_episodes(group, chat, ChainRead(status=EpisodeStatus.DONE))
    assert done == [early]
    assert await store.chain_episodes(group, "no such chain") == []
    assert [e.uuid for e in await store.chain_episodes(other_group, chat)] == [elsewhere.uuid]


# --- conversation summaries -------------------------------------------------------------------------


def _summary(group: str, key: str, version: int, text: str) -> ConversationSummary:
    return ConversationSummary(
        group_id=group, key=key, summary=text, episodes=version * 2, first_at=day(1), last_at=day(version),
        covered_until=day(10 + version), version=version, updated_at=day(20 + version),
    )  # fmt: skip


async def test_summaries_are_written_version_by_version(
    store: GraphStore, group: str, other_group: str
) -> None:
    key = 'room "42" / ünïcode'
    first = _summary(group, key, 1, "They met.")
    assert await store.save_conversation_summary(first) is True
    assert await store.save_conversation_summary(_summary(group, key, 1, "Someone else")) is False
    assert await store.save_conversation_summary(_summary(group, key, 3, "Skipping one")) is False
    assert await store.conversation_summaries(group) == [first]
    second = _summary(group, key, 2, "They met, then moved.")
    assert await store.save_conversation_summary(second) is True
    other = _summary(group, "mail", 1, "A mail.")
    assert await store.save_conversation_summary(other) is True
    assert await store.conversation_summaries(group) == [other, second]
    assert await store.conversation_summaries(group, [key]) == [second]
    assert await store.conversation_summaries(group, []) == []
    assert await store.conversation_summaries(other_group) == []
    empty = ConversationSummary(group_id=group, key="fresh", version=1, updated_at=T0)
    assert await store.save_conversation_summary(empty) is True
    assert await store.conversation_summaries(group, ["fresh"]) == [empty]


async def test_of_two_concurrent_summary_writers_one_wins(store: GraphStore, group: str) -> None:
    other = second_store(store)
    await other.setup(embedding_dim=384)
    try:
        for round_ in range(6):
            key = f"chat-{round_}"
            a, b = _summary(group, key, 1, "from a"), _summary(group, key, 1, "from b")
            won = await asyncio.gather(store.save_conversation_summary(a), other.save_conversation_summary(b))
            assert sorted(won) == [False, True]
            (stored,) = await store.conversation_summaries(group, [key])
            assert stored == (a if won[0] else b)
    finally:
        await other.close()
