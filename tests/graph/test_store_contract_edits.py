"""The GraphStore contract for corrections by hand and whole groups, on every backend (conftest ``store``):
``apply_correction`` (and its undo), ``corrections``, ``mentions``, ``groups``, ``dump``, ``load_group``,
``delete_group``. The corrections are built by hand here; ``epigraph.edit`` builds them in the library.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Sequence
from contextlib import aclosing
from datetime import timedelta

import pytest

from epigraph.errors import ConflictError, EpisodeNotFound, StoreError
from epigraph.graph.corrections import Correction, CorrectionOp, GraphSlice
from epigraph.graph.derived import Community, ConversationSummary
from epigraph.graph.model import Entity, Episode, Fact, Invalidation, Mention
from epigraph.graph.store import (
    EVERYTHING,
    DumpItem,
    FactFilter,
    GraphStore,
    GroupDump,
    StoreStats,
    TimeFilter,
)
from epigraph.transfer.moves import regroup
from tests.support.records import (
    T0,
    day,
    group_of,
    make_entity,
    make_episode,
    make_fact,
    snapshot,
    vec,
    write_of,
)

AUTHOR = "person:alice"
S = 7000
"""Seeds of this file's vectors: none equals a vector another test searches with (Neo4j's vector index
is shared by every group, and an exact copy of another test's query takes the candidates it over-fetches)."""
ALL = FactFilter(time=EVERYTHING)


def undo(correction: Correction, at_day: float = 30) -> Correction:
    """The correction applied backwards (what ``epigraph.edit`` builds, summaries aside)."""
    return Correction(
        group_id=correction.group_id, operation=CorrectionOp.UNDO, author="person:bob",
        created_at=day(at_day), before=correction.after, after=correction.before, undoes=correction.uuid,
    )  # fmt: skip


def mention(ep: Episode, entity: Entity) -> Mention:
    return Mention(group_id=ep.group_id, episode_uuid=ep.uuid, entity_uuid=entity.uuid)


async def graph_of(store: GraphStore, group: str) -> list[DumpItem]:
    """The group's records, corrections left out (what a correction and its undo must restore)."""
    return [item for item in await snapshot(store, group) if not isinstance(item, Correction)]


async def two_people(store: GraphStore, group: str) -> tuple[list[Episode], list[Entity], list[Fact]]:
    """Bob (alias Bobby) works at Acme; 'Robert' (the same man, as the model failed to see) lives in
    Paris and knows Bob. Three episodes; the second mentions both Bob and Robert."""
    eps = [make_episode(group, f"turn {i}", at=day(i)) for i in range(3)]
    bob = make_entity(group, "Bob", seed=S + 1, aliases=["Bobby"], labels=["Person"], created_at=day(0))
    acme = make_entity(group, "Acme", seed=S + 2, labels=["Company"], created_at=day(0))
    robert = make_entity(group, "Robert", seed=S + 3, labels=["Person", "Chef"], created_at=day(1))
    paris = make_entity(group, "Paris", seed=S + 4, created_at=day(1))
    works = make_fact(group, bob, acme, "Bob works at Acme", [eps[0].uuid], seed=S + 5, relation="WORKS_AT",
                      valid_at=day(0), created_at=day(0))  # fmt: skip
    lives = make_fact(group, robert, paris, "Robert lives in Paris", [eps[1].uuid], seed=S + 6,
                      relation="LIVES_IN", created_at=day(1))  # fmt: skip
    knows = make_fact(group, robert, bob, "Robert knows Bob", [eps[2].uuid], seed=S + 7, relation="KNOWS",
                      created_at=day(2))  # fmt: skip
    await store.write_episode(write_of(eps[0], [bob, acme], [works]))
    await store.write_episode(write_of(eps[1], [robert, paris], [lives], mentioned=[robert, paris, bob]))
    await store.write_episode(write_of(eps[2], [robert, bob], [knows]))
    return eps, [bob, acme, robert, paris], [works, lives, knows]


