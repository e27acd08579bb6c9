"""The GraphStore contract: the same assertions for every backend (the root conftest's ``store``).

Each test works in its own random group, so nothing is wiped between tests. Embedding vectors are small
(``DIM``), deterministic, and exactly representable in float32 so that any store can return them verbatim.
Backend-specific tests (only the embedded store today) are at the end of the file.
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
import sqlite3
from collections.abc import Mapping, Sequence
from contextlib import closing
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from epigraph.errors import (
    EpigraphError,
    EpisodeNotFound,
    SchemaMismatch,
    StoreError,
    StoreNotFound,
    StoreUnavailable,
)
from epigraph.graph.embedded import SCHEMA_VERSION, EmbeddedStore
from epigraph.graph.embedded.fts import MAX_TERMS, query_words
from epigraph.graph.model import (
    Entity,
    Episode,
    EpisodeKind,
    EpisodeStatus,
    Fact,
    IngestReport,
    Invalidation,
)
from epigraph.graph.neo4j import Neo4jStore
from epigraph.graph.store import (
    CURRENT,
    EVERYTHING,
    EntityFilter,
    FactFilter,
    GraphStore,
    StoreStats,
    TimeFilter,
)
from epigraph.graph.temporal import episode_matches, matches, resolve_contradiction
from tests.support.records import T0, day, make_entity, make_episode, make_fact, vec, write_of
from tests.support.stores import DIM


def uuids(items: Sequence[Any]) -> list[str]:
    return [getattr(i, "item", i).uuid for i in items]


async def chain(
    store: GraphStore, group: str, names: Sequence[str]
) -> tuple[Episode, list[Entity], list[Fact]]:
    """Entities ``names`` linked in a path n0 - n1 - ... by RELATES_TO facts, in one episode."""
    ep = make_episode(group, " ".join(names))
    ents = [make_entity(group, n) for n in names]
    facts = [
        make_fact(group, a, b, f"{a.name} knows {b.name}", [ep.uuid]) for a, b in itertools.pairwise(ents)
    ]
    await store.write_episode(write_of(ep, ents, facts))
    return ep, ents, facts


# --- writes -------------------------------------------------------------------------------------------


async def test_write_then_read_back_verbatim(store: GraphStore, group: str) -> None:
    report = IngestReport(
        llm_calls=3, input_tokens=120, stage_ms={"extract": 12.5}, warnings=["one dropped line"]
    )
    ep = make_episode(
        group,
        "Alice joined Acme in May.",
        name="turn 1",
        source_description="chat",
        kind=EpisodeKind.TEXT,
        status=EpisodeStatus.DONE,
        report=report,
        content_embedding=vec(0),
    )
    alice = make_entity(
        group,
        "Alice",
        1,
        aliases=["Ali", "A. Smith"],
        labels=["Person"],
        summary="an engineer",
        attributes={"age": 31, "tags": ["x"]},
    )
    acme = make_entity(group, "Acme", 2, labels=["Organization"])
    works = make_fact(
        group,
        alice,
        acme,
        "Alice works at Acme.",
        [ep.uuid],
        3,
        relation="WORKS_AT",
        valid_at=day(120),
        attributes={"confidence": 0.9},
    )
    ended = make_fact(
        group,
        alice,
        acme,
        "Alice interned at Acme.",
        [ep.uuid],
        4,
        relation="INTERNED_AT",
        valid_at=day(1),
        invalid_at=day(60),
        expired_at=day(200),
        invalidated_by=Invalidation(fact_uuid=works.uuid, episode_uuid=ep.uuid, previous_invalid_at=day(90)),
    )
    await store.write_episode(write_of(ep, [alice, acme], [works, ended]))

    assert await store.get_episode(group, ep.uuid) == ep
    assert await store.get_entities(group, [alice.uuid, acme.uuid]) == [alice, acme]
    assert await store.get_facts(group, [works.uuid, ended.uuid]) == [works, ended]
    assert await store.get_entities(group, ["nope"]) == []
    assert await store.get_facts(group, []) == []
    assert await store.get_episode(group, "nope") is None


async def test_writing_the_same_episode_twice_changes_nothing(store: GraphStore, group: str) -> None:
    ep = make_episode(group)
    a, b = make_entity(group, "A", 1), make_entity(group, "B", 2)
    f = make_fact(group, a, b, "A likes B", [ep.uuid], 3)
    write = write_of(ep, [a, b], [f], mentioned=[a, b, a])  # a mention given twice is one mention
    await store.write_episode(write)
    first = await store.stats(group)
    await store.write_episode(write)
    assert (
        await store.stats(group)
        == first
        == StoreStats(episodes=1, entities=2, facts=1, current_facts=1, mentions=2)
    )
    assert uuids(await store.search_facts_text([group], "likes")) == [f.uuid]
    assert len(await store.search_entities_vector([group], vec(1), limit=10)) == 2
    assert (await store.mention_counts(group, [a.uuid]))[a.uuid] == 1


async def test_upsert_replaces_the_whole_record_and_its_indexes(store: GraphStore, group: str) -> None:
    ep = make_episode(group)
    a = make_entity(group, "Zorblax", 1, summary="a purple walrus", aliases=["Zed"])
    await store.write_episode(write_of(ep, [a]))
    renamed = a.model_copy(update={"summary": "a green heron", "aliases": ["Zee"], "name_embedding": vec(9)})
    await store.write_episode(write_of(ep, [renamed]))

    assert await store.get_entities(group, [a.uuid]) == [renamed]
    assert uuids(await store.search_entities_text([group], "heron")) == [a.uuid]
    assert await store.search_entities_text([group], "walrus") == []
    assert (await store.entities_by_names(group, ["Zed"]))["Zed"] == []
    assert uuids((await store.entities_by_names(group, ["zee"]))["zee"]) == [a.uuid]
    top = await store.search_entities_vector([group], vec(9), limit=1)
    assert uuids(top) == [a.uuid] and top[0].score == pytest.approx(1.0, abs=1e-5)


async def test_failed_write_leaves_nothing_behind(store: GraphStore, group: str) -> None:
    saved = make_episode(group, "saved first", status=EpisodeStatus.PENDING)
    await store.save_episode(saved)
    a, b = make_entity(group, "Alpha", 1), make_entity(group, "Beta", 2)
    ghost = make_entity(group, "Ghost")  # never written
    good = make_fact(group, a, b, "Alpha meets Beta", [saved.uuid], 3)
    bad = make_fact(group, ghost, b, "Ghost haunts Beta", [saved.uuid], 4)
    done = saved.model_copy(update={"status": EpisodeStatus.DONE, "content": "changed"})
    with pytest.raises(StoreError):
        await store.write_episode(write_of(done, [a, b], [good, bad]))

    assert await store.get_episode(group, saved.uuid) == saved  # still the pending version
    assert await store.get_entities(group, [a.uuid, b.uuid]) == []
    assert await store.get_facts(group, [good.uuid]) == []
    assert await store.stats(group) == StoreStats(
        episodes=1, entities=0, facts=0, current_facts=0, mentions=0
    )
    assert await store.search_entities_text([group], "Alpha") == []
    assert await store.search_entities_vector([group], vec(1)) == []
    assert await store.search_facts_vector([group], vec(3)) == []

    fresh = make_episode(group, "never stored")
    with pytest.raises(StoreError):
        await store.write_episode(
            write_of(fresh, [a], [make_fact(group, a, ghost, "a to ghost", [fresh.uuid])])
        )
    assert await store.get_episode(group, fresh.uuid) is None
    assert await store.get_entities(group, [a.uuid]) == []


async def test_write_episodes_writes_in_order_and_stops_at_the_first_failure(
    store: GraphStore, group: str
) -> None:
    """Bulk writes: each episode atomic; the one that fails and those after it are not written, the
    ones before it are; an entity shared by consecutive episodes is written once and then found."""
    ada, ben = make_entity(group, "Ada", 1), make_entity(group, "Ben", 2)
    ghost = make_entity(group, "Ghost")  # never written
    first, second, bad, after = (
        make_episode(group, f"turn {i}", T0 + timedelta(minutes=i)) for i in range(4)
    )
    knows = make_fact(group, ada, ben, "Ada knows Ben", [first.uuid], 3)
    likes = make_fact(group, ben, ada, "Ben likes Ada", [second.uuid], 4)
    haunts = make_fact(group, ghost, ada, "Ghost haunts Ada", [bad.uuid])
    writes = [
        write_of(first, [ada, ben], [knows]),
        write_of(second, [ada, ben], [likes]),
        write_of(bad, [ada], [haunts]),
        write_of(after, [ada], [make_fact(group, ada, ada, "Ada thinks", [after.uuid])]),
    ]
    with pytest.raises(StoreError, match="entit"):  # the fact's missing endpoint
        await store.write_episodes(iter(writes))
    assert [e.uuid for e in await store.episodes(group, newest_first=False)] == [first.uuid, second.uuid]
    assert sorted(uuids(await store.get_facts(group, [knows.uuid, likes.uuid, haunts.uuid]))) == sorted(
        [knows.uuid, likes.uuid]
    )
    assert await store.stats(group) == StoreStats(
        episodes=2, entities=2, facts=2, current_facts=2, mentions=4
    )

    await store.write_episodes([writes[3]])
    assert await store.get_episode(group, after.uuid) is not None
    await store.write_episodes([])  # nothing to do


async def test_write_episodes_of_overlapping_episodes_land_as_if_written_one_by_one(
    store: GraphStore, group: str
) -> None:
    """Consecutive episodes of one bulk write that rewrite each other's entity and fact, link to an entity
    the previous one created, and add records of their own, end exactly as if written one at a time
    (the Neo4j store reads which entities an episode changed while the previous one is being written)."""
    a, b = make_entity(group, "A", 1), make_entity(group, "B", 2)
    c, d, e = make_entity(group, "C", 3), make_entity(group, "D", 4), make_entity(group, "E", 5)
    ep1, ep2, ep3 = (make_episode(group, f"turn {i}", T0 + timedelta(minutes=i)) for i in range(3))
    knows = make_fact(group, a, b, "A knows B", [ep1.uuid], 6)
    renamed = a.model_copy(update={"summary": "A moved to Oslo", "name_embedding": vec(7)})
    c_to_a = make_fact(group, c, renamed, "C met A", [ep2.uuid], 8)
    knew = knows.model_copy(update={"text": "A knew B", "episodes": [ep1.uuid, ep2.uuid]})
    c_to_d = make_fact(group, c, d, "C hired D", [ep3.uuid], 9)
    d_to_e = make_fact(group, d, e, "D married E", [ep3.uuid], 10)
    await store.write_episodes(
        [
            write_of(ep1, [a, b], [knows]),
            write_of(ep2, [renamed, c], [c_to_a, knew], mentioned=[renamed, c, b]),
            write_of(ep3, [d, e], [c_to_d, d_to_e], mentioned=[c, d, e]),
        ]
    )
    assert await store.get_entities(group, [a.uuid, c.uuid, d.uuid]) == [renamed, c, d]
    facts = await store.get_facts(group, [knows.uuid, c_to_a.uuid, c_to_d.uuid, d_to_e.uuid])
    assert facts == [knew, c_to_a, c_to_d, d_to_e]
    assert await store.stats(group) == StoreStats(
        episodes=3, entities=5, facts=4, current_facts=4, mentions=8
    )
    assert uuids(await store.search_entities_vector([group], vec(7), limit=1)) == [a.uuid]


async def test_a_fact_cannot_join_entities_of_another_group(
    store: GraphStore, group: str, other_group: str
) -> None:
    elsewhere = make_entity(other_group, "Elsewhere")
    await store.write_episode(write_of(make_episode(other_group), [elsewhere]))
    ep = make_episode(group)
    here = make_entity(group, "Here")
    cross = Fact(
        group_id=group,
        source_uuid=here.uuid,
        target_uuid=elsewhere.uuid,
        relation="NEAR",
        text="here is near elsewhere",
        episodes=[ep.uuid],
    )
    with pytest.raises(StoreError):
        await store.write_episode(write_of(ep, [here], [cross]))
    assert await store.stats(group) == StoreStats(0, 0, 0, 0, 0)


async def test_a_mention_of_an_entity_the_group_lacks_is_refused(store: GraphStore, group: str) -> None:
    ep = make_episode(group)
    known, ghost = make_entity(group, "Known"), make_entity(group, "Ghost")  # ghost is never written
    with pytest.raises(StoreError):
        await store.write_episode(write_of(ep, [known], mentioned=[known, ghost]))
    assert await store.stats(group) == StoreStats(0, 0, 0, 0, 0)
    assert await store.get_episode(group, ep.uuid) is None


async def test_a_write_that_mixes_groups_is_refused(store: GraphStore, group: str, other_group: str) -> None:
    ep = make_episode(group)
    with pytest.raises(EpigraphError):
        await store.write_episode(
            write_of(ep, [make_entity(group, "Mine"), make_entity(other_group, "Theirs")])
        )
    assert await store.stats(group) == StoreStats(0, 0, 0, 0, 0)
    assert await store.stats(other_group) == StoreStats(0, 0, 0, 0, 0)


async def test_a_fact_that_ends_before_it_starts_is_refused(store: GraphStore, group: str) -> None:
    """``model_copy`` skips the model's interval check; the store checks again before writing anything."""
    first = make_episode(group, "the first turn")
    a, b = make_entity(group, "Ann"), make_entity(group, "Bob")
    await store.write_episode(write_of(first, [a, b]))
    ep = make_episode(group, "the second turn", at=day(1))
    fact = make_fact(group, a, b, "Ann knows Bob", [ep.uuid], valid_at=day(5))
    inverted = fact.model_copy(update={"invalid_at": day(4)})
    with pytest.raises(StoreError, match=r"invalid_at .* is before valid_at"):
        await store.write_episode(write_of(ep, [a, b], [inverted]))
    with pytest.raises(StoreError, match=r"invalid_at .* is before valid_at"):
        await store.write_episodes([write_of(ep, [a, b], [fact]), write_of(ep, [a, b], [inverted])])
    # the bulk write stops at the refused episode: the one before it landed, as written
    assert await store.get_episode(group, ep.uuid) is not None
    stored = await store.get_facts(group, [fact.uuid])
    assert [(f.valid_at, f.invalid_at) for f in stored] == [(day(5), None)]
    ordered = fact.model_copy(update={"invalid_at": day(5)})  # empty, not inverted: accepted
    await store.write_episode(write_of(ep, [a, b], [ordered]))
    assert [f.invalid_at for f in await store.get_facts(group, [fact.uuid])] == [day(5)]


