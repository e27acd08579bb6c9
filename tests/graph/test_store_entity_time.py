"""The store contract of entities in time (issue 63), run on both stores: as of T, no entity, alias,
summary or count from after T, in every read that returns entities (``graph.entity_time``)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from epigraph.graph.entity_time import withheld_note
from epigraph.graph.model import Entity
from epigraph.graph.store import CURRENT, EVERYTHING, EntityFilter, FactFilter, GraphStore, TimeFilter
from tests.support.dana import ASKED, DANA_SUMMARY, Dana, vec, write_dana

AS_OF = TimeFilter(as_of=ASKED)
KNOWN_AT = TimeFilter(known_at=ASKED)
BOTH = TimeFilter(as_of=ASKED, known_at=ASKED)
BACK_THEN = [AS_OF, KNOWN_AT, BOTH]


def by_name(entities: list[Entity]) -> dict[str, Entity]:
    return {e.name: e for e in entities}


async def every_read(store: GraphStore, w: Dana, time: TimeFilter) -> dict[str, dict[str, Entity]]:
    """What each read that returns entities returns for Dana, Acme, Initech and Hooli under ``time``."""
    g = w.group_id
    every = [w.dana.uuid, w.acme.uuid, w.initech.uuid, w.hooli.uuid]
    named = await store.entities_by_names(g, ["Dana", "Acme", "Initech", "Hooli"], time)
    flt = EntityFilter(time=time)
    return {
        "get_entities": by_name(await store.get_entities(g, every, time)),
        "entities_by_names": by_name([e for es in named.values() for e in es]),
        "search_entities_text": by_name(
            [h.item for h in await store.search_entities_text([g], "Dana Acme Initech Hooli", 10, flt)]
        ),
        "search_entities_vector": by_name(
            [h.item for h in await store.search_entities_vector([g], vec(3), 10, flt)]
        ),
    }


@pytest.mark.parametrize("time", BACK_THEN, ids=["as_of", "known_at", "both"])
async def test_as_of_a_time_no_entity_alias_or_summary_from_after_it(
    store: GraphStore, group: str, time: TimeFilter
) -> None:
    w = await write_dana(store, group)
    for read, found in (await every_read(store, w, time)).items():
        assert set(found) == {"Dana", "Acme", "Hooli"}, read  # Initech: first named in 2024
        dana = found["Dana"]
        assert dana.aliases == [], read  # "Dana S." was said in 2024
        assert dana.summary == "" and dana.summary_withheld is not None, read
        assert dana.summary_withheld >= datetime(2024, 3, 1, tzinfo=UTC), read
        assert "after the time asked" in (withheld_note(dana) or ""), read
        assert found["Hooli"].summary == "Made by hand.", read  # no episode: as it was made


async def test_counts_and_neighbours_count_only_what_was_said_by_then(store: GraphStore, group: str) -> None:
    w = await write_dana(store, group)
    uuids = [w.dana.uuid, w.acme.uuid, w.initech.uuid, w.hooli.uuid]
    assert await store.mention_counts(group, uuids) == {w.dana.uuid: 2, w.acme.uuid: 2, w.initech.uuid: 1,
                                                        w.hooli.uuid: 0}  # fmt: skip
    for time in BACK_THEN:
        assert await store.mention_counts(group, uuids, time) == {
            w.dana.uuid: 1, w.acme.uuid: 1, w.initech.uuid: 0, w.hooli.uuid: 0
        }, time  # fmt: skip
    # "consults for Initech since 2021", said in 2024: valid as of 2023, but Initech was not named yet
    consults = FactFilter(time=AS_OF, relations=("CONSULTS_FOR",))
    assert [f.text for f in await store.facts_around(group, [w.dana.uuid], consults)] == [
        "Dana consults for Initech"
    ]
    assert await store.neighbours(group, [w.dana.uuid], 2, consults) == {}
    assert await store.neighbours(group, [w.dana.uuid], 1, FactFilter(time=AS_OF)) == {w.acme.uuid: 1}
    assert await store.neighbours(group, [w.dana.uuid], 1, FactFilter(CURRENT, ("CONSULTS_FOR",))) == {
        w.initech.uuid: 1
    }


async def test_an_alias_said_later_finds_nothing_as_of_before(store: GraphStore, group: str) -> None:
    await write_dana(store, group)
    now = await store.entities_by_names(group, ["Dana S."])
    assert [e.name for e in now["Dana S."]] == ["Dana"]
    assert (await store.entities_by_names(group, ["Dana S."], AS_OF))["Dana S."] == []


async def test_before_anything_was_known_no_entity_and_now_every_one_as_stored(
    store: GraphStore, group: str
) -> None:
    w = await write_dana(store, group)
    long_ago = datetime(2020, 1, 1, tzinfo=UTC)
    for time in (TimeFilter(known_at=long_ago), TimeFilter(as_of=long_ago)):
        assert all(found == {} for found in (await every_read(store, w, time)).values()), time
    for time in (CURRENT, EVERYTHING, TimeFilter(as_of=datetime(2030, 1, 1, tzinfo=UTC))):
        for read, found in (await every_read(store, w, time)).items():
            assert set(found) == {"Dana", "Acme", "Initech", "Hooli"}, (read, time)
            assert found["Dana"].summary == DANA_SUMMARY and found["Dana"].aliases == ["Dana S."], read
            assert found["Dana"].summary_withheld is None, read


async def test_an_entity_no_episode_mentions_exists_from_when_it_was_made(
    store: GraphStore, group: str
) -> None:
    w = await write_dana(store, group)
    before = TimeFilter(as_of=datetime(2023, 2, 15, tzinfo=UTC))
    assert [e.name for e in await store.get_entities(group, [w.hooli.uuid, w.dana.uuid], before)] == ["Dana"]