def merge_of(
    group: str, eps: Sequence[Episode], entities: Sequence[Entity], facts: Sequence[Fact]
) -> Correction:
    """Robert merged into Bob: aliases and labels moved, Robert's facts rewired, his mentions moved (the
    second episode already mentions Bob), Robert deleted."""
    bob, _, robert, _ = entities
    _, lives, knows = facts
    merged = bob.model_copy(update={"aliases": ["Bobby", "Robert"], "labels": ["Person", "Chef"],
                                    "summary": "Bob works at Acme and lives in Paris."})  # fmt: skip
    return Correction(
        group_id=group, operation=CorrectionOp.MERGE_ENTITIES, author=AUTHOR, created_at=day(10),
        reason="the same man",
        before=GraphSlice(entities=[bob, robert], facts=[lives, knows],
                          mentions=[mention(eps[1], robert), mention(eps[2], robert)]),
        after=GraphSlice(entities=[merged],
                         facts=[lives.model_copy(update={"source_uuid": bob.uuid}),
                                knows.model_copy(update={"source_uuid": bob.uuid})]),
    )  # fmt: skip


# --- corrections --------------------------------------------------------------------------------------


async def test_a_fact_added_by_hand_between_a_stored_and_a_new_entity(store: GraphStore, group: str) -> None:
    eps, (bob, *_), _ = await two_people(store, group)
    lyon = make_entity(group, "Lyon", seed=S + 11, created_at=day(5))
    fact = make_fact(group, bob, lyon, "Bob was born in Lyon", [], seed=S + 12, relation="BORN_IN",
                     valid_at=day(-9000), created_at=day(5), attributes={"source": AUTHOR})  # fmt: skip
    summary = bob.model_copy(update={"summary": "Bob works at Acme. Bob was born in Lyon."})
    added = Correction(
        group_id=group, operation=CorrectionOp.ADD_FACT, author=AUTHOR, created_at=day(5),
        before=GraphSlice(entities=[bob]), after=GraphSlice(entities=[summary, lyon], facts=[fact]),
    )  # fmt: skip
    await store.apply_correction(added)

    assert await store.get_facts(group, [fact.uuid]) == [fact]
    assert await store.get_entities(group, [bob.uuid, lyon.uuid]) == [summary, lyon]
    assert (await store.entities_by_names(group, ["lyon"]))["lyon"] == [lyon]
    found = await store.search_facts_vector([group], vec(S + 12), limit=1)
    assert [h.item.uuid for h in found] == [fact.uuid]
    assert [h.item.uuid for h in await store.search_facts_text([group], "born")] == [fact.uuid]
    # stored as a record without embeddings, found by every entity and fact it touches
    stored = added.stored()
    assert stored.after.facts[0].text_embedding is None
    assert await store.get_correction(group, added.uuid) == stored
    for subject in (bob.uuid, lyon.uuid, fact.uuid):
        assert await store.corrections(group, subject=subject) == [stored]
    assert await store.corrections(group, subject=eps[0].uuid) == []
    assert await store.corrections(group, subject=fact.uuid, limit=0) == []


async def test_a_merge_and_its_undo_are_exact(store: GraphStore, group: str) -> None:
    eps, entities, facts = await two_people(store, group)
    bob, acme, robert, paris = entities
    before = await graph_of(store, group)
    merge = merge_of(group, eps, entities, facts)
    await store.apply_correction(merge)

    assert await store.get_entities(group, [robert.uuid]) == []
    assert (await store.entities_by_names(group, ["robert"]))["robert"] == [merge.after.entities[0]]
    around = await store.facts_around(group, [bob.uuid], ALL)
    assert sorted(f.uuid for f in around) == sorted(f.uuid for f in facts)
    assert {(f.source_uuid, f.target_uuid) for f in around} == {
        (bob.uuid, acme.uuid), (bob.uuid, paris.uuid), (bob.uuid, bob.uuid),
    }  # fmt: skip
    assert await store.facts_around(group, [robert.uuid], ALL) == []
    assert await store.mentions(group, [robert.uuid]) == []
    assert sorted(m.episode_uuid for m in await store.mentions(group, [bob.uuid])) == sorted(
        e.uuid for e in eps
    )
    assert (await store.mention_counts(group, [bob.uuid]))[bob.uuid] == 3
    assert [h.item.uuid for h in await store.search_entities_text([group], "Robert")] == [bob.uuid]
    hits = await store.search_entities_vector([group], vec(S + 3), limit=5)
    assert robert.uuid not in [h.item.uuid for h in hits]  # the deleted entity's vector went with it

    await store.apply_correction(undo(merge))
    assert await graph_of(store, group) == before
    nearest = await store.search_entities_vector([group], vec(S + 3), limit=1)
    assert [h.item.uuid for h in nearest] == [robert.uuid]
    operations = [c.operation for c in await store.corrections(group)]
    assert operations == [CorrectionOp.UNDO, CorrectionOp.MERGE_ENTITIES]
    assert [c.uuid for c in await store.corrections(group, subject=robert.uuid)] == [
        (await store.corrections(group))[0].uuid, merge.uuid,
    ]  # fmt: skip