async def test_save_episode_upserts_status_and_report(store: GraphStore, group: str) -> None:
    ep = make_episode(group, "hello")
    await store.save_episode(ep)
    failed = ep.model_copy(update={"status": EpisodeStatus.FAILED, "error": "LLM timed out"})
    await store.save_episode(failed)
    assert await store.get_episode(group, ep.uuid) == failed
    assert [e.uuid for e in await store.episodes(group, status=EpisodeStatus.FAILED)] == [ep.uuid]
    assert await store.episodes(group, status=EpisodeStatus.PENDING) == []


async def test_concurrent_calls_are_safe(store: GraphStore, group: str) -> None:
    eps = [make_episode(group, f"turn {i}", at=day(i)) for i in range(12)]
    ents = [make_entity(group, f"Person{i}", i) for i in range(12)]
    await asyncio.gather(
        *(store.write_episode(write_of(e, [n])) for e, n in zip(eps, ents, strict=True)),
        *(store.stats(group) for _ in range(6)),
    )
    results = await asyncio.gather(*(store.get_entities(group, [n.uuid]) for n in ents))
    assert [r[0].uuid for r in results] == [n.uuid for n in ents]
    assert (await store.stats(group)).episodes == 12


# --- group isolation -------------------------------------------------------------------------------


async def test_groups_are_isolated_in_every_read(store: GraphStore, group: str, other_group: str) -> None:
    worlds = {}
    for g in (group, other_group):
        ep = make_episode(g, "Alice met Bob in Paris", at=day(1), content_embedding=vec(4))
        alice, bob = (
            make_entity(g, "Alice", 1, labels=["Person"]),
            make_entity(g, "Bob", 2, labels=["Person"]),
        )
        met = make_fact(g, alice, bob, "Alice met Bob in Paris", [ep.uuid], 3, relation="MET")
        await store.write_episode(write_of(ep, [alice, bob], [met]))
        worlds[g] = (ep, alice, bob, met)
    ep, alice, bob, met = worlds[group]
    mine = {ep.uuid, alice.uuid, bob.uuid, met.uuid}
    theirs = other_group

    assert await store.get_episode(theirs, ep.uuid) is None
    assert await store.get_entities(theirs, [alice.uuid, bob.uuid]) == []
    assert await store.get_facts(theirs, [met.uuid]) == []
    assert await store.facts_between(theirs, alice.uuid, bob.uuid) == []
    assert await store.facts_around(theirs, [alice.uuid]) == []
    assert await store.neighbours(theirs, [alice.uuid], depth=3) == {}
    assert (await store.mention_counts(theirs, [alice.uuid])).get(alice.uuid, 0) == 0
    assert await store.episodes_mentioning(theirs, alice.uuid) == []
    assert not mine & set(uuids(await store.episodes(theirs)))
    by_name = await store.entities_by_names(theirs, ["Alice"])
    assert len(by_name["Alice"]) == 1 and by_name["Alice"][0].uuid not in mine
    for hits in (
        await store.search_entities_text([theirs], "Alice"),
        await store.search_facts_text([theirs], "Paris"),
        await store.search_episodes_text([theirs], "Paris"),
        await store.search_entities_vector([theirs], vec(1)),
        await store.search_facts_vector([theirs], vec(3)),
        await store.search_episodes_vector([theirs], vec(4)),
    ):
        assert len(hits) >= 1 and not mine & set(uuids(hits))
        assert {h.item.group_id for h in hits} == {theirs}
    both = await store.search_entities_text([group, theirs], "Alice")
    assert {h.item.group_id for h in both} == {group, theirs}
    assert await store.stats(theirs) == await store.stats(group) == StoreStats(1, 2, 1, 1, 2)
    with pytest.raises(EpisodeNotFound):
        await store.delete_episode(theirs, ep.uuid)
    assert await store.get_episode(group, ep.uuid) == ep


# --- search ---------------------------------------------------------------------------------------


