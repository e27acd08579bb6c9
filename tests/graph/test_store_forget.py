"""Forgetting on both stores (``Forgetting.forget``): Zaria Quillfeather, her alias, her facts and her name
leave the group (her episodes' decision records included), in one transaction, as previewed, with an
audit record that does not hold her name; then no byte of the SQLite file or its WAL, and no label or
property of any Neo4j node or relationship, holds it. The other subjects' facts from the same episodes
stay; the facts her facts had retired stay retired (docs/decisions/2026-12-01-forgetting.md)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest

from epigraph.errors import ConflictError
from epigraph.graph.embedded import EmbeddedStore
from epigraph.graph.embedded.groups import Snapshot
from epigraph.graph.forgetting import RetentionPolicy
from epigraph.graph.model import Episode, EpisodeStatus
from epigraph.graph.store import EVERYTHING, EpisodeWrite, FactFilter, GraphStore, VaultEntry
from epigraph.privacy.vault import Sealer, VaultKey, new_key
from epigraph.testing import HashEmbedder
from epigraph.transfer import export_lines, read
from epigraph.transfer.moves import regroup
from tests.support.forget_world import (
    NAME,
    NEEDLES,
    NEO4J_SCAN,
    T0,
    World,
    applied,
    build,
    found_in_files,
    preview,
    request,
)
from tests.support.stores import DIM

EMBEDDER = HashEmbedder(dim=DIM)


@pytest.fixture
async def world(store: GraphStore, group: str) -> AsyncIterator[World]:
    """The world, deleted afterwards: the Neo4j probe reads the whole database, which every test shares."""
    yield await build(store, group, EMBEDDER)
    await store.delete_group(group)  # type: ignore[attr-defined]


async def name_found(store: GraphStore, group: str) -> list[str]:
    """Where the name is still found: searches, the group's dump, and the store's own bytes."""
    found: list[str] = []
    for needle in (NAME, "Zaria", "Quillfeather"):
        searches = (
            await store.search_entities_text([group], needle),
            await store.search_facts_text([group], needle, flt=FactFilter(time=EVERYTHING)),
            await store.search_episodes_text([group], needle),
        )
        found += [f"search {needle!r}: {hit.item.uuid}" for hits in searches for hit in hits]
    async for item in store.dump([group]):  # type: ignore[attr-defined]
        line = json.dumps(item.model_dump(mode="json") if hasattr(item, "model_dump") else str(item))
        found += [f"dump: {type(item).__name__}" for n in NEEDLES if n in line.lower()]
    if isinstance(store, EmbeddedStore):
        found += [f"file: {n} x{k}" for n, k in found_in_files(Path(store.path)).items() if k]
    else:
        rows = await store._conn.read(NEO4J_SCAN, {"needles": list(NEEDLES)})  # type: ignore[attr-defined]
        found += [f"neo4j: {row['labels']} {row['uuid']}" for row in rows]
    return found


async def test_the_world_names_her_everywhere_before(store: GraphStore, world: World) -> None:
    """The probes find what they look for: the name is in the searches, the dump and the bytes."""
    found = await name_found(store, world.group)
    assert any(f.startswith("search") for f in found) and any(f.startswith("dump") for f in found)
    assert any(f.startswith(("file", "neo4j")) for f in found)


async def test_forgetting_her_leaves_her_name_nowhere_and_keeps_the_others(
    store: GraphStore, world: World
) -> None:
    g = world.group
    # searched first, so the in-memory term and vector indexes hold her (they must follow the commit)
    vector = [float(x) for x in (await EMBEDDER.embed([NAME]))[0]]
    assert [h.item.uuid for h in await store.search_entities_vector([g], vector, limit=1)] == [
        world.zaria.uuid
    ]
    assert await store.search_facts_text([g], "Quillfeather")
    req = request(world)
    plan = await preview(store, req)  # type: ignore[arg-type]
    outcome = await store.forget(await applied(store, EMBEDDER, req, plan))  # type: ignore[attr-defined]
    assert world.zaria.uuid not in {h.item.uuid for h in await store.search_entities_vector([g], vector)}
    party = [float(x) for x in (await EMBEDDER.embed(["Bob met Carol at [forgotten]'s party."]))[0]]
    [best] = await store.search_facts_vector([g], party, limit=1)
    assert best.item.uuid == world.facts["party"].uuid and best.score > 0.99  # re-embedded

    # preview equals what apply removed and rewrote
    assert outcome.record.ids == plan.ids
    f = world.facts
    assert set(plan.ids["facts"]) == {
        f["married"].uuid,
        f["worked"].uuid,
        f["nurse"].uuid,
        world.corrections["about_her"].after.facts[0].uuid,
    }
    assert (
        plan.counts["facts_current"] == 3
        and plan.counts["facts_retired"] == 1
        and plan.counts["aliases"] == 1
    )
    assert await store.get_entities(g, [world.zaria.uuid]) == []
    assert await store.get_facts(g, plan.ids["facts"]) == []

    # the other subjects' facts of her episodes stay (reworded where they named her)
    kept = {x.uuid: x for x in await store.get_facts(g, [x.uuid for x in f.values()])}
    assert set(kept) == {
        f[k].uuid for k in ("dating", "carol_lyon", "acme", "party", "biscuit", "biscuit_bob")
    }
    assert kept[f["party"].uuid].text == "Bob met Carol at [forgotten]'s party."
    assert kept[f["biscuit"].uuid].text == "Bob and [forgotten] adopted Biscuit."
    assert kept[f["carol_lyon"].uuid] == f["carol_lyon"]
    assert set(plan.ids["facts_redacted"]) == {
        f["party"].uuid,
        f["biscuit"].uuid,
        world.corrections["names_her"].after.facts[0].uuid,
    }
    # ... and what her marriage retired stays retired
    dating = kept[f["dating"].uuid]
    assert dating.expired_at is not None and dating.invalidated_by == f["dating"].invalidated_by
    assert plan.ids["kept_retired"] == [f["dating"].uuid]

    # every episode stays, redacted; the summaries are rebuilt from what stays
    episodes = {e.uuid: e for e in await store.episodes(g, limit=10)}
    assert set(episodes) == {world.e1.uuid, world.e2.uuid, world.e3.uuid}
    assert episodes[world.e1.uuid].content == "Bob: I married [forgotten] last spring. Carol moved to Lyon."
    assert episodes[world.e2.uuid] == world.e2
    [bob] = await store.get_entities(g, [world.bob.uuid])
    assert "married" not in bob.summary and "Biscuit lives with Bob." in bob.summary  # composed anew

    # a correction about her is gone, one that named her is redacted; the community and the
    # conversation summaries that told of her are rebuilt (stale) or dropped
    corrections = {c.uuid: c for c in await store.corrections(g)}  # type: ignore[attr-defined]
    assert set(corrections) == {world.corrections["names_her"].uuid}
    assert corrections[world.corrections["names_her"].uuid].reason == "told by [forgotten]"
    [community] = await store.communities(g)  # type: ignore[attr-defined]
    assert (community.name, community.summary, community.members, community.stale) == (
        "[forgotten]'s circle",
        "",
        sorted([world.bob.uuid, world.carol.uuid]),
        True,
    )
    assert await store.conversation_summaries(g) == []  # type: ignore[attr-defined]
    assert set(outcome.conversations) == {"chat-1", "chat-2"}

    # the decision records of her episodes stay, scrubbed like the rest; e2's never named her
    episodes_ids = [world.e1.uuid, world.e2.uuid, world.e3.uuid]
    records = {r.episode_uuid: r for r in await store.decision_records(g, episodes_ids)}  # type: ignore[attr-defined]
    assert set(records) == set(episodes_ids)
    assert sorted(plan.ids["decisions_redacted"]) == sorted([world.e1.uuid, world.e3.uuid])
    [refused] = [s for s in records[world.e1.uuid].steps if s.act == "refused"]
    assert (refused.subject, refused.why) == ("[forgotten] Q", "not in [forgotten]'s turn")
    assert records[world.e1.uuid].texts[0] == "[[forgotten]] said"
    for name in (NAME, "Zaria", "zaria quill"):
        assert await store.decisions_naming(g, name) == []  # type: ignore[attr-defined]
    assert await store.decisions_naming(g, "[forgotten]")  # type: ignore[attr-defined]

    # the audit record: when, which call, what, and her name only as a salted hash
    assert await store.forgettings(g) == [outcome.record]  # type: ignore[attr-defined]
    assert outcome.record.is_of(NAME.upper()) and not outcome.record.is_of("Bob")
    assert not any(n in outcome.record.model_dump_json().lower() for n in NEEDLES)

    assert await name_found(store, g) == []


async def test_a_dump_carries_the_audit_record_and_the_retention_policy(
    store: GraphStore, world: World, other_group: str
) -> None:
    req = request(world)
    plan = await preview(store, req)  # type: ignore[arg-type]
    outcome = await store.forget(await applied(store, EMBEDDER, req, plan))  # type: ignore[attr-defined]
    policy = RetentionPolicy(group_id=world.group, days=90, updated_at=T0)
    await store.set_retention(policy)  # type: ignore[attr-defined]
    lines = [line async for line in export_lines(store, [world.group])]  # type: ignore[arg-type]
    dump = read(lines)
    try:
        await store.load_group(regroup(dump.groups[world.group], other_group))  # type: ignore[attr-defined]
        [moved] = await store.forgettings(other_group)  # type: ignore[attr-defined]
        assert moved == outcome.record.model_copy(update={"group_id": other_group})
        assert await store.retention_policies(other_group) == [
            policy.model_copy(update={"group_id": other_group})
        ]  # type: ignore[attr-defined]
        assert other_group in await store.groups()  # type: ignore[attr-defined]
    finally:
        await store.delete_group(other_group)  # type: ignore[attr-defined]
    assert await store.forgettings(other_group) == []  # type: ignore[attr-defined]
    assert await store.retention_policies(other_group) == []  # type: ignore[attr-defined]


async def test_deleting_her_episodes_takes_what_only_they_said(store: GraphStore, world: World) -> None:
    req = request(world, mentioning="delete")
    plan = await preview(store, req)  # type: ignore[arg-type]
    outcome = await store.forget(await applied(store, EMBEDDER, req, plan))  # type: ignore[attr-defined]
    g, f = world.group, world.facts
    assert outcome.record.ids == plan.ids
    assert sorted(plan.ids["episodes_deleted"]) == sorted([world.e1.uuid, world.e3.uuid])
    assert [e.uuid for e in await store.episodes(g)] == [world.e2.uuid]
    kept = {x.uuid for x in await store.get_facts(g, [x.uuid for x in f.values()])}
    assert kept == {f["acme"].uuid}  # only e2 states it
    # Lyon and Biscuit were only in her episodes; Bob stays (a fact added by hand touches him)
    assert set(plan.ids["orphans"]) == {world.lyon.uuid, world.biscuit.uuid}
    left = {
        e.uuid for e in await store.get_entities(g, [e.uuid for e in (world.bob, world.carol, world.lyon)])
    }
    assert left == {world.bob.uuid, world.carol.uuid}
    # their decision records went with them; e2's stays as it was
    everyone = [world.e1.uuid, world.e2.uuid, world.e3.uuid]
    records = await store.decision_records(g, everyone)  # type: ignore[attr-defined]
    assert [r.episode_uuid for r in records] == [world.e2.uuid]
    assert sorted(plan.ids["decisions_deleted"]) == sorted([world.e1.uuid, world.e3.uuid])
    assert plan.ids["decisions_redacted"] == []
    assert await name_found(store, g) == []


async def test_a_plan_the_group_changed_under_is_refused_and_nothing_is_written(
    store: GraphStore, world: World
) -> None:
    req = request(world)
    plan = await preview(store, req)  # type: ignore[arg-type]
    ready = await applied(store, EMBEDDER, req, plan)
    late = Episode(
        group_id=world.group, content="Carol: Zaria called me.", reference_time=T0, status=EpisodeStatus.DONE
    )
    await store.save_episode(late)
    with pytest.raises(ConflictError, match="changed since"):
        await store.forget(ready)  # type: ignore[attr-defined]
    assert await store.get_entities(world.group, [world.zaria.uuid]) != []
    assert await store.forgettings(world.group) == []  # type: ignore[attr-defined]
    # a plan without the embeddings of its new texts is refused too
    again = await preview(store, req)  # type: ignore[arg-type]
    with pytest.raises(ConflictError, match="no embedding"):
        await store.forget(replace(req, expect=again.digest))  # type: ignore[attr-defined]
    assert await store.get_entities(world.group, [world.zaria.uuid]) != []


async def test_forgetting_old_episodes_keeps_the_young_and_their_facts(
    store: GraphStore, world: World
) -> None:
    """Retention's way in: episodes named outright, deleted with what only they support."""
    req = request(
        world,
        entities=(),
        names=(),
        episodes=(world.e1.uuid,),
        mentioning="delete",
        subject=None,
        call="retention",
        older_than=world.e2.reference_time,
    )
    plan = await preview(store, req)  # type: ignore[arg-type]
    outcome = await store.forget(await applied(store, EMBEDDER, req, plan))  # type: ignore[attr-defined]
    g, f = world.group, world.facts
    assert outcome.record.older_than == world.e2.reference_time and outcome.record.subject is None
    assert sorted(e.uuid for e in await store.episodes(g)) == sorted([world.e2.uuid, world.e3.uuid])
    kept = {x.uuid: x for x in await store.get_facts(g, [x.uuid for x in f.values()])}
    assert set(kept) == {f[k].uuid for k in ("acme", "party", "biscuit", "biscuit_bob")}
    assert kept[f["biscuit_bob"].uuid].episodes == [world.e3.uuid]
    assert kept[f["biscuit_bob"].uuid].stated_at == world.e3.reference_time
    assert set(plan.ids["orphans"]) == {world.lyon.uuid}
    assert await store.get_entities(g, [world.zaria.uuid]) != []  # e3 mentions her too