async def test_an_undo_after_a_later_change_is_refused_and_writes_nothing(
    store: GraphStore, group: str
) -> None:
    eps, entities, facts = await two_people(store, group)
    merge = merge_of(group, eps, entities, facts)
    await store.apply_correction(merge)
    # a later episode adds its provenance to a rewired fact: undoing the merge would lose it
    later = make_episode(group, "Bob still lives in Paris", at=day(20))
    lives = (await store.get_facts(group, [facts[1].uuid]))[0]
    cited = lives.model_copy(update={"episodes": [*lives.episodes, later.uuid]})
    await store.write_episode(write_of(later, [], [cited], mentioned=[]))
    now = await snapshot(store, group)
    with pytest.raises(ConflictError, match=rf"fact '{lives.uuid}' changed since it was read \(episodes\)"):
        await store.apply_correction(undo(merge))
    assert await snapshot(store, group) == now


@pytest.mark.parametrize("what", ["a new fact", "a new mention"])
async def test_deleting_an_entity_that_gained_a_fact_or_mention_is_refused(
    store: GraphStore, group: str, what: str
) -> None:
    eps, entities, facts = await two_people(store, group)
    merge = merge_of(group, eps, entities, facts)
    robert, paris = entities[2], entities[3]
    later = make_episode(group, "Robert cooks in Paris", at=day(20))
    if what == "a new fact":
        cooks = make_fact(group, robert, paris, "Robert cooks in Paris", [later.uuid], relation="COOKS_IN")
        await store.write_episode(write_of(later, [robert, paris], [cooks], mentioned=[]))
    else:
        await store.write_episode(write_of(later, [robert], [], mentioned=[robert]))
    now = await snapshot(store, group)
    with pytest.raises(ConflictError, match=f"entity '{robert.uuid}' gained"):
        await store.apply_correction(merge)
    assert await snapshot(store, group) == now


async def test_a_correction_whose_records_are_gone_or_exist_is_refused(store: GraphStore, group: str) -> None:
    eps, (bob, acme, *_), (works, *_) = await two_people(store, group)
    retire = Correction(
        group_id=group, operation=CorrectionOp.DELETE_FACT, author=AUTHOR, before=GraphSlice(facts=[works]),
    )  # fmt: skip
    await store.apply_correction(retire)
    with pytest.raises(ConflictError, match=f"fact '{works.uuid}' is no longer in the group"):
        await store.apply_correction(retire.model_copy(update={"uuid": "correction:again"}))
    readd = Correction(
        group_id=group, operation=CorrectionOp.ADD_FACT, author=AUTHOR, after=GraphSlice(facts=[works])
    )
    await store.apply_correction(readd)
    assert await store.get_facts(group, [works.uuid]) == [works]
    with pytest.raises(ConflictError, match=f"fact '{works.uuid}' already exists"):
        await store.apply_correction(readd.model_copy(update={"uuid": "correction:twice"}))
    moved = mention(eps[0], acme)
    with pytest.raises(ConflictError, match="no longer mentions"):
        await store.apply_correction(Correction(
            group_id=group, operation=CorrectionOp.MERGE_ENTITIES, author=AUTHOR,
            before=GraphSlice(mentions=[mention(eps[1], acme)]), after=GraphSlice(mentions=[moved]),
        ))  # fmt: skip
    with pytest.raises(ConflictError, match="already mentions"):
        await store.apply_correction(Correction(
            group_id=group, operation=CorrectionOp.MERGE_ENTITIES, author=AUTHOR,
            after=GraphSlice(mentions=[mention(eps[0], bob)]),
        ))  # fmt: skip
    assert len(await store.corrections(group)) == 2