async def test_fulltext_ranks_the_document_with_every_word_first(store: GraphStore, group: str) -> None:
    ep = make_episode(group, "the quarterly budget review meeting")
    others = [make_episode(group, "a budget", at=day(1)), make_episode(group, "lunch plans", at=day(2))]
    hub = make_entity(group, "Hub")
    full = make_entity(group, "Budget Review Meeting", summary="quarterly")
    part = make_entity(group, "Budget", summary="money")
    facts = [
        make_fact(group, hub, full, "The quarterly budget review meeting moved to Friday", [ep.uuid]),
        make_fact(group, hub, part, "The budget is tight", [ep.uuid]),
        make_fact(group, hub, part, "Lunch is at noon", [ep.uuid]),
    ]
    await store.write_episode(write_of(ep, [hub, full, part], facts))
    for other in others:
        await store.save_episode(other)
    query = "quarterly budget review meeting"

    fact_hits = await store.search_facts_text([group], query)
    assert uuids(fact_hits) == [facts[0].uuid, facts[1].uuid]
    assert fact_hits[0].score > fact_hits[1].score
    entity_hits = await store.search_entities_text([group], query)
    assert uuids(entity_hits)[:2] == [full.uuid, part.uuid]
    assert uuids(await store.search_episodes_text([group], query)) == [ep.uuid, others[0].uuid]
    assert uuids(await store.search_facts_text([group], query, limit=1)) == [facts[0].uuid]


async def test_fulltext_with_words_that_occur_nowhere_or_apart(store: GraphStore, group: str) -> None:
    ep = make_episode(group)
    alice, bob, paris, rome = (make_entity(group, n) for n in ("Alice", "Bob", "Paris", "Rome"))
    lives = make_fact(group, alice, paris, "Alice lives in Paris", [ep.uuid])
    works = make_fact(group, bob, rome, "Bob works in Rome", [ep.uuid])
    await store.write_episode(write_of(ep, [alice, bob, paris, rome], [lives, works]))

    hits = await store.search_facts_text([group], "which city does Alice live in, Paris?")
    assert uuids(hits)[0] == lives.uuid
    assert set(uuids(await store.search_facts_text([group], "Alice Rome"))) == {lives.uuid, works.uuid}
    assert await store.search_facts_text([group], "zzyzx qwfp") == []


async def test_fulltext_leaves_english_stop_words_out_in_both_stores(store: GraphStore, group: str) -> None:
    """Neo4j's ``english`` analyzer drops stop words; the embedded store leaves them out of its queries,
    so a question made of them finds nothing anywhere and they never decide an order."""
    ep = make_episode(group, "it is what it is")
    alice, it_team = (
        make_entity(group, "Alice"),
        make_entity(group, "The IT team", summary="it is in the office"),
    )
    with_stops = make_fact(group, alice, it_team, "It is the case that this is in the office", [ep.uuid])
    garden = make_fact(group, alice, it_team, "Alice waters the garden", [ep.uuid])
    await store.write_episode(write_of(ep, [alice, it_team], [with_stops, garden]))

    for question in ("it is in the", "The IS it"):
        assert await store.search_facts_text([group], question) == []
        assert await store.search_entities_text([group], question) == []
        assert await store.search_episodes_text([group], question) == []
    assert uuids(await store.search_facts_text([group], "is the garden in it")) == [garden.uuid]


async def test_fulltext_finds_a_group_among_many_newer_matches_of_another(
    store: GraphStore, group: str, other_group: str
) -> None:
    """The other group's rows matching the same words are newer and far more numerous."""
    ep = make_episode(group)
    a, b = make_entity(group, "a"), make_entity(group, "b")
    mine = [make_fact(group, a, b, f"shared harbour lighthouse note {i}", [ep.uuid]) for i in range(3)]
    await store.write_episode(write_of(ep, [a, b], mine))
    other_ep = make_episode(other_group)
    x, y = make_entity(other_group, "x"), make_entity(other_group, "y")
    theirs = [
        make_fact(other_group, x, y, f"shared harbour lighthouse filler {i}", [other_ep.uuid])
        for i in range(700)
    ]
    await store.write_episode(write_of(other_ep, [x, y], theirs))

    hits = await store.search_facts_text([group], "shared harbour lighthouse", limit=10)
    assert set(uuids(hits)) == {f.uuid for f in mine}
    assert len(await store.search_facts_text([other_group], "harbour lighthouse", limit=50)) == 50


async def test_fulltext_searches_aliases_and_respects_filters(store: GraphStore, group: str) -> None:
    ep = make_episode(group)
    bob = make_entity(group, "Robert Paulson", aliases=["Bob"], labels=["Person"])
    bobcat = make_entity(group, "Bob's Bobcat Rental", labels=["Organization"])
    old = make_fact(
        group,
        bob,
        bobcat,
        "Bob rented a bobcat",
        [ep.uuid],
        relation="RENTED",
        valid_at=day(0),
        invalid_at=day(1),
    )
    now = make_fact(group, bob, bobcat, "Bob owns a bobcat", [ep.uuid], relation="OWNS", valid_at=day(2))
    await store.write_episode(write_of(ep, [bob, bobcat], [old, now]))

    assert bob.uuid in uuids(await store.search_entities_text([group], "bob"))
    people = await store.search_entities_text([group], "bob", flt=EntityFilter(labels=("Person",)))
    assert uuids(people) == [bob.uuid]
    assert uuids(await store.search_facts_text([group], "bobcat")) == [now.uuid]
    everything = await store.search_facts_text([group], "bobcat", flt=FactFilter(time=EVERYTHING))
    assert set(uuids(everything)) == {old.uuid, now.uuid}
    rented = FactFilter(time=EVERYTHING, relations=("RENTED",))
    assert uuids(await store.search_facts_text([group], "bobcat", flt=rented)) == [old.uuid]
    assert uuids(
        await store.search_facts_text([group], "bobcat", flt=FactFilter(time=TimeFilter(as_of=day(0.5))))
    ) == [old.uuid]


async def test_fulltext_matches_other_forms_of_a_word(store: GraphStore, group: str) -> None:
    """Both stores stem English words (Porter: FTS5's ``porter`` tokenizer, Lucene's ``english`` analyzer),
    in the index and in the query alike."""
    ep = make_episode(group, "Alice: we hiked up the ridge and camped there")
    alice = make_entity(group, "Alice", summary="Alice hikes every weekend")
    club = make_entity(group, "Hiking Club")
    trail = make_entity(group, "Ridge Trail")
    hikes = make_fact(group, alice, club, "Alice hikes every weekend", [ep.uuid])
    runs = make_fact(group, alice, trail, "Alice runs on the ridge trail", [ep.uuid])
    await store.write_episode(write_of(ep, [alice, club, trail], [hikes, runs]))
    other = make_episode(group, "Bob: lunch plans", at=day(1))
    await store.save_episode(other)

    assert uuids(await store.search_facts_text([group], "hiking")) == [hikes.uuid]
    assert uuids(await store.search_facts_text([group], "Running")) == [runs.uuid]
    assert uuids(await store.search_facts_text([group], "weekends")) == [hikes.uuid]
    assert uuids(await store.search_episodes_text([group], "hikes camping")) == [ep.uuid]
    entity_hits = uuids(await store.search_entities_text([group], "hiked"))
    assert entity_hits[0] == club.uuid  # a name match outranks a summary match
    assert set(entity_hits) == {club.uuid, alice.uuid}


def brute_force(query: Sequence[float], items: Mapping[str, Sequence[float]], k: int) -> list[str]:
    """Uuids of the ``k`` items most cosine-similar to ``query``, best first (numpy reference)."""
    keys = list(items)
    mat = np.array([items[key] for key in keys], dtype=np.float64)
    mat /= np.linalg.norm(mat, axis=1, keepdims=True)
    q = np.asarray(query, dtype=np.float64)
    scores = mat @ (q / np.linalg.norm(q))
    return [keys[i] for i in np.argsort(-scores, kind="stable")[:k]]


async def test_vector_top_k_equals_brute_force(store: GraphStore, group: str, other_group: str) -> None:
    ep = make_episode(group)
    ents = [make_entity(group, f"E{i}", 100 + i) for i in range(40)]
    facts = [make_fact(group, ents[i], ents[i + 1], f"fact {i}", [ep.uuid], 200 + i) for i in range(39)]
    await store.write_episode(write_of(ep, ents, facts))
    ep2 = make_episode(other_group)
    foreign = [make_entity(other_group, f"F{i}", 300 + i) for i in range(10)]
    await store.write_episode(write_of(ep2, foreign))

    for seed in (1, 2, 3):
        q = vec(seed)
        expected = brute_force(q, {e.uuid: e.name_embedding or [] for e in ents}, 10)
        assert uuids(await store.search_entities_vector([group], q, limit=10)) == expected
        expected = brute_force(q, {f.uuid: f.text_embedding or [] for f in facts}, 10)
        hits = await store.search_facts_vector([group], q, limit=10)
        assert uuids(hits) == expected
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
        both = {e.uuid: e.name_embedding or [] for e in (*ents, *foreign)}
        assert uuids(await store.search_entities_vector([group, other_group], q, limit=10)) == brute_force(
            q, both, 10
        )