async def test_a_reader_holding_the_wal_is_reported_not_raised(tmp_path: Path, group: str) -> None:
    """A checkpoint another connection's open read holds off (here a dump's snapshot): the forgetting is
    committed, its compaction says it could not finish, and the next checkpoint does."""
    path = tmp_path / "held.db"
    async with EmbeddedStore(str(path)) as store:
        await store.setup(DIM)
        world = await build(store, group, EMBEDDER)
        req = request(world)
        ready = await applied(store, EMBEDDER, req, await preview(store, req))
        reader = Snapshot(str(path))  # reads the file as it was
        try:
            outcome = await store.forget(ready)
        finally:
            reader.close()
        assert outcome.compaction is not None and not outcome.compaction.done
        assert "reader" in outcome.compaction.note
        assert await store.get_entities(group, [world.zaria.uuid]) == []  # committed all the same
        again = await store.forget(replace(request(world, entities=(), names=()), expect=None))
        assert again.compaction is not None and again.compaction.done
    assert found_in_files(path) == dict.fromkeys(NEEDLES, 0)


async def test_her_phone_leaves_the_vault_and_a_number_another_message_holds_stays(
    store: GraphStore, world: World
) -> None:
    """Her message held her redacted phone and Bob's; Bob's own message holds his. Deleting her
    episodes takes her number's value out of the vault (no digest, no sealed original: nothing to
    reveal), keeps Bob's, counts it in the preview as in the audit record, and never gives her number
    to another value."""
    g, vault = world.group, store  # the embedded and Neo4j stores are each a RedactionVault
    key = VaultKey.parse(new_key())
    sealer = Sealer(g, await vault.vault_header(g, Sealer.proposal(key)), key)  # type: ignore[attr-defined]

    def entry(value: str) -> VaultEntry:
        return VaultEntry("phone", sealer.digest("phone", value), sealer.seal("phone", value))

    values = ("+442079460958", "+33142685300")
    hers, bobs = await vault.placeholders(g, [entry(v) for v in values])  # type: ignore[attr-defined]
    said = (
        (f"Zaria: my number is <PHONE_{hers}>, Bob's is <PHONE_{bobs}>.", "chat-3", 3),
        (f"Bob: call me on <PHONE_{bobs}>.", "chat-4", 4),
    )
    for text, source, hours in said:
        ep = Episode(group_id=g, content=text, source_description=source, status=EpisodeStatus.DONE,
                     reference_time=T0 + timedelta(hours=hours), name=f"turn {hours}")  # fmt: skip
        await store.write_episode(EpisodeWrite(episode=ep, entities=[], facts=[], mentions=[]))
    refs = [("phone", hers), ("phone", bobs)]
    assert sorted(await vault.sealed_values(g, refs)) == refs  # type: ignore[attr-defined]

    req = request(world, mentioning="delete")
    plan = await preview(store, req)  # type: ignore[arg-type]
    assert plan.counts["vault_values"] == 1
    outcome = await store.forget(await applied(store, EMBEDDER, req, plan))  # type: ignore[attr-defined]
    assert outcome.record.counts == plan.counts and outcome.record.counts["vault_values"] == 1
    assert not any("PHONE" in i for ids in outcome.record.ids.values() for i in ids)  # numbers only

    assert await vault.held_placeholders(g) == [("phone", bobs)]  # type: ignore[attr-defined]
    sealed = await vault.sealed_values(g, refs)  # type: ignore[attr-defined]
    assert list(sealed) == [("phone", bobs)] and sealer.open("phone", sealed["phone", bobs]) == values[1]
    assert await vault.known_placeholders(g, [sealer.digest("phone", values[0])]) == [None]  # type: ignore[attr-defined]
    again = await vault.placeholders(g, [entry(values[0])])  # type: ignore[attr-defined]
    assert again == [max(hers, bobs) + 1]  # her number stays taken: the value comes back as a new one