async def test_a_failing_correction_writes_nothing(store: GraphStore, group: str, other_group: str) -> None:
    _, (bob, acme, *_), (works, *_) = await two_people(store, group)
    now = await snapshot(store, group)
    ghost = make_entity(group, "Ghost")
    dangling = make_fact(group, bob, ghost, "Bob knows a ghost", [], relation="KNOWS")
    retired = works.model_copy(update={"invalid_at": day(3), "expired_at": day(4)})
    bad = Correction(
        group_id=group, operation=CorrectionOp.ADD_FACT, author=AUTHOR,
        before=GraphSlice(facts=[works]), after=GraphSlice(facts=[retired, dangling]),
    )  # fmt: skip
    with pytest.raises(StoreError):  # the fact's endpoint is no entity of the group
        await store.apply_correction(bad)
    assert await snapshot(store, group) == now
    elsewhere = make_entity(other_group, "Bob")
    with pytest.raises(StoreError, match="nothing crosses groups"):
        await store.apply_correction(Correction(
            group_id=group, operation=CorrectionOp.RENAME_ENTITY, author=AUTHOR,
            before=GraphSlice(entities=[bob]), after=GraphSlice(entities=[elsewhere]),
        ))  # fmt: skip
    inverted = works.model_copy(update={"valid_at": day(5), "invalid_at": day(1)})  # not validated
    with pytest.raises(StoreError, match="is before valid_at"):
        edit = Correction(group_id=group, operation=CorrectionOp.EDIT_FACT, author=AUTHOR,
                          before=GraphSlice(facts=[works]))  # fmt: skip
        after = GraphSlice.model_construct(entities=[], facts=[inverted], mentions=[])
        await store.apply_correction(edit.model_copy(update={"after": after}))
    with pytest.raises(StoreError, match="deleted entity"):
        await store.apply_correction(Correction(
            group_id=group, operation=CorrectionOp.DELETE_FACT, author=AUTHOR,
            before=GraphSlice(entities=[acme], facts=[works]), after=GraphSlice(facts=[works]),
        ))  # fmt: skip
    assert await snapshot(store, group) == now


async def test_a_fact_retired_by_hand_reads_as_retired_at_its_times(store: GraphStore, group: str) -> None:
    _, _, (works, *_) = await two_people(store, group)
    retiring = "correction:retire-works"
    retired = works.model_copy(update={
        "invalid_at": day(8), "expired_at": day(9),
        "invalidated_by": Invalidation(fact_uuid=retiring, episode_uuid=retiring, previous_invalid_at=None),
    })  # fmt: skip
    await store.apply_correction(Correction(
        uuid=retiring, group_id=group, operation=CorrectionOp.RETIRE_FACT, author=AUTHOR, created_at=day(9),
        before=GraphSlice(facts=[works]), after=GraphSlice(facts=[retired]),
    ))  # fmt: skip
    acme = works.target_uuid
    assert await store.facts_around(group, [acme]) == []
    as_of = FactFilter(time=TimeFilter(as_of=day(7)))
    assert [f.uuid for f in await store.facts_around(group, [acme], as_of)] == [works.uuid]
    # before the retirement was recorded, the graph believed the fact went on
    assert await store.facts_around(group, [acme], FactFilter(time=TimeFilter(as_of=day(8.5)))) == []
    known = FactFilter(time=TimeFilter(as_of=day(8.5), known_at=day(8.5)))
    assert [f.uuid for f in await store.facts_around(group, [acme], known)] == [works.uuid]


async def test_an_episode_deletion_keeps_an_entity_a_hand_made_fact_touches(
    store: GraphStore, group: str
) -> None:
    ep = make_episode(group, "Carol met Dan")
    carol, dan = make_entity(group, "Carol"), make_entity(group, "Dan")
    met = make_fact(group, carol, dan, "Carol met Dan", [ep.uuid], relation="MET")
    await store.write_episode(write_of(ep, [carol, dan], [met]))
    erin = make_entity(group, "Erin")
    sister = make_fact(group, carol, erin, "Carol is Erin's sister", [], relation="SISTER_OF")
    await store.apply_correction(Correction(
        group_id=group, operation=CorrectionOp.ADD_FACT, author=AUTHOR,
        after=GraphSlice(entities=[erin], facts=[sister]),
    ))  # fmt: skip
    result = await store.delete_episode(group, ep.uuid)
    assert result.removed_entities == [dan.uuid]
    assert result.removed_facts == [met.uuid]
    assert await store.get_facts(group, [sister.uuid]) == [sister]
    assert [e.uuid for e in await store.get_entities(group, [carol.uuid, dan.uuid, erin.uuid])] == [
        carol.uuid, erin.uuid,
    ]  # fmt: skip