async def test_episode_vector_search(store: GraphStore, group: str, other_group: str) -> None:
    """Episodes are ranked by content_embedding; episodes without one are no candidates; upserts and
    deletes are seen at once."""
    eps = [make_episode(group, f"turn {i}", at=day(i), content_embedding=vec(500 + i)) for i in range(25)]
    plain = make_episode(group, "no vector", at=day(99))
    for ep in (*eps, plain):
        await store.save_episode(ep)
    await store.save_episode(make_episode(other_group, "elsewhere", content_embedding=vec(1)))

    for seed in (1, 2):
        q = vec(seed)
        expected = brute_force(q, {e.uuid: e.content_embedding or [] for e in eps}, 10)
        assert uuids(await store.search_episodes_vector([group], q, limit=10)) == expected
    everything = await store.search_episodes_vector([group], vec(1), limit=100)
    assert len(everything) == 25 and plain.uuid not in uuids(everything)

    moved = eps[0].model_copy(update={"content_embedding": vec(77)})
    await store.save_episode(moved)
    top = await store.search_episodes_vector([group], vec(77), limit=1)
    assert uuids(top) == [moved.uuid] and top[0].score == pytest.approx(1.0, abs=1e-5)
    await store.delete_episode(group, moved.uuid)
    assert moved.uuid not in uuids(await store.search_episodes_vector([group], vec(77), limit=100))


async def test_vector_search_applies_filters(store: GraphStore, group: str) -> None:
    ep = make_episode(group)
    person = make_entity(group, "P", 1, labels=["Person"])
    place = make_entity(group, "Q", 2, labels=["Place"])
    near = vec(1)
    current = make_fact(group, person, place, "lives there", [ep.uuid], 5, relation="LIVES_IN")
    retired = make_fact(
        group,
        person,
        place,
        "lived there",
        [ep.uuid],
        relation="LIVES_IN",
        valid_at=day(0),
        invalid_at=day(5),
        expired_at=day(6),
    )
    retired = retired.model_copy(update={"text_embedding": near})
    visits = make_fact(group, person, place, "visits", [ep.uuid], 6, relation="VISITS")
    await store.write_episode(write_of(ep, [person, place], [current, retired, visits]))

    assert uuids(await store.search_entities_vector([group], near, flt=EntityFilter(labels=("Place",)))) == [
        place.uuid
    ]
    default = await store.search_facts_vector([group], near)
    assert retired.uuid not in uuids(default) and set(uuids(default)) == {current.uuid, visits.uuid}
    assert uuids(
        await store.search_facts_vector([group], near, limit=1, flt=FactFilter(time=EVERYTHING))
    ) == [retired.uuid]
    only = FactFilter(relations=("VISITS",))
    assert uuids(await store.search_facts_vector([group], near, flt=only)) == [visits.uuid]
    past = FactFilter(time=TimeFilter(as_of=day(1), known_at=day(1)))
    assert uuids(await store.search_facts_vector([group], near, flt=past)) == []  # created_at is now


# --- graph neighbourhood ---------------------------------------------------------------------------


async def test_bfs_depth_on_a_chain(store: GraphStore, group: str) -> None:
    _, (a, b, c, d), _ = await chain(store, group, ["a", "b", "c", "d"])
    assert await store.neighbours(group, [a.uuid], depth=1) == {b.uuid: 1}
    assert await store.neighbours(group, [a.uuid], depth=2) == {b.uuid: 1, c.uuid: 2}
    assert await store.neighbours(group, [a.uuid], depth=3) == {b.uuid: 1, c.uuid: 2, d.uuid: 3}
    assert await store.neighbours(group, [a.uuid], depth=9) == {b.uuid: 1, c.uuid: 2, d.uuid: 3}
    assert await store.neighbours(group, [b.uuid], depth=1) == {a.uuid: 1, c.uuid: 1}
    assert await store.neighbours(group, [a.uuid, d.uuid], depth=1) == {b.uuid: 1, c.uuid: 1}
    assert await store.neighbours(group, [a.uuid], depth=0) == {}
    assert await store.neighbours(group, ["missing"], depth=2) == {}


async def test_bfs_follows_only_facts_passing_the_filter(store: GraphStore, group: str) -> None:
    ep, (a, b, c), facts = await chain(store, group, ["a", "b", "c"])
    ended = facts[1].model_copy(update={"valid_at": day(0), "invalid_at": day(1)})
    await store.write_episode(write_of(ep, [], [ended]))
    assert await store.neighbours(group, [a.uuid], depth=3) == {b.uuid: 1}
    assert await store.neighbours(group, [a.uuid], depth=3, flt=FactFilter(time=EVERYTHING)) == {
        b.uuid: 1,
        c.uuid: 2,
    }
    assert await store.neighbours(group, [a.uuid], depth=3, flt=FactFilter(relations=("OTHER",))) == {}


async def test_facts_between_and_around(store: GraphStore, group: str) -> None:
    ep = make_episode(group)
    a, b, c = (make_entity(group, n) for n in "abc")
    ab = make_fact(group, a, b, "a likes b", [ep.uuid], relation="LIKES")
    ba = make_fact(group, b, a, "b likes a", [ep.uuid], relation="LIKES")
    ba_old = make_fact(
        group, b, a, "b knew a", [ep.uuid], relation="KNEW", valid_at=day(0), invalid_at=day(1)
    )
    bc = make_fact(group, b, c, "b likes c", [ep.uuid], relation="LIKES")
    await store.write_episode(write_of(ep, [a, b, c], [ab, ba, ba_old, bc]))

    assert set(uuids(await store.facts_between(group, a.uuid, b.uuid))) == {ab.uuid, ba.uuid}
    assert set(uuids(await store.facts_between(group, b.uuid, a.uuid))) == {ab.uuid, ba.uuid}
    every = FactFilter(time=EVERYTHING)
    assert set(uuids(await store.facts_between(group, a.uuid, b.uuid, every))) == {
        ab.uuid,
        ba.uuid,
        ba_old.uuid,
    }
    knew = FactFilter(time=EVERYTHING, relations=("KNEW",))
    assert uuids(await store.facts_between(group, a.uuid, b.uuid, knew)) == [ba_old.uuid]
    assert await store.facts_between(group, a.uuid, c.uuid) == []

    assert set(uuids(await store.facts_around(group, [c.uuid]))) == {bc.uuid}
    assert set(uuids(await store.facts_around(group, [a.uuid]))) == {ab.uuid, ba.uuid}
    assert set(uuids(await store.facts_around(group, [a.uuid, c.uuid], every))) == {
        ab.uuid,
        ba.uuid,
        ba_old.uuid,
        bc.uuid,
    }
    assert len(await store.facts_around(group, [b.uuid], every, limit=2)) == 2


# --- time travel -----------------------------------------------------------------------------------


async def test_a_vector_search_bounds_facts_written_after_an_earlier_search(
    store: GraphStore, group: str
) -> None:
    """As of a time and known at one, for facts written once the group's vectors were in use (the
    embedded store keeps its matrix, with each row's times, in step with writes)."""
    a, b = make_entity(group, "A"), make_entity(group, "B")
    ep = make_episode(group, "first", at=day(1))
    first = make_fact(group, a, b, "first", [ep.uuid], seed=1, valid_at=day(1), created_at=day(1))
    await store.write_episode(write_of(ep, [a, b], [first]))
    assert uuids(await store.search_facts_vector([group], vec(1), 10)) == [first.uuid]
    ep2 = make_episode(group, "second", at=day(10))
    later = make_fact(group, a, b, "later", [ep2.uuid], seed=2, valid_at=day(2), created_at=day(10))
    await store.write_episode(write_of(ep2, [a, b], [later]))

    async def found(**bounds: datetime) -> set[str]:
        flt = FactFilter(time=TimeFilter(**bounds))
        return set(uuids(await store.search_facts_vector([group], vec(1), 10, flt)))

    assert await found(known_at=day(5)) == {first.uuid}
    assert await found(known_at=day(11)) == {first.uuid, later.uuid}
    assert await found(as_of=day(1.5)) == {first.uuid}
    assert await found(as_of=day(3)) == {first.uuid, later.uuid}
    assert await found(as_of=day(3), known_at=day(9)) == {first.uuid}
    assert await found(known_at=day(0)) == set()


async def test_as_of_known_at_and_include_retired_on_a_fact_that_changed_twice(
    store: GraphStore, group: str
) -> None:
    """Lives in Paris (said day 0) -> Berlin (said day 10) -> Rome (said day 20), each contradicting."""
    alice = make_entity(group, "Alice")
    cities = [make_entity(group, n) for n in ("Paris", "Berlin", "Rome")]
    eps = [make_episode(group, f"I live in {c.name}", at=day(10 * i)) for i, c in enumerate(cities)]
    lives = [
        make_fact(
            group,
            alice,
            c,
            f"Alice lives in {c.name}",
            [e.uuid],
            relation="LIVES_IN",
            valid_at=day(10 * i),
            created_at=day(10 * i),
        )
        for i, (c, e) in enumerate(zip(cities, eps, strict=True))
    ]
    await store.write_episode(write_of(eps[0], [alice, cities[0]], [lives[0]]))
    paris, berlin = resolve_contradiction(lives[0], lives[1], eps[1].uuid, day(10))
    await store.write_episode(write_of(eps[1], [alice, cities[1]], [paris, berlin]))
    berlin, rome = resolve_contradiction(berlin, lives[2], eps[2].uuid, day(20))
    await store.write_episode(write_of(eps[2], [alice, cities[2]], [berlin, rome]))

    async def living(flt: TimeFilter) -> set[str]:
        return set(uuids(await store.facts_around(group, [alice.uuid], FactFilter(time=flt))))

    assert await living(CURRENT) == {rome.uuid}
    assert await living(TimeFilter(as_of=day(5), known_at=day(5))) == {paris.uuid}
    assert await living(TimeFilter(as_of=day(15), known_at=day(15))) == {berlin.uuid}
    assert await living(TimeFilter(as_of=day(25), known_at=day(25))) == {rome.uuid}
    # On day 5 the graph believed Paris was open-ended (its previous_invalid_at), so day 15 was Paris.
    assert await living(TimeFilter(as_of=day(15), known_at=day(5))) == {paris.uuid}
    # Seen from now, history as the graph believes it today.
    assert await living(TimeFilter(as_of=day(5))) == {paris.uuid}
    assert await living(TimeFilter(as_of=day(15))) == {berlin.uuid}
    assert await living(TimeFilter(as_of=day(5), known_at=day(-1))) == set()  # nothing learned yet
    assert await living(EVERYTHING) == {paris.uuid, berlin.uuid, rome.uuid}
    stored = {f.uuid: f for f in await store.get_facts(group, uuids(lives))}
    assert stored[paris.uuid].invalid_at == day(10) and stored[berlin.uuid].invalid_at == day(20)
    assert stored[berlin.uuid].invalidated_by == Invalidation(fact_uuid=rome.uuid, episode_uuid=eps[2].uuid)
    assert (await store.stats(group)).current_facts == 1


