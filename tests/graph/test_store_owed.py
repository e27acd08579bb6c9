"""Owed summaries on both stores: ``EpisodeWrite.owed_summaries`` marks entities whose summaries a batch
still owes, in the episode's own transaction; ``paid_summaries`` clears them; ``owed_summaries`` lists a
group's marks and ``stats`` counts them. A write that fails or is refused marks nothing; a deleted
entity owes nothing. A dump says what a group owes (``OwedSummaries``, before its entities) and a load
marks it.
"""

from __future__ import annotations

import dataclasses

import pytest

from epigraph.errors import StoreError
from epigraph.graph.model import Entity, EpisodeStatus, Mention
from epigraph.graph.store import EpisodeWrite, GraphStore, OwedSummaries
from epigraph.transfer.moves import regroup
from tests.support.records import group_of, make_entity, make_episode, make_fact, snapshot, write_of


async def test_marks_are_written_with_the_episode_listed_counted_and_cleared(
    store: GraphStore, group: str, other_group: str
) -> None:
    ann, bo, cy = (make_entity(group, n) for n in ("Ann", "Bo", "Cy"))
    episode = make_episode(group)
    write = write_of(episode, [ann, bo, cy], [make_fact(group, ann, bo, "Ann knows Bo", [episode.uuid])])
    await store.write_episode(dataclasses.replace(write, owed_summaries=[bo.uuid, ann.uuid]))

    assert await store.owed_summaries(group) == sorted([ann.uuid, bo.uuid])
    assert (await store.stats(group)).owed_summaries == 2
    assert await store.owed_summaries(other_group) == []

    # the entity written again (an episode re-sends every entity it mentions) keeps its mark
    later = make_episode(group, "a later turn")
    again = dataclasses.replace(
        write_of(later, [ann.model_copy(update={"summary": "Ann, composed"})]), owed_summaries=[cy.uuid]
    )
    await store.write_episode(again)
    assert await store.owed_summaries(group) == sorted([ann.uuid, bo.uuid, cy.uuid])

    # paid and owed in one write: cleared first, then marked
    paid = EpisodeWrite(
        episode=later,
        entities=[ann.model_copy(update={"summary": "Ann knows Bo."})],
        paid_summaries=[ann.uuid, bo.uuid, cy.uuid],
        owed_summaries=[cy.uuid],
    )
    await store.write_episode(paid)
    assert await store.owed_summaries(group) == [cy.uuid]
    assert (await store.stats(group)).owed_summaries == 1
    [stored] = await store.get_entities(group, [ann.uuid])
    assert stored.summary == "Ann knows Bo."


async def test_a_uuid_of_no_entity_of_the_group_marks_nothing(
    store: GraphStore, group: str, other_group: str
) -> None:
    theirs = make_entity(other_group, "Ann")
    await store.write_episode(write_of(make_episode(other_group), [theirs]))
    episode = make_episode(group)
    await store.write_episode(EpisodeWrite(episode=episode, owed_summaries=[theirs.uuid, "no-such-entity"]))
    assert await store.owed_summaries(group) == []
    assert await store.owed_summaries(other_group) == []


async def test_a_failed_or_refused_write_marks_nothing(store: GraphStore, group: str) -> None:
    ann = make_entity(group, "Ann")
    episode = make_episode(group)
    await store.write_episode(write_of(episode, [ann]))

    # a mention of an entity that is not stored: the store rejects the whole write
    ghost = Mention(group_id=group, episode_uuid=episode.uuid, entity_uuid="ghost")
    broken = EpisodeWrite(episode=episode, mentions=[ghost], owed_summaries=[ann.uuid])
    with pytest.raises(StoreError):
        await store.write_episode(broken)
    assert await store.owed_summaries(group) == []

    # a second writer of a done episode writes nothing, its marks included
    done = episode.model_copy(update={"status": EpisodeStatus.DONE})
    await store.write_episode(write_of(done, [ann]))
    refused = dataclasses.replace(write_of(done, [ann]), unless_done=True, owed_summaries=[ann.uuid])
    assert await store.write_episode(refused) is False
    assert await store.owed_summaries(group) == []


async def test_a_deleted_entity_owes_nothing(store: GraphStore, group: str) -> None:
    ann, bo = make_entity(group, "Ann"), make_entity(group, "Bo")
    first, second = make_episode(group, "first"), make_episode(group, "second")
    await store.write_episode(dataclasses.replace(write_of(first, [ann]), owed_summaries=[ann.uuid]))
    await store.write_episode(dataclasses.replace(write_of(second, [bo]), owed_summaries=[bo.uuid]))

    deletion = await store.delete_episode(group, second.uuid)  # Bo, mentioned by no other episode, goes
    assert bo.uuid in deletion.removed_entities
    assert await store.owed_summaries(group) == [ann.uuid]

    await store.delete_group(group)
    assert await store.owed_summaries(group) == []
    assert (await store.stats(group)).owed_summaries == 0


async def test_a_dump_says_what_the_group_owes_and_a_load_marks_it(
    store: GraphStore, group: str, other_group: str
) -> None:
    ann, bo = make_entity(group, "Ann"), make_entity(group, "Bo")
    await store.write_episode(
        dataclasses.replace(write_of(make_episode(group), [ann, bo]), owed_summaries=[bo.uuid])
    )

    items = await snapshot(store, group)
    kinds = [type(item).__name__ for item in items]
    assert [i for i in items if isinstance(i, OwedSummaries)] == [OwedSummaries(group, (bo.uuid,))]
    assert kinds.index("Episode") < kinds.index("OwedSummaries") < kinds.index("Entity")

    await store.load_group(regroup(group_of(group, items), other_group))
    assert await store.owed_summaries(other_group) == [bo.uuid]
    moved = await snapshot(store, other_group)
    assert [i for i in moved if isinstance(i, OwedSummaries)] == [OwedSummaries(other_group, (bo.uuid,))]
    assert {i.uuid for i in moved if isinstance(i, Entity)} == {ann.uuid, bo.uuid}


async def test_a_group_that_owes_nothing_dumps_no_owed_record(store: GraphStore, group: str) -> None:
    await store.write_episode(write_of(make_episode(group), [make_entity(group, "Ann")]))
    assert not [i for i in await snapshot(store, group) if isinstance(i, OwedSummaries)]