async def test_corrections_are_listed_newest_first_per_group(
    store: GraphStore, group: str, other_group: str
) -> None:
    made = []
    for i, g in enumerate([group, other_group, group, group]):
        entity = make_entity(g, f"Thing {i}")
        made.append(Correction(
            group_id=g, operation=CorrectionOp.ADD_FACT, author=AUTHOR, created_at=day(i),
            after=GraphSlice(entities=[entity]),
        ))  # fmt: skip
        await store.apply_correction(made[-1])
    assert [c.uuid for c in await store.corrections(group)] == [made[3].uuid, made[2].uuid, made[0].uuid]
    assert [c.uuid for c in await store.corrections(group, limit=2)] == [made[3].uuid, made[2].uuid]
    assert [c.uuid for c in await store.corrections(other_group)] == [made[1].uuid]
    assert await store.get_correction(other_group, made[0].uuid) is None


# --- whole groups -----------------------------------------------------------------------------------------


async def with_derived_records(store: GraphStore, group: str, entities: Sequence[Entity]) -> None:
    """Two communities (the people; the places and firms) and a conversation summary at version 2."""
    bob, acme, _, paris = entities
    await store.replace_communities(group, [
        Community(group_id=group, name="People", summary="Bob.", members=[bob.uuid], embedding=vec(S + 20),
                  created_at=day(11), updated_at=day(12)),
        Community(group_id=group, name="Places", members=[acme.uuid, paris.uuid], created_at=day(11),
                  updated_at=day(11)),
    ])  # fmt: skip
    first = ConversationSummary(
        group_id=group,
        key="chat",
        summary="Bob talks.",
        episodes=2,
        version=1,
        first_at=day(0),
        last_at=day(1),
        covered_until=day(1),
        updated_at=day(2),
    )
    assert await store.save_conversation_summary(first)
    second = first.model_copy(update={"summary": "Bob talks on.", "episodes": 3, "version": 2})
    assert await store.save_conversation_summary(second)


async def test_groups_lists_every_group_with_records(store: GraphStore, group: str, other_group: str) -> None:
    await store.save_episode(make_episode(group))
    await store.apply_correction(Correction(
        group_id=other_group, operation=CorrectionOp.ADD_FACT, author=AUTHOR,
        after=GraphSlice(entities=[make_entity(other_group, "Zed")]),
    ))  # fmt: skip
    found = await store.groups()
    assert {group, other_group} <= set(found)
    assert found == sorted(found)


async def test_a_dump_lists_every_record_in_its_order(
    store: GraphStore, group: str, other_group: str
) -> None:
    eps, entities, facts = await two_people(store, group)
    await store.apply_correction(merge_of(group, eps, entities, facts))
    await store.save_episode(make_episode(other_group))
    items = await snapshot(store, group)
    kinds = [type(i).__name__ for i in items]
    assert kinds == ["Episode"] * 3 + ["Entity"] * 3 + ["Fact"] * 3 + ["Mention"] * 5 + ["Correction"]
    assert [i.uuid for i in items[:3]] == [e.uuid for e in eps]
    assert all(i.group_id == group for i in items)
    bob = next(i for i in items if isinstance(i, Entity) and i.name == "Bob")
    assert bob.name_embedding == vec(S + 1)
    without = [i async for i in store.dump([group])]
    assert len(without) == len(items)
    assert all(getattr(i, "name_embedding", None) is None for i in without)
    assert all(getattr(i, "text_embedding", None) is None for i in without)
    both = [i async for i in store.dump([other_group, group])]
    assert [i.group_id for i in both] == [other_group] + [group] * len(items)


async def test_a_group_loads_into_an_empty_group_as_it_was(
    store: GraphStore, group: str, other_group: str
) -> None:
    eps, entities, facts = await two_people(store, group)
    await store.apply_correction(merge_of(group, eps, entities, facts))
    await with_derived_records(store, group, entities)
    items = await snapshot(store, group)
    kinds = [type(i).__name__ for i in items]
    assert kinds[-3:] == ["Community", "Community", "ConversationSummary"]
    await store.load_group(regroup(group_of(group, items), other_group))  # corrections' records move too
    loaded = await snapshot(store, other_group)
    assert regroup(group_of(other_group, loaded), group) == group_of(group, items)
    assert await store.stats(other_group) == await store.stats(group)
    bob = entities[0].uuid
    assert [h.item.uuid for h in await store.search_facts_text([other_group], "Paris")] == [facts[1].uuid]
    assert [c.uuid for c in await store.corrections(other_group, subject=bob)] == [items[-4].uuid]
    [summary] = await store.conversation_summaries(other_group)
    assert summary.version == 2  # the next writer of the summary continues from the loaded version
    assert not await store.save_conversation_summary(summary.model_copy(update={"summary": "stale"}))

    with pytest.raises(ConflictError, match="already holds"):
        await store.load_group(GroupDump(other_group, episodes=[make_episode(other_group, "more")]))
    assert await snapshot(store, other_group) == loaded