def year(y: int, month: int = 1, d: int = 1) -> datetime:
    return datetime(y, month, d, tzinfo=UTC)


async def test_history_of_a_fact_that_changed_twice_as_of_and_known_at(store: GraphStore, group: str) -> None:
    """Paris [2019, 2021) retired by Berlin [2021, 2023) retired by Lisbon [2023, ...), each learned a
    month after it started (so event time and system time differ)."""
    alice = make_entity(group, "Alice")
    cities = [make_entity(group, n) for n in ("Paris", "Berlin", "Lisbon")]
    starts = [year(2019), year(2021), year(2023)]
    learned = [year(2019, 2), year(2021, 2), year(2023, 2)]
    eps = [make_episode(group, f"I live in {c.name}", at=at) for c, at in zip(cities, learned, strict=True)]
    lives = [
        make_fact(
            group,
            alice,
            c,
            f"Alice lives in {c.name}",
            [e.uuid],
            relation="LIVES_IN",
            valid_at=start,
            created_at=at,
        )
        for c, e, start, at in zip(cities, eps, starts, learned, strict=True)
    ]
    await store.write_episode(write_of(eps[0], [alice, cities[0]], [lives[0]]))
    paris, berlin = resolve_contradiction(lives[0], lives[1], eps[1].uuid, learned[1])
    await store.write_episode(write_of(eps[1], [alice, cities[1]], [paris, berlin]))
    berlin, lisbon = resolve_contradiction(berlin, lives[2], eps[2].uuid, learned[2])
    await store.write_episode(write_of(eps[2], [alice, cities[2]], [berlin, lisbon]))
    city = {paris.uuid: "Paris", berlin.uuid: "Berlin", lisbon.uuid: "Lisbon"}

    async def where(flt: TimeFilter) -> set[str]:
        around = await store.facts_around(group, [alice.uuid], FactFilter(time=flt))
        between = await store.facts_between(group, alice.uuid, cities[1].uuid, FactFilter(time=flt))
        assert {f.uuid for f in between} == {f.uuid for f in around} & {berlin.uuid}
        return {city[f.uuid] for f in around}

    assert await where(TimeFilter(as_of=year(2020))) == {"Paris"}
    assert await where(TimeFilter(as_of=year(2022))) == {"Berlin"}
    assert await where(CURRENT) == {"Lisbon"}
    assert await where(EVERYTHING) == {"Paris", "Berlin", "Lisbon"}
    # Before the second contradiction was learned, Berlin was open-ended.
    assert await where(TimeFilter(known_at=year(2022))) == {"Berlin"}
    assert await where(TimeFilter(as_of=year(2024), known_at=year(2022))) == {"Berlin"}
    assert await where(TimeFilter(as_of=year(2023, 1, 15), known_at=year(2023, 1, 20))) == {"Berlin"}
    # ... while today the graph knows that mid-January 2023 was already Lisbon.
    assert await where(TimeFilter(as_of=year(2023, 1, 15))) == {"Lisbon"}
    # Before the first one, Paris was.
    assert await where(TimeFilter(as_of=year(2022), known_at=year(2020))) == {"Paris"}
    assert await where(TimeFilter(known_at=year(2019, 1, 15))) == set()  # nothing learned yet
    stored = {f.uuid: f for f in await store.get_facts(group, [paris.uuid, berlin.uuid, lisbon.uuid])}
    assert stored[berlin.uuid].invalid_at == year(2023) and stored[berlin.uuid].expired_at == learned[2]
    assert stored[berlin.uuid].invalidated_by == Invalidation(
        fact_uuid=lisbon.uuid, episode_uuid=eps[2].uuid, previous_invalid_at=None
    )
    assert (await store.stats(group)).current_facts == 1


async def test_store_filtering_agrees_with_temporal_matches(store: GraphStore, group: str) -> None:
    """Every read path applies ``graph.temporal.matches``: a grid of facts against a grid of filters
    (their entities said and recorded before every instant of the grid, so they exist under each)."""
    ep = make_episode(group, at=day(-3), created_at=day(-3))
    a, b = make_entity(group, "a", created_at=day(-3)), make_entity(group, "b", created_at=day(-3))
    bounds = [None, day(0), day(5), day(10)]
    intervals = [(v, end) for v in bounds for end in bounds if v is None or end is None or v < end]
    times = [
        (v, end, known, gone)
        for v, end in intervals
        for known in (day(-1), day(4))
        for gone in (None, day(6))
    ]

    def shared(text: str, **kw: Any) -> Fact:
        return make_fact(group, a, b, f"shared word {text}", [ep.uuid], 1, **kw)

    facts = [
        shared(f"number {i}", valid_at=v, invalid_at=end, created_at=known, expired_at=gone)
        for i, (v, end, known, gone) in enumerate(times)
    ]
    assert len(facts) == 40
    # Facts retired by a contradiction: a new end in event time, an expiry, and the end they had before
    # (unbounded or later); one invalidated without an expiry; one stored already retired (late-arriving).
    retired = [
        (v, end, known, day(6), previous)
        for v, end in intervals
        if end is not None
        for known in (day(-1), day(4))
        for previous in (None, day(11))
    ] + [
        (day(0), day(5), day(-1), None, None),
        (day(0), day(5), day(-1), None, day(11)),
        (day(0), day(5), day(6), day(6), day(10)),
    ]
    facts += [
        shared(
            f"retired {i}",
            valid_at=v,
            invalid_at=end,
            created_at=known,
            expired_at=gone,
            invalidated_by=Invalidation(
                fact_uuid=f"contradiction-{i}", episode_uuid=ep.uuid, previous_invalid_at=previous
            ),
        )
        for i, (v, end, known, gone, previous) in enumerate(retired)
    ]
    assert len(facts) == 67
    # Facts whose statement gave no start: they begin when first stated (day 3 or day 7), unless the
    # interval believed for them ends by then (stated after it ended: an open start).
    undated = [
        (end, known, gone, previous, stated)
        for end, gone, previous in (
            (None, None, None), (day(5), None, None), (day(10), None, None),
            (day(5), day(6), None), (day(5), day(6), day(11)), (day(10), day(6), day(5)),
        )
        for known in (day(-1), day(4))
        for stated in (day(3), day(7))
    ]  # fmt: skip
    facts += [
        shared(
            f"undated {i}",
            invalid_at=end,
            stated_at=stated,
            created_at=known,
            expired_at=gone,
            invalidated_by=None
            if previous is None and gone is None
            else Invalidation(fact_uuid=f"undated-{i}", episode_uuid=ep.uuid, previous_invalid_at=previous),
        )
        for i, (end, known, gone, previous, stated) in enumerate(undated)
    ]
    assert len(facts) == 91
    await store.write_episode(write_of(ep, [a, b], facts))
    instants = [None, day(-2), day(0), day(3), day(4), day(5), day(6), day(7), day(9), day(10), day(11)]
    known = [None, day(-2), day(0), day(4), day(5), day(6), day(7)]
    filters = [TimeFilter(as_of=s, known_at=k) for s in instants for k in known] + [EVERYTHING]
    for flt in filters:
        now = datetime.now(UTC)
        expected = {f.uuid for f in facts if matches(f, flt, now)}
        fflt = FactFilter(time=flt)
        assert set(uuids(await store.facts_around(group, [a.uuid], fflt, limit=1000))) == expected, flt
        assert set(uuids(await store.facts_between(group, b.uuid, a.uuid, fflt))) == expected, flt
        assert (
            set(uuids(await store.search_facts_text([group], "shared", limit=1000, flt=fflt))) == expected
        ), flt
        assert (
            set(uuids(await store.search_facts_vector([group], vec(1), limit=1000, flt=fflt))) == expected
        ), flt
        assert (await store.neighbours(group, [a.uuid], flt=fflt)) == ({b.uuid: 1} if expected else {}), flt


# --- deletion --------------------------------------------------------------------------------------


