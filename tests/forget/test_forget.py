"""``kg.forget``: a subject found by its id, name or alias (a shared name refused with the candidates'
ids), previewed, then forgotten exactly as previewed, with its audit record; what a model wrote is
written again by the model, which never sees the name; retention keeps exactly the young episodes and
their facts. The store-level bars (bytes, Neo4j properties) are ``tests/graph/test_store_forget.py``."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from epigraph import KnowledgeGraph, Settings
from epigraph.errors import (
    AmbiguousName,
    ConflictError,
    EntityNotFound,
    RetentionNotSet,
    StoreRoleMissing,
    UsageError,
)
from epigraph.graph.embedded import EmbeddedStore
from epigraph.graph.model import Entity
from epigraph.graph.store import EpisodeWrite
from epigraph.pipeline.options import IngestOptions, SummaryOptions
from epigraph.testing import HashEmbedder, ScriptedLLM
from epigraph.testing.overview import OVERVIEW_SCRIPT
from tests.support.core_store import CoreOnly
from tests.support.forget_world import NAME, NEEDLES, World, build, found_in_files
from tests.support.world import F, Turn
from tests.support.world import World as Script

DIM = 64
G = "default"


def script() -> Script:
    built = Script()
    built.overrides.update(OVERVIEW_SCRIPT)
    return built


@pytest.fixture
async def graph(tmp_path: Path) -> AsyncIterator[tuple[KnowledgeGraph, World, ScriptedLLM]]:
    llm = script().llm()
    store = EmbeddedStore(str(tmp_path / "g.db"))
    kg = KnowledgeGraph(
        Settings(),
        store=store,
        llm=llm,
        embedder=HashEmbedder(dim=DIM),
        group_id=G,
        options=IngestOptions(summaries=SummaryOptions(compose_max=2)),
    )
    async with kg:
        world = await build(store, G, kg.embedder)
        yield kg, world, llm


async def test_a_preview_changes_nothing_and_the_apply_forgets_exactly_it(
    graph: tuple[KnowledgeGraph, World, ScriptedLLM], caplog: pytest.LogCaptureFixture
) -> None:
    kg, world, _ = graph
    caplog.set_level(logging.DEBUG, logger="epigraph")
    before = await kg.stats()
    preview = await kg.forget("zaria")  # by her alias, any case
    assert not preview.applied and preview.record is None and await kg.stats() == before
    assert preview.ids["entities"] == [world.zaria.uuid] and preview.counts["facts"] == 4
    assert not any(n in json.dumps(preview.to_dict()).lower() for n in NEEDLES)

    done = await kg.forget("Zaria", apply=True, expect=preview.digest)
    assert done.applied and done.ids == preview.ids and done.digest == preview.digest
    assert done.record is not None and done.record.ids == preview.ids and done.record.call == "python"
    assert await kg.forget.history() == [done.record]
    assert await kg.forget.history(name=NAME) == [done.record]
    assert await kg.forget.history(name="Bob") == []
    assert done.compaction is not None and done.compaction.done
    with pytest.raises(EntityNotFound):
        await kg.forget("Zaria")
    assert found_in_files(Path(kg.store.path)) == dict.fromkeys(NEEDLES, 0)  # type: ignore[attr-defined]
    assert "forgot in group" in caplog.text and not any(n in caplog.text.lower() for n in NEEDLES)


async def test_a_stale_preview_is_refused_and_an_unstated_one_is_planned_again(
    graph: tuple[KnowledgeGraph, World, ScriptedLLM],
) -> None:
    kg, world, _ = graph
    preview = await kg.forget(NAME)
    await kg.add_episode("Carol: Zaria phoned.", reference_time=world.e3.reference_time)
    with pytest.raises(ConflictError, match="changed since"):
        await kg.forget(NAME, apply=True, expect=preview.digest)
    assert (await kg.entity(world.zaria.uuid)).entity.uuid == world.zaria.uuid  # nothing was written
    done = await kg.forget(NAME, apply=True)  # no expect: the plan of now
    assert done.applied and done.digest != preview.digest
    assert done.counts["episodes_redacted"] == preview.counts["episodes_redacted"] + 1


async def test_a_name_two_entities_share_is_refused_with_their_ids(
    graph: tuple[KnowledgeGraph, World, ScriptedLLM],
) -> None:
    kg, world, _ = graph
    other = Entity(group_id=G, name="Zaria", summary="Another Zaria, a sailor.")
    await kg.store.write_episode(EpisodeWrite(episode=world.e2, entities=[other]))
    with pytest.raises(AmbiguousName) as refused:
        await kg.forget("Zaria")
    assert refused.value.candidates == sorted([world.zaria.uuid, other.uuid])
    assert "Zaria" not in str(refused.value)  # the ids, never the name
    done = await kg.forget(world.zaria.uuid, apply=True)  # by id: only her
    [kept] = await kg.store.get_entities(G, [other.uuid])
    assert kept.name == "Zaria"  # the other's name is hers too: it stays, and is counted
    assert done.ids["entities"] == [world.zaria.uuid]
    assert "Quillfeather" not in (await kg.store.get_episode(G, world.e1.uuid)).content  # type: ignore[union-attr]


async def test_what_a_model_wrote_is_written_again_by_the_model_without_the_name(
    graph: tuple[KnowledgeGraph, World, ScriptedLLM],
) -> None:
    kg, world, llm = graph
    llm.calls.clear()
    done = await kg.forget(NAME, apply=True)
    assert done.rebuilt is not None and done.rebuilt.waiting == []
    # Bob keeps more current facts than a composed summary holds (2 here): the model writes his
    assert world.bob.uuid in done.ids["summaries_owed"] and done.rebuilt.summaries >= 1
    assert done.rebuilt.conversations == 2 and done.rebuilt.communities >= 1
    prompts = {c.prompt_name for c in llm.calls}
    assert {"summarize_entities", "summarize_conversation", "summarize_communities"} <= prompts
    for call in llm.calls:
        assert not any(n in json.dumps(call.variables, default=str).lower() for n in NEEDLES), (
            call.prompt_name
        )
    [bob] = await kg.store.get_entities(G, [world.bob.uuid])
    assert bob.summary.startswith("Bob: ")  # the scripted model's
    assert await kg.store.owed_summaries(G) == []  # type: ignore[attr-defined]
    summaries = await kg.store.conversation_summaries(G)  # type: ignore[attr-defined]
    assert {s.key for s in summaries} == {"chat-1", "chat-2"} and all(s.summary for s in summaries)


async def test_without_a_model_the_forgetting_is_whole_and_the_rebuild_waits(tmp_path: Path) -> None:
    store = EmbeddedStore(str(tmp_path / "g.db"))
    kg = KnowledgeGraph(
        Settings(),
        store=store,
        embedder=HashEmbedder(dim=DIM),
        group_id=G,
        options=IngestOptions(summaries=SummaryOptions(compose_max=2)),
    )
    async with kg:
        world = await build(store, G, kg.embedder)
        done = await kg.forget(NAME, apply=True)
        assert done.rebuilt is not None
        assert set(done.rebuilt.waiting) == {"summaries", "conversations", "communities"}
        assert await store.owed_summaries(G) == done.ids["summaries_owed"] != []
        assert await store.get_entities(G, [world.zaria.uuid]) == []
        assert found_in_files(tmp_path / "g.db") == dict.fromkeys(NEEDLES, 0)


async def test_bad_calls_are_refused_before_anything(
    graph: tuple[KnowledgeGraph, World, ScriptedLLM],
) -> None:
    kg, _, _ = graph
    with pytest.raises(UsageError, match="redact"):
        await kg.forget(NAME, episodes="shred")  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="placeholder"):
        await kg.forget(NAME, placeholder="[Zaria]")
    with pytest.raises(UsageError, match="empty"):
        await kg.forget("  ")
    with pytest.raises(RetentionNotSet, match="no retention policy"):
        await kg.forget.apply_retention()
    assert await kg.forget.history() == []


async def test_a_store_without_the_role_names_it() -> None:
    core = CoreOnly(EmbeddedStore(":memory:"))
    async with KnowledgeGraph(Settings(), store=core, embedder=HashEmbedder(dim=DIM)) as kg:  # type: ignore[arg-type]
        with pytest.raises(StoreRoleMissing, match="forget"):
            await kg.forget("anyone")


# --- retention -------------------------------------------------------------------------------------


NOW = datetime(2025, 6, 1, 12, tzinfo=UTC)
AGES = {
    400: "Ann: I lived in Oslo.",
    100: "Ann: I work at Acme.",
    10: "Ann: I adopted a cat.",
    1: "Ann: I moved to Bergen.",
}
TURNS = {
    AGES[400]: Turn(["Ann", "Oslo"], [F("Ann", "Oslo", "LIVED_IN", "Ann lived in Oslo.")]),
    AGES[100]: Turn(["Ann", "Acme"], [F("Ann", "Acme", "WORKS_AT", "Ann works at Acme.")]),
    AGES[10]: Turn(["Ann", "Cat"], [F("Ann", "Cat", "OWNS", "Ann adopted a cat.")]),
    AGES[1]: Turn(["Ann", "Bergen"], [F("Ann", "Bergen", "LIVES_IN", "Ann lives in Bergen.")]),
}


async def test_retention_keeps_exactly_the_young_episodes_and_their_facts(tmp_path: Path) -> None:
    world = Script(turns=TURNS)
    store = EmbeddedStore(str(tmp_path / "r.db"))
    kg = KnowledgeGraph(
        Settings(),
        store=store,
        llm=world.llm(),
        embedder=HashEmbedder(dim=DIM),
        options=IngestOptions(clock=lambda: NOW),
        group_id=G,
    )
    async with kg:
        results = await kg.add_episodes(
            [{"content": text, "reference_time": NOW - timedelta(days=age)} for age, text in AGES.items()]
        )
        assert all(r.ok for r in results)
        assert await kg.forget.retention() is None
        policy = await kg.forget.set_retention(30)
        assert (await kg.forget.retention()) == policy and policy.days == 30
        preview = await kg.forget.apply_retention()
        assert not preview.applied and len(preview.ids["episodes_deleted"]) == 2
        done = await kg.forget.apply_retention(apply=True, expect=preview.digest)
        assert done.ids == preview.ids and done.record is not None and done.record.call == "retention"
        assert done.record.older_than == NOW - timedelta(days=30) and done.record.subject is None
        kept = {e.content for e in await kg.episodes()}
        assert kept == {AGES[10], AGES[1]}
        facts = {h.fact.text for h in (await kg.search("Ann", include_retired=True)).facts}
        assert facts == {"Ann adopted a cat.", "Ann lives in Bergen."}
        made = [e.uuid for r in results for e in r.entities]
        names = {e.name for e in await store.get_entities(G, made)}
        assert names == {"Ann", "Cat", "Bergen"}  # Oslo and Acme were only in the old episodes
        again = await kg.forget.apply_retention(apply=True)  # nothing older now: no record
        assert again.empty and not again.applied and len(await kg.forget.history()) == 1
        assert await kg.forget.clear_retention() and not await kg.forget.clear_retention()
