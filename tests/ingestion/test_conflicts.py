"""An episode id reused with other content is refused (``EpisodeConflict``), never dropped; the same id with
the same content is a duplicate, skipped. Every door of the queue, on both stores: ``add_episode`` (and a
group's handle), ``add_episodes`` / ``ingest`` (nothing of the call stored), ``accept`` (the server's),
``process`` (the Kafka worker's); the content compared as it is stored (redacted)."""

from __future__ import annotations

import asyncio

import pytest

from epigraph.client import KnowledgeGraph
from epigraph.config import Settings
from epigraph.episodes.inputs import EpisodeInput
from epigraph.errors import ConflictError, EpisodeConflict
from epigraph.graph.store import GraphStore
from epigraph.ingestion.ingestor import Ingestor
from epigraph.ingestion.pending import save_pending
from epigraph.pipeline.options import IngestOptions
from epigraph.testing import HashEmbedder
from tests.support.stores import DIM
from tests.support.world import T0, World


def _item(group: str, content: str, episode_id: str | None = "m-1") -> EpisodeInput:
    return EpisodeInput(content, T0, group_id=group, episode_id=episode_id)


async def _contents(store: GraphStore, group: str) -> list[str]:
    return sorted(e.content for e in await store.episodes(group, limit=100))


async def test_add_episode_refuses_other_content_and_skips_the_same(
    any_store: GraphStore, embedder: HashEmbedder, group: str
) -> None:
    ingestor = Ingestor(any_store, World().llm(), embedder)
    first = await ingestor.add_episode(_item(group, "Ann: I live in Oslo."))
    again = await ingestor.add_episode(_item(group, "Ann: I live in Oslo."))
    assert first.ok and again.skipped, "the same id and content: a duplicate"
    with pytest.raises(EpisodeConflict) as caught:
        await ingestor.add_episode(_item(group, "Ann: I live in Rome."))
    assert isinstance(caught.value, ConflictError)
    assert caught.value.uuid == first.episode.uuid and caught.value.episode_id == "m-1"
    assert "episode id 'm-1'" in str(caught.value) and "other content" in str(caught.value)
    assert await _contents(any_store, group) == ["Ann: I live in Oslo."]


async def test_a_batch_with_a_conflict_stores_nothing(
    any_store: GraphStore, embedder: HashEmbedder, group: str
) -> None:
    ingestor = Ingestor(any_store, World().llm(), embedder)
    await ingestor.add_episode(_item(group, "Ann: I live in Oslo."))
    batch = [_item(group, "Ann: I cook.", "m-2"), _item(group, "Ann: I live in Rome.")]
    with pytest.raises(EpisodeConflict):
        await ingestor.add_episodes(batch)
    with pytest.raises(EpisodeConflict):
        _ = [event async for event in ingestor.ingest(batch)]
    within = [_item(group, "Ann: I swim.", "m-3"), _item(group, "Ann: I run.", "m-3")]
    with pytest.raises(EpisodeConflict, match="an earlier episode of the same input"):
        await ingestor.add_episodes(within)
    assert await _contents(any_store, group) == ["Ann: I live in Oslo."], "nothing of either batch"
    repeated = await ingestor.add_episodes([_item(group, "Ann: I swim.", "m-3")] * 2)
    assert [r.ok for r in repeated] == [True, True] and repeated[1].skipped


async def test_an_id_taken_since_the_doors_check_is_refused_when_stored(
    any_store: GraphStore, group: str
) -> None:
    """Two calls at once with one id: both pass the door's check before either is stored, so the store
    step itself (``pending.save_pending``, which every door passes) refuses the second content instead of
    keeping the first in its place; the same content is still the stored episode."""
    stored, _ = await save_pending(any_store, _item(group, "Ann: I live in Oslo.").to_episode())
    with pytest.raises(EpisodeConflict) as caught:
        await save_pending(any_store, _item(group, "Ann: I live in Rome.").to_episode())
    assert caught.value.uuid == stored.uuid
    again, done = await save_pending(any_store, _item(group, "Ann: I live in Oslo.").to_episode())
    assert again.uuid == stored.uuid and done is None
    assert await _contents(any_store, group) == ["Ann: I live in Oslo."]


async def test_accept_refuses_a_conflict_with_a_pending_episode(
    any_store: GraphStore, embedder: HashEmbedder, group: str
) -> None:
    waiting = Ingestor(any_store, None, embedder)  # no model: what is accepted waits pending
    (stored,) = await waiting.accept([_item(group, "Ann: I live in Oslo.")])
    assert [e.uuid for e in await waiting.accept([_item(group, "Ann: I live in Oslo.")])] == [stored.uuid]
    with pytest.raises(EpisodeConflict):
        await waiting.accept([_item(group, "Ann: I cook.", "m-2"), _item(group, "Ann: I live in Rome.")])
    assert await _contents(any_store, group) == ["Ann: I live in Oslo."]


async def test_two_accepts_at_once_cannot_both_take_an_id(
    any_store: GraphStore, embedder: HashEmbedder, group: str
) -> None:
    """Two requests at once (the server's doors): the check and the store are one step per group."""
    waiting = Ingestor(any_store, None, embedder)
    both = await asyncio.gather(
        waiting.accept([_item(group, "Ann: I live in Oslo.")]),
        waiting.accept([_item(group, "Ann: I live in Rome.")]),
        return_exceptions=True,
    )
    assert sorted(type(outcome).__name__ for outcome in both) == ["EpisodeConflict", "list"]
    assert len(await _contents(any_store, group)) == 1


async def test_process_refuses_an_episode_whose_id_holds_other_content(
    any_store: GraphStore, embedder: HashEmbedder, group: str
) -> None:
    ingestor = Ingestor(any_store, World().llm(), embedder)
    assert (await ingestor.process(_item(group, "Ann: I live in Oslo.").to_episode())).ok
    assert (await ingestor.process(_item(group, "Ann: I live in Oslo.").to_episode())).skipped
    with pytest.raises(EpisodeConflict):
        await ingestor.process(_item(group, "Ann: I live in Rome.").to_episode())
    unnamed = _item(group, "Ann: I live in Oslo.", None).to_episode()  # keyed by content: no id to reuse
    assert (await ingestor.process(unnamed)).ok
    assert await _contents(any_store, group) == ["Ann: I live in Oslo."] * 2


async def test_a_redacted_duplicate_is_a_duplicate(
    any_store: GraphStore, embedder: HashEmbedder, group: str
) -> None:
    ingestor = Ingestor(any_store, World().llm(), embedder, IngestOptions(redact=True))
    said = "Ann: write to ann@example.com."
    assert (await ingestor.add_episode(_item(group, said))).ok
    assert (await ingestor.add_episode(_item(group, said))).skipped
    with pytest.raises(EpisodeConflict):
        await ingestor.add_episode(_item(group, "Ann: write to bo@example.com."))


async def test_a_groups_handle_raises_the_conflict(any_store: GraphStore, group: str) -> None:
    settings, embedder = Settings(db_path=":memory:"), HashEmbedder(dim=DIM)  # the store's dimension
    async with KnowledgeGraph(settings, store=any_store, llm=World().llm(), embedder=embedder) as kg:
        handle = kg.group(group)
        await handle.add_episode("Ann: I live in Oslo.", reference_time=T0, episode_id="m-1")
        with pytest.raises(EpisodeConflict):
            await handle.add_episode("Ann: I live in Rome.", reference_time=T0, episode_id="m-1")
        assert [e.content for e in await handle.episodes()] == ["Ann: I live in Oslo."]