async def test_delete_episode_cleans_up_provenance(store: GraphStore, group: str) -> None:
    e1 = make_episode(group, "Alice works at Acme and lives in Paris", at=day(0))
    alice, acme, paris = (
        make_entity(group, "Alice", 1),
        make_entity(group, "Acme", 2),
        make_entity(group, "Paris", 3),
    )
    works = make_fact(
        group, alice, acme, "Alice works at Acme", [e1.uuid], 4, relation="WORKS_AT", valid_at=day(0)
    )
    in_paris = make_fact(
        group, alice, paris, "Alice lives in Paris", [e1.uuid], 5, relation="LIVES_IN", valid_at=day(0)
    )
    await store.write_episode(write_of(e1, [alice, acme, paris], [works, in_paris]))

    e2 = make_episode(group, "Alice, still at Acme, moved to Berlin", at=day(10), content_embedding=vec(8))
    berlin = make_entity(group, "Berlin", 6)
    in_berlin = make_fact(
        group, alice, berlin, "Alice lives in Berlin", [e2.uuid], 7, relation="LIVES_IN", valid_at=day(10)
    )
    retired_paris, in_berlin = resolve_contradiction(in_paris, in_berlin, e2.uuid, datetime.now(UTC))
    works_again = works.model_copy(update={"episodes": [e1.uuid, e2.uuid]})
    await store.write_episode(write_of(e2, [alice, berlin], [in_berlin, retired_paris, works_again]))
    assert set(uuids(await store.facts_around(group, [alice.uuid]))) == {works.uuid, in_berlin.uuid}

    result = await store.delete_episode(group, e2.uuid)
    assert result.removed_facts == [in_berlin.uuid]
    assert result.restored_facts == [in_paris.uuid]
    assert result.updated_facts == [works.uuid]
    assert result.removed_entities == [berlin.uuid]
    assert set(result.touched_entities) == {alice.uuid, acme.uuid, paris.uuid}

    assert await store.get_episode(group, e2.uuid) is None
    assert await store.get_facts(group, [works.uuid, in_paris.uuid, in_berlin.uuid]) == [works, in_paris]
    assert await store.get_entities(group, [berlin.uuid]) == []
    assert set(uuids(await store.facts_around(group, [alice.uuid]))) == {works.uuid, in_paris.uuid}
    assert (await store.mention_counts(group, [alice.uuid]))[alice.uuid] == 1
    assert await store.search_entities_text([group], "Berlin") == []
    assert await store.search_facts_text([group], "Berlin", flt=FactFilter(time=EVERYTHING)) == []
    assert berlin.uuid not in uuids(await store.search_entities_vector([group], vec(6), limit=50))
    assert await store.search_episodes_vector([group], vec(8)) == []
    assert in_berlin.uuid not in uuids(
        await store.search_facts_vector([group], vec(7), limit=50, flt=FactFilter(time=EVERYTHING))
    )
    assert await store.stats(group) == StoreStats(
        episodes=1, entities=3, facts=2, current_facts=2, mentions=3
    )

    result = await store.delete_episode(group, e1.uuid)
    assert set(result.removed_facts) == {works.uuid, in_paris.uuid}
    assert set(result.removed_entities) == {alice.uuid, acme.uuid, paris.uuid}
    assert result.touched_entities == []
    assert await store.stats(group) == StoreStats(0, 0, 0, 0, 0)
    assert await store.search_entities_vector([group], vec(1)) == []
    with pytest.raises(EpisodeNotFound):
        await store.delete_episode(group, e1.uuid)


async def test_delete_re_dates_an_undated_fact_by_the_statements_it_keeps(
    store: GraphStore, group: str
) -> None:
    """An undated fact starts when first stated (``stated_at``): when the episode that stated it first is
    deleted, it starts at the earliest stored episode left; one never dated stays undated; one whose
    remaining episodes are not stored keeps its date."""
    first, later = make_episode(group, "first", at=day(0)), make_episode(group, "later", at=day(5))
    a, b = make_entity(group, "a"), make_entity(group, "b")
    await store.write_episode(write_of(later, [a, b]))
    both = make_fact(group, a, b, "said twice", [first.uuid, later.uuid], stated_at=day(0))
    never = make_fact(group, a, b, "never dated", [first.uuid, later.uuid])
    elsewhere = make_fact(group, a, b, "said elsewhere too", [first.uuid, "not-stored"], stated_at=day(0))
    await store.write_episode(write_of(first, [a, b], [both, never, elsewhere]))
    early = FactFilter(time=TimeFilter(as_of=day(2)))
    assert set(uuids(await store.facts_around(group, [a.uuid], early))) == {
        both.uuid,
        never.uuid,
        elsewhere.uuid,
    }

    result = await store.delete_episode(group, first.uuid)
    assert result.updated_facts == sorted([both.uuid, never.uuid, elsewhere.uuid])
    stored = {f.uuid: f for f in await store.get_facts(group, [both.uuid, never.uuid, elsewhere.uuid])}
    assert stored[both.uuid] == both.model_copy(update={"episodes": [later.uuid], "stated_at": day(5)})
    assert stored[never.uuid] == never.model_copy(update={"episodes": [later.uuid]})
    assert stored[elsewhere.uuid] == elsewhere.model_copy(update={"episodes": ["not-stored"]})
    assert set(uuids(await store.facts_around(group, [a.uuid], early))) == {never.uuid, elsewhere.uuid}
    assert (
        set(uuids(await store.search_facts_vector([group], vec(1), flt=early))) == set()
    )  # none has a vector
    assert set(uuids(await store.search_facts_text([group], "said", flt=early))) == {elsewhere.uuid}


async def test_delete_removes_the_facts_of_orphaned_entities_only(store: GraphStore, group: str) -> None:
    e1, e2 = make_episode(group, "one", at=day(0)), make_episode(group, "two", at=day(1))
    a, b, c = make_entity(group, "a"), make_entity(group, "b"), make_entity(group, "c")
    await store.write_episode(write_of(e1, [a, b], [make_fact(group, a, b, "a-b", [e1.uuid])]))
    bc = make_fact(group, b, c, "b-c", [e2.uuid])
    ca = make_fact(group, c, a, "c-a said in e1 about c", [e1.uuid])  # c is only mentioned by e2
    await store.write_episode(write_of(e2, [b, c], [bc]))
    await store.write_episode(write_of(e1, [], [ca], mentioned=[]))

    result = await store.delete_episode(group, e2.uuid)
    assert result.removed_entities == [c.uuid]
    assert set(result.removed_facts) == {bc.uuid, ca.uuid}
    assert (await store.stats(group)).facts == 1


async def test_delete_restores_a_late_fact_whose_contradiction_is_removed(
    store: GraphStore, group: str
) -> None:
    """A late-arriving fact was stored retired by an existing one; deleting the episode that made the
    existing fact removes it, so the late fact stands again."""
    e1, e2 = (
        make_episode(group, "Bob lives in Oslo since March", at=day(60)),
        make_episode(group, "late", at=day(70)),
    )
    bob, oslo, rome = make_entity(group, "Bob"), make_entity(group, "Oslo"), make_entity(group, "Rome")
    oslo_fact = make_fact(
        group, bob, oslo, "Bob lives in Oslo", [e1.uuid], relation="LIVES_IN", valid_at=day(60)
    )
    await store.write_episode(write_of(e1, [bob, oslo], [oslo_fact]))
    late = make_fact(group, bob, rome, "Bob lives in Rome", [e2.uuid], relation="LIVES_IN", valid_at=day(1))
    _, late = resolve_contradiction(oslo_fact, late, e2.uuid, datetime.now(UTC))
    await store.write_episode(write_of(e2, [bob, rome], [late]))
    assert set(uuids(await store.facts_around(group, [bob.uuid]))) == {oslo_fact.uuid}

    result = await store.delete_episode(group, e1.uuid)
    assert result.removed_facts == [oslo_fact.uuid]
    assert result.restored_facts == [late.uuid]
    assert uuids(await store.facts_around(group, [bob.uuid])) == [late.uuid]


# --- hostile input ---------------------------------------------------------------------------------

HOSTILE = [
    'Say "hello" to "quotes"',
    "O'Brien's back\\slash \\\\ C:\\path\\to",
    r"+ - && || ! ( ) { } [ ] ^ \" ~ * ? : \ / lucene",
    "name: AND OR NOT NEAR(a b, 2) * ^start col:value",
    "MATCH (n) DETACH DELETE n // cypher",
    "'; DROP TABLE entities; -- sql",
    "Robert'); DELETE FROM facts WHERE ('1'='1",
    "emoji 🎉🚀 family 👨‍👩‍👧 naïve café",
    "\u0000 nul \t tab \n newline",
    "word " * 2000 + "needle",  # 10 kB
]


@pytest.mark.parametrize("text", HOSTILE, ids=lambda s: repr(s[:24]))
async def test_hostile_strings_are_stored_verbatim_and_harmless(
    store: GraphStore, group: str, text: str
) -> None:
    ep = make_episode(group, text, name=text[:200], source_description=text[:200])
    hub = make_entity(group, "Hub")
    odd = make_entity(group, text, aliases=[text[::-1]], summary=text)
    fact = make_fact(group, hub, odd, text, [ep.uuid])
    await store.write_episode(write_of(ep, [hub, odd], [fact]))

    assert await store.get_episode(group, ep.uuid) == ep
    assert await store.get_entities(group, [odd.uuid]) == [odd]
    assert await store.get_facts(group, [fact.uuid]) == [fact]
    assert uuids((await store.entities_by_names(group, [text]))[text]) == [odd.uuid]
    assert odd.uuid in uuids(await store.search_entities_text([group], text, limit=5))
    assert uuids(await store.search_facts_text([group], text)) == [fact.uuid]
    assert uuids(await store.search_episodes_text([group], text)) == [ep.uuid]
    assert await store.stats(group) == StoreStats(1, 2, 1, 1, 2)