async def test_a_load_that_fails_writes_nothing(store: GraphStore, group: str, other_group: str) -> None:
    ep = make_episode(group)
    ada, ben = make_entity(group, "Ada"), make_entity(group, "Ben")
    ghost = make_entity(group, "Ghost")
    knows = make_fact(group, ada, ben, "Ada knows Ben", [ep.uuid], relation="KNOWS")
    stray = make_fact(group, ada, ghost, "Ada knows a ghost", [ep.uuid], relation="KNOWS")
    with pytest.raises(StoreError):
        await store.load_group(GroupDump(
            group, episodes=[ep], entities=[ada, ben], facts=[knows, stray], mentions=[mention(ep, ada)],
        ))  # fmt: skip
    with pytest.raises(StoreError):
        await store.load_group(GroupDump(group, episodes=[ep], entities=[ada], mentions=[mention(ep, ben)]))
    with pytest.raises(StoreError, match="nothing crosses groups"):
        await store.load_group(GroupDump(group, episodes=[ep], entities=[make_entity(other_group, "X")]))
    assert await snapshot(store, group) == []
    assert await store.stats(group) == StoreStats(0, 0, 0, 0, 0)


async def test_delete_group_removes_everything_of_it_and_nothing_else(
    store: GraphStore, group: str, other_group: str
) -> None:
    eps, entities, facts = await two_people(store, group)
    await store.apply_correction(merge_of(group, eps, entities, facts))
    await with_derived_records(store, group, entities)
    await store.save_episode(make_episode(other_group, "kept"))
    held = await store.stats(group)
    assert await store.delete_group(group) == held
    assert await snapshot(store, group) == []
    assert await store.communities(group) == [] and await store.conversation_summaries(group) == []
    assert group not in await store.groups()
    assert await store.search_facts_text([group], "Paris") == []
    assert await store.search_entities_vector([group], vec(S + 1)) == []
    assert len(await snapshot(store, other_group)) == 1
    assert await store.delete_group(group) == StoreStats(0, 0, 0, 0, 0)
    with pytest.raises(EpisodeNotFound):
        await store.delete_episode(group, eps[0].uuid)
    # the group can be used again
    await store.write_episode(write_of(eps[0], entities[:2], facts[:1]))
    assert len(await snapshot(store, group)) == 6


async def test_a_dump_during_writes_holds_each_episode_whole_or_not_at_all(
    store: GraphStore, group: str
) -> None:
    first = make_episode(group, "first")
    people = [make_entity(group, f"P{i}", created_at=T0) for i in range(600)]  # more than a page
    await store.write_episode(write_of(first, people, [], mentioned=people[:2]))
    later = make_episode(group, "later", at=T0 + timedelta(days=1))
    facts = [
        make_fact(group, a, b, f"{a.name} knows {b.name}", [later.uuid], relation="KNOWS")
        for a, b in itertools.pairwise(people[:30])
    ]
    async with aclosing(store.dump([group])) as items:
        seen = [await anext(items)]  # the dump has begun (its snapshot taken, or its locks held)
        writing = asyncio.create_task(store.write_episode(write_of(later, people[:30], facts)))
        await asyncio.sleep(0.5)  # let the write run as far as it can while the dump is open
        seen += [item async for item in items]
    await writing
    uuids = {getattr(i, "uuid", None) for i in seen}
    assert len(seen) == 1 + 600 + 2
    assert later.uuid not in uuids and not uuids & {f.uuid for f in facts}
    after = await snapshot(store, group)
    assert {f.uuid for f in facts} | {later.uuid} <= {getattr(i, "uuid", None) for i in after}


# --- the embedded store only ----------------------------------------------------------------------------


async def test_an_in_memory_store_dumps_and_loads_too() -> None:
    from epigraph.graph.embedded import EmbeddedStore

    async with EmbeddedStore(":memory:") as store:
        await store.setup(384)
        await two_people(store, "mem")
        items = await snapshot(store, "mem")
        assert len(items) == 3 + 4 + 3 + 7
        moved = [i.model_copy(update={"group_id": "copy"}) for i in items]
        await store.load_group(group_of("copy", moved))
        assert [i.model_copy(update={"group_id": "mem"}) for i in await snapshot(store, "copy")] == items
        assert await store.groups() == ["copy", "mem"]
