"""Communities through the store: the first build, updates that re-summarize only what changed, failures
that write nothing or keep the old names, and views as of a time (embedded store, scripted model)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import timedelta

import pytest

from epigraph.errors import ConfigError, LLMError
from epigraph.graph.embedded import EmbeddedStore
from epigraph.graph.model import Entity, Fact
from epigraph.overview import Communities, OverviewOptions
from epigraph.prompts.protocol import ChatRequest
from epigraph.testing import HashEmbedder, ScriptedLLM, ScriptedReply
from epigraph.testing.overview import OVERVIEW_SCRIPT, community_reply
from tests.support.records import T0, day, make_episode, write_of

G = "g"


class World:
    """Entities written once; facts added episode by episode."""

    def __init__(self, store: EmbeddedStore) -> None:
        self.store = store
        self.entities: dict[str, Entity] = {}
        self.turn = 0

    async def add(self, pairs: Sequence[tuple[str, str]], **when: object) -> list[Fact]:
        self.turn += 1
        episode = make_episode(G, f"turn {self.turn}", at=day(self.turn))
        for name in {n for pair in pairs for n in pair}:
            self.entities.setdefault(name, Entity(group_id=G, name=name, summary=f"{name} is someone."))
        facts = [
            Fact(group_id=G, source_uuid=self.entities[a].uuid, target_uuid=self.entities[b].uuid,
                 relation="KNOWS", text=f"{a} knows {b}", episodes=[episode.uuid], **when)  # type: ignore[arg-type]
            for a, b in pairs
        ]  # fmt: skip
        mentioned = [self.entities[n] for n in {n for pair in pairs for n in pair}]
        await self.store.write_episode(write_of(episode, mentioned, facts))
        return facts

    def names(self, uuids: Sequence[str]) -> set[str]:
        by_uuid = {e.uuid: e.name for e in self.entities.values()}
        return {by_uuid[u] for u in uuids}


def clique(names: Sequence[str]) -> list[tuple[str, str]]:
    return [(a, b) for i, a in enumerate(names) for b in names[i + 1 :]]


FAMILY = ["Ann", "Bob", "Cy", "Dee"]
WORK = ["Wes", "Xia", "Yan", "Zoe"]


def service(store: EmbeddedStore, llm: ScriptedLLM | None, **options: object) -> Communities:
    return Communities(store, llm, HashEmbedder(), OverviewOptions(**options))  # type: ignore[arg-type]


async def test_the_first_build_names_every_community_in_one_call(store: EmbeddedStore) -> None:
    world = World(store)
    await world.add([*clique(FAMILY), *clique(WORK), ("Dee", "Wes")])
    llm = ScriptedLLM(OVERVIEW_SCRIPT)
    update = await service(store, llm).update(G)
    assert update.rebuilt and update.summarized == 2 and update.kept == 0
    assert len(llm.calls) == 1 and update.report.llm_calls == 1 and update.report.embedding_requests == 1
    stored = await store.communities(G)
    assert [world.names(c.members) for c in stored] == [set(FAMILY), set(WORK)]
    for community in stored:
        assert not community.stale and community.embedding is not None
        assert community.name.count(" and ") == 1 and community.summary.endswith("is someone.")


async def test_an_update_summarizes_only_the_community_whose_members_changed(store: EmbeddedStore) -> None:
    world = World(store)
    await world.add([*clique(FAMILY), *clique(WORK), ("Dee", "Wes")])
    llm = ScriptedLLM(OVERVIEW_SCRIPT)
    communities = service(store, llm)
    await communities.update(G)
    before = {c.uuid: c for c in await store.communities(G)}
    await world.add([("Eve", "Ann")])  # one new entity, for the family
    update = await communities.update(G)
    assert not update.rebuilt and update.summarized == 1 and update.kept == 1 and update.dissolved == 0
    asked = json.loads(json.dumps(llm.calls[-1].variables))["communities"]
    assert len(llm.calls) == 2 and len(asked) == 1
    assert {m["name"] for m in asked[0]["members"]} == {*FAMILY, "Eve"}
    after = {c.uuid: c for c in await store.communities(G)}
    assert set(after) == set(before)  # the ids stay
    grown = next(c for c in after.values() if len(c.members) == 5)
    assert grown.updated_at > before[grown.uuid].updated_at
    untouched = next(c for c in after.values() if len(c.members) == 4)
    assert untouched == before[untouched.uuid]
    again = await communities.update(G)  # nothing changed: no call
    assert again.summarized == 0 and again.kept == 2 and len(llm.calls) == 2


async def test_a_spoiled_reply_keeps_the_names_and_is_asked_again(store: EmbeddedStore) -> None:
    world = World(store)
    await world.add([*clique(FAMILY), *clique(WORK), ("Dee", "Wes")])
    spoiled = iter(["no json", "{}"])  # after the first call: a reply and its re-ask, both unusable

    def reply(request: ChatRequest) -> str:
        return community_reply(request) if not llm.calls[:-1] else next(spoiled)

    llm = ScriptedLLM({"summarize_communities": reply})
    communities = service(store, llm)
    await communities.update(G)
    named = {c.uuid: c.name for c in await store.communities(G)}
    await world.add([("Eve", "Ann")])
    update = await communities.update(G)  # the reply and its re-ask are unusable
    assert update.summarized == 0 and update.report.warnings
    stored = {c.uuid: c for c in await store.communities(G)}
    grown = next(c for c in stored.values() if len(c.members) == 5)
    assert grown.name == named[grown.uuid] and grown.stale  # new members, old name: asked again next time
    llm = ScriptedLLM(OVERVIEW_SCRIPT)
    healed = await service(store, llm).update(G)
    assert healed.summarized == 1 and not any(c.stale for c in await store.communities(G))


async def test_an_unreachable_model_writes_nothing(store: EmbeddedStore) -> None:
    world = World(store)
    await world.add(clique(FAMILY))
    failing = ScriptedLLM({"summarize_communities": ScriptedReply(error=LLMError("connection refused"))})
    with pytest.raises(LLMError):
        await service(store, failing).update(G)
    assert await store.communities(G) == []
    with pytest.raises(ConfigError):
        await service(store, None).update(G)


async def test_much_change_rebuilds_and_keeps_the_ids_that_continue(store: EmbeddedStore) -> None:
    world = World(store)
    await world.add(clique(FAMILY))
    communities = service(store, ScriptedLLM(OVERVIEW_SCRIPT))
    (family,) = (await communities.update(G)).communities
    await world.add([*clique(WORK), ("Dee", "Wes")])  # 4 new entities for 4 clustered: rebuilt
    update = await communities.update(G)
    assert update.rebuilt and [c.uuid for c in update.communities if c.uuid == family.uuid]
    assert len(update.communities) == 2


async def test_a_view_as_of_a_time_clusters_the_facts_that_held_then(store: EmbeddedStore) -> None:
    world = World(store)
    await world.add([*clique(FAMILY), *clique(WORK), ("Dee", "Wes")], valid_at=T0)
    # until day 5 Ann and Bob were with the work group; a group of three existed only then
    await world.add([("Ann", "Xia"), ("Ann", "Yan"), ("Bob", "Zoe"), ("Bob", "Xia")], valid_at=T0,
                    invalid_at=day(5))  # fmt: skip
    await world.add(clique(["Pia", "Qi", "Ras"]), valid_at=T0, invalid_at=day(5))
    await service(store, ScriptedLLM(OVERVIEW_SCRIPT)).update(G)
    now = await service(store, None).view(G)
    assert [world.names(v.community.members) for v in now] == [set(FAMILY), set(WORK)]
    assert all(v.stored and v.size == len(v.members) == 4 for v in now)
    then = await service(store, None).view(G, as_of=T0 + timedelta(days=1))
    by_members = {frozenset(world.names(v.community.members)): v for v in then}
    trio = by_members[frozenset({"Pia", "Qi", "Ras"})]
    assert not trio.stored and trio.community.summary == "" and trio.community.uuid.startswith("unsaved-")
    assert {v.community.uuid for v in then if v.stored} <= {v.community.uuid for v in now}
    assert len(then) >= 2 and sum(v.size for v in then) == 11
    before = await service(store, None).view(G, as_of=T0 - timedelta(days=1))
    assert before == []  # nothing held yet
    known = await service(store, None).view(G, known_at=T0 - timedelta(days=1))
    assert known == []  # nothing was recorded yet


async def test_a_view_as_of_a_time_shows_only_the_members_named_by_then(store: EmbeddedStore) -> None:
    """A fact can hold before it was said (valid from day 0, said on day 1): half a day in, the cluster
    of those facts is there, but none of its members had been named yet (``graph.entity_time``)."""
    world = World(store)
    await world.add(clique(FAMILY), valid_at=T0)
    named = await service(store, None).view(G, as_of=day(1))
    assert [world.names([e.uuid for e in v.members]) for v in named] == [set(FAMILY)]
    early = await service(store, None).view(G, as_of=T0 + timedelta(hours=12))
    assert [v.members for v in early] == [[]] and early[0].size == 4