# Ids a fulltext analyzer turns into nothing at all (stop words, punctuation), or into common terms.
ERASED_IDS = ["the", "?! --", "it-is a"]


@pytest.mark.parametrize("text", [*HOSTILE[:8], *ERASED_IDS], ids=lambda s: repr(s[:24]))
async def test_delete_episode_of_a_hostile_uuid_finds_exactly_its_facts(
    store: GraphStore, group: str, text: str
) -> None:
    """A caller's episode uuid may hold any printable text: deletion finds the facts that list it, and no
    other (Neo4j looks them up in its fact fulltext index, which analyzes the uuid like any text)."""
    hostile = make_episode(group, "first", uuid=text)
    decoy = make_episode(group, "second", uuid=text + " x")
    a, b = make_entity(group, "A"), make_entity(group, "B")
    only = make_fact(group, a, b, "only the hostile episode says so", [hostile.uuid])
    shared = make_fact(group, b, a, "both episodes say so", [hostile.uuid, decoy.uuid])
    other = make_fact(group, a, b, "only the decoy says so", [decoy.uuid])
    await store.write_episode(write_of(hostile, [a, b], [only, shared]))
    await store.write_episode(write_of(decoy, [a, b], [shared, other]))

    result = await store.delete_episode(group, hostile.uuid)

    assert (result.removed_facts, result.updated_facts) == ([only.uuid], [shared.uuid])
    remaining = await store.get_facts(group, [only.uuid, shared.uuid, other.uuid])
    assert [(f.uuid, f.episodes) for f in remaining] == [
        (shared.uuid, [decoy.uuid]),
        (other.uuid, [decoy.uuid]),
    ]


async def test_ids_that_analyze_to_nothing_still_find_names_and_provenance(store: GraphStore) -> None:
    """A group id and an episode uuid made of stop words only: no fulltext term can narrow to them."""
    group = "-".join(["the", "a", "of", "it", *np.random.default_rng().choice(["is", "to", "be", "on"], 12)])
    episode = make_episode(group, "the only episode", uuid="the")
    kept = make_episode(group, "another one", uuid="to-be")
    a, b = make_entity(group, "The"), make_entity(group, "It")
    only = make_fact(group, a, b, "it is", [episode.uuid])
    shared = make_fact(group, b, a, "to be", [episode.uuid, kept.uuid])
    await store.write_episode(write_of(episode, [a, b], [only, shared]))
    await store.write_episode(write_of(kept, [a, b], [shared]))

    assert uuids((await store.entities_by_names(group, ["the"]))["the"]) == [a.uuid]
    result = await store.delete_episode(group, episode.uuid)

    assert (result.removed_facts, result.updated_facts) == ([only.uuid], [shared.uuid])
    assert [f.episodes for f in await store.get_facts(group, [shared.uuid])] == [[kept.uuid]]


HOSTILE_QUERIES = [
    *HOSTILE,
    "",
    " ",
    '"',
    "*",
    "NEAR(",
    "AND",
    "OR",
    "NOT",
    "(",
    ")",
    "^",
    "-",
    "🎉",
    "\\",
    "a*",
    'x" OR 1=1 --',
    "{!lucene}",
    "/regex/",
    "~fuzzy~2",
]


async def test_hostile_queries_never_error(store: GraphStore, group: str) -> None:
    ep = make_episode(group, "the needle is in the haystack")
    hub, hay = make_entity(group, "Haystack"), make_entity(group, "Needle")
    await store.write_episode(
        write_of(ep, [hub, hay], [make_fact(group, hub, hay, "the needle is here", [ep.uuid])])
    )
    for query in HOSTILE_QUERIES:
        for hits in (
            await store.search_entities_text([group], query),
            await store.search_facts_text([group], query),
            await store.search_episodes_text([group], query),
        ):
            assert isinstance(hits, list), query
            assert all(h.item.group_id == group for h in hits)
    assert await store.entities_by_names(group, HOSTILE_QUERIES) == {q: [] for q in HOSTILE_QUERIES}


# --- lookups ---------------------------------------------------------------------------------------


async def test_entities_by_names_through_aliases_and_case(store: GraphStore, group: str) -> None:
    ep = make_episode(group)
    bob = make_entity(group, "Robert Smith", aliases=["Bob", "Bobby  S."])
    bobcorp = make_entity(group, "BobCorp", aliases=["bob"])
    alice = make_entity(group, "Alice")
    await store.write_episode(write_of(ep, [bob, bobcorp, alice]))

    found = await store.entities_by_names(group, ["ROBERT   smith", "bob", "bobby s", "Alice.", "Carol"])
    assert uuids(found["ROBERT   smith"]) == [bob.uuid]
    assert set(uuids(found["bob"])) == {bob.uuid, bobcorp.uuid}
    assert uuids(found["bobby s"]) == [bob.uuid]
    assert uuids(found["Alice."]) == [alice.uuid]
    assert found["Carol"] == []
    assert await store.entities_by_names(group, []) == {}


async def test_episodes_by_time_window_and_status(store: GraphStore, group: str) -> None:
    eps = [
        make_episode(
            group, f"turn {i}", at=day(i), status=EpisodeStatus.DONE if i % 2 else EpisodeStatus.PENDING
        )
        for i in range(5)
    ]
    tie = make_episode(
        group, "same time, created later", at=day(2), created_at=eps[2].created_at + timedelta(seconds=1)
    )
    for ep in (*eps, tie):
        await store.save_episode(ep)

    newest = await store.episodes(group)
    assert uuids(newest) == [eps[4].uuid, eps[3].uuid, tie.uuid, eps[2].uuid, eps[1].uuid, eps[0].uuid]
    oldest = await store.episodes(group, newest_first=False)
    assert uuids(oldest) == uuids(newest)[::-1]
    window = await store.episodes(group, since=day(1), until=day(3), newest_first=False)
    assert uuids(window) == [eps[1].uuid, eps[2].uuid, tie.uuid]
    assert uuids(await store.episodes(group, status=EpisodeStatus.DONE)) == [eps[3].uuid, eps[1].uuid]
    assert uuids(await store.episodes(group, limit=2)) == [eps[4].uuid, eps[3].uuid]
    assert await store.episodes(group, since=day(10)) == []


async def test_episodes_around_are_the_neighbours_in_the_group_order(
    store: GraphStore, group: str, other_group: str
) -> None:
    eps = [make_episode(group, f"turn {i}", at=day(i)) for i in range(5)]
    # a tie in reference time is ordered by created_at, a tie in both by uuid
    tie = make_episode(
        group, "same time, created later", at=day(2), created_at=eps[2].created_at + timedelta(seconds=1)
    )
    twins = [make_episode(group, f"twin {c}", at=day(6), created_at=T0, uuid=f"twin-{c}") for c in "bca"]
    stranger = make_episode(other_group, "another group", at=day(2))
    for ep in (*eps, tie, *twins, stranger):
        await store.save_episode(ep)
    a, b, c = sorted(twins, key=lambda e: e.uuid)

    async def around(ids: Sequence[str], window: int = 1) -> list[str]:
        return uuids(await store.episodes_around(group, ids, window))

    assert await around([eps[2].uuid]) == [eps[1].uuid, tie.uuid]
    assert await around([tie.uuid]) == [eps[2].uuid, eps[3].uuid]
    assert await around([eps[2].uuid], 2) == [eps[0].uuid, eps[1].uuid, tie.uuid, eps[3].uuid]
    # the ends of the group; overlapping windows give each episode once, oldest first, never a given one
    assert await around([eps[4].uuid, eps[0].uuid, eps[1].uuid]) == [eps[2].uuid, eps[3].uuid, a.uuid]
    assert await around([b.uuid]) == [a.uuid, c.uuid]
    assert await around([c.uuid], 3) == [eps[4].uuid, a.uuid, b.uuid]
    assert await around([eps[3].uuid, eps[3].uuid], 0) == []
    # unknown uuids and other groups' episodes have no neighbours here; nothing of another group comes back
    assert await around(["nope", stranger.uuid]) == []
    assert await around([]) == []
    assert (await store.episodes_around(group, [eps[0].uuid], 1)) == [eps[1]]  # whole episodes
    assert uuids(await store.episodes_around(other_group, [stranger.uuid], 5)) == []


async def test_episodes_mentioning_and_mention_counts(store: GraphStore, group: str) -> None:
    a, b, c = make_entity(group, "a"), make_entity(group, "b"), make_entity(group, "c")
    e1, e2, e3 = (make_episode(group, f"turn {i}", at=day(i)) for i in range(3))
    await store.write_episode(write_of(e1, [a, b]))
    await store.write_episode(write_of(e2, [a]))
    await store.write_episode(write_of(e3, [a, b, c], mentioned=[a]))
    await store.write_episode(write_of(e3, [], mentioned=[a]))  # a repeated mention counts once

    assert uuids(await store.episodes_mentioning(group, a.uuid)) == [e3.uuid, e2.uuid, e1.uuid]
    assert uuids(await store.episodes_mentioning(group, a.uuid, limit=1)) == [e3.uuid]
    assert uuids(await store.episodes_mentioning(group, b.uuid)) == [e1.uuid]
    assert await store.episodes_mentioning(group, c.uuid) == []
    counts = await store.mention_counts(group, [a.uuid, b.uuid, c.uuid])
    assert (counts[a.uuid], counts[b.uuid], counts.get(c.uuid, 0)) == (3, 1, 0)


async def test_every_episode_read_of_a_search_passes_the_time_filter(store: GraphStore, group: str) -> None:
    """Episodes said after ``as_of``, or stored after ``known_at``, are left out by every episode read a
    search makes (fulltext, vector, mentions, neighbours), in the store's query: exactly
    ``temporal.episode_matches``, and ``limit`` counts only the episodes that pass."""
    alice = make_entity(group, "Alice")
    # said on day i, stored on day 20 + i; one said early (day 1.5) but stored late (day 40)
    eps = [
        make_episode(
            group, f"Alice talks, turn {i}", at=day(i), created_at=day(20 + i), content_embedding=vec(i)
        )
        for i in range(6)
    ]
    late = make_episode(
        group, "Alice talks, stored late", at=day(1.5), created_at=day(40), content_embedding=vec(9)
    )
    for ep in (*eps, late):
        await store.write_episode(write_of(ep, [alice]))
    ordered = sorted([*eps, late], key=lambda e: (e.reference_time, e.created_at, e.uuid))
    filters = [
        CURRENT,
        EVERYTHING,
        TimeFilter(as_of=day(2.5)),
        TimeFilter(as_of=day(3)),  # said at as_of: counts
        TimeFilter(known_at=day(22.5)),
        TimeFilter(as_of=day(4.5), known_at=day(23.5)),
        TimeFilter(as_of=day(-1)),
    ]
    for flt in filters:
        passing = [e for e in ordered if episode_matches(e, flt)]
        want = set(uuids(passing))
        text = await store.search_episodes_text([group], "Alice talks", 100, flt)
        assert set(uuids(text)) == want, flt
        assert len(await store.search_episodes_text([group], "Alice talks", 2, flt)) == min(2, len(want))
        vector = await store.search_episodes_vector([group], vec(0), 100, flt)
        assert set(uuids(vector)) == want, flt
        assert len(await store.search_episodes_vector([group], vec(0), 2, flt)) == min(2, len(want))
        mentioning = await store.episodes_mentioning(group, alice.uuid, 100, flt)
        assert uuids(mentioning) == uuids(passing)[::-1], flt
        if eps[0].uuid in want:  # its neighbours are the next two passing episodes in the group's order
            around = await store.episodes_around(group, [eps[0].uuid], 2, flt)
            at = uuids(passing).index(eps[0].uuid)
            assert uuids(around) == uuids(passing)[at + 1 : at + 3], flt
    assert eps[0].uuid in uuids(await store.episodes_around(group, [eps[1].uuid], 1))  # the default: all


async def test_stats_per_group_and_overall(store: GraphStore, group: str, other_group: str) -> None:
    _, _, facts = await chain(store, group, ["x", "y", "z"])
    ep = make_episode(group, "retire one", at=day(3))
    ended = facts[0].model_copy(update={"invalid_at": day(1), "valid_at": day(0)})
    await store.write_episode(write_of(ep, [], [ended]))
    await chain(store, other_group, ["p", "q"])

    assert await store.stats(group) == StoreStats(
        episodes=2, entities=3, facts=2, current_facts=1, mentions=3
    )
    assert await store.stats(other_group) == StoreStats(
        episodes=1, entities=2, facts=1, current_facts=1, mentions=2
    )
    overall = await store.stats()
    assert (
        overall.episodes >= 3 and overall.entities >= 5 and overall.facts >= 3 and overall.current_facts >= 2
    )


# === embedded store only ==============================================================================


async def test_embedded_in_memory_store_works() -> None:
    async with EmbeddedStore(":memory:") as store:
        await store.setup(embedding_dim=DIM)
        g = "mem"
        ep = make_episode(g, "in memory")
        a, b = make_entity(g, "Ada", 1), make_entity(g, "Babbage", 2)
        f = make_fact(g, a, b, "Ada wrote to Babbage", [ep.uuid], 3)
        await store.write_episode(write_of(ep, [a, b], [f]))
        assert uuids(await store.search_facts_text([g], "wrote")) == [f.uuid]
        assert uuids(await store.search_entities_vector([g], vec(1), limit=1)) == [a.uuid]
        assert await store.stats() == StoreStats(1, 2, 1, 1, 2)
    with pytest.raises(StoreUnavailable):
        await store.stats()


async def test_embedded_reopens_a_file_with_its_data(tmp_path: Path) -> None:
    path = str(tmp_path / "kg.db")
    ep = make_episode("g", "persisted")
    a = make_entity("g", "Persisted", 1)
    async with EmbeddedStore(path) as store:
        await store.setup(DIM)
        await store.write_episode(write_of(ep, [a]))
    async with EmbeddedStore(path) as store:
        await store.setup(DIM)
        assert await store.get_entities("g", [a.uuid]) == [a]
        assert uuids(await store.search_entities_vector(["g"], vec(1))) == [a.uuid]
        with pytest.raises(SchemaMismatch):
            await store.setup(DIM * 2)  # vectors of another dimension are stored
        wrong = Entity(group_id="g", name="Wrong", name_embedding=[1.0, 2.0])
        with pytest.raises(StoreError):
            await store.write_episode(write_of(ep, [wrong]))
        assert await store.get_entities("g", [wrong.uuid]) == []


async def test_embedded_never_creates_a_file_it_was_told_must_exist(tmp_path: Path) -> None:
    missing = tmp_path / "typo.db"
    async with EmbeddedStore(str(missing), create=False) as store:
        with pytest.raises(StoreNotFound, match="no epigraph store at"):
            await store.stats()
        with pytest.raises(StoreNotFound):
            await store.setup(DIM)
    assert not missing.exists()
    existing = str(tmp_path / "kg.db")
    a = make_entity("g", "Kept", 1)
    async with EmbeddedStore(existing) as store:
        await store.setup(DIM)
        await store.write_episode(write_of(make_episode("g"), [a]))
    async with EmbeddedStore(existing, create=False) as store:  # an existing file opens as usual
        assert await store.get_entities("g", [a.uuid]) == [a]


async def test_embedded_refuses_a_newer_schema_and_foreign_files(tmp_path: Path) -> None:
    newer = tmp_path / "newer.db"
    async with EmbeddedStore(str(newer)) as store:
        await store.setup(DIM)
    with closing(sqlite3.connect(newer)) as conn, conn:
        conn.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION + 1),))
    async with EmbeddedStore(str(newer)) as store:
        with pytest.raises(SchemaMismatch):
            await store.stats()

    foreign = tmp_path / "foreign.db"
    with closing(sqlite3.connect(foreign)) as conn, conn:
        conn.execute("CREATE TABLE something_else (x)")
    async with EmbeddedStore(str(foreign)) as store:
        with pytest.raises(SchemaMismatch):
            await store.setup(DIM)

    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"this is not a database" * 100)
    async with EmbeddedStore(str(garbage)) as store:
        with pytest.raises(StoreUnavailable):
            await store.stats()


async def test_embedded_sees_writes_of_another_connection(tmp_path: Path) -> None:
    path = str(tmp_path / "shared.db")
    async with EmbeddedStore(path) as reader, EmbeddedStore(path) as writer:
        await reader.setup(DIM)
        first = make_entity("g", "First", 1)
        await writer.write_episode(write_of(make_episode("g", "1"), [first]))
        assert uuids(await reader.search_entities_vector(["g"], vec(1))) == [first.uuid]  # cache loaded now
        second = make_entity("g", "Second", 2)
        await writer.write_episode(write_of(make_episode("g", "2"), [second]))
        assert uuids(await reader.search_entities_vector(["g"], vec(2), limit=1)) == [second.uuid]


def test_fts_query_words_are_distinct_words_without_stop_words() -> None:
    assert query_words('Say "hi", say HI! NEAR(x) *') == ["Say", "hi", "NEAR", "x"]
    assert query_words("🎉 ' ; --") == []
    assert query_words("What is THE point of it") == ["What", "point"]  # English stop words go


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("hello world", ["hello", "world"]),
        ('say "hi"', ["say", "hi"]),
        ("NEAR(x y) AND c*", ["NEAR", "x", "y", "c"]),  # AND is a stop word, NEAR a plain one
        ("the a AND OR NOT", []),
        ("'; DROP TABLE x", ["DROP", "TABLE", "x"]),
        ("Hello hello HELLO", ["Hello"]),
        ("snake_case", ["snake", "case"]),
        ("🎉 *", []),
        ("", []),
    ],
)
def test_fts_query_words_keep_only_words(query: str, expected: list[str]) -> None:
    assert query_words(query) == expected


def test_fts_query_words_are_bounded() -> None:
    assert query_words(" ".join(f"w{i}" for i in range(1000))) == [f"w{i}" for i in range(MAX_TERMS)]


@pytest.mark.parametrize("store_class", [EmbeddedStore, Neo4jStore], ids=lambda c: c.__name__)
def test_every_store_has_the_protocols_signatures(store_class: type) -> None:
    """Same method names, parameter names, kinds and defaults as GraphStore: a caller's keyword call
    works on either store."""
    for name, member in vars(GraphStore).items():
        if name.startswith("_") or not callable(member):
            continue
        expected = inspect.signature(member)
        actual = inspect.signature(getattr(store_class, name))
        as_tuples = [
            [(p.name, p.kind, p.default) for p in sig.parameters.values()] for sig in (expected, actual)
        ]
        assert as_tuples[0] == as_tuples[1], f"{store_class.__name__}.{name}{actual} != GraphStore{expected}"
