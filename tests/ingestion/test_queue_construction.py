"""The ingestion queue is built once, by ``KnowledgeGraph``, with everything it uses: one store and one
model paced by ``kg.priority`` (reads first), built once the model is known; nothing swaps a part of it."""

from __future__ import annotations

import asyncio

import pytest

from epigraph.client import KnowledgeGraph
from epigraph.config import Settings
from epigraph.episodes.inputs import EpisodeInput
from epigraph.errors import ConfigError
from epigraph.graph.embedded import EmbeddedStore
from epigraph.testing import HashEmbedder, ScriptedLLM
from tests.support.world import T0

GROUP = "g"
LOOKS = 20
"""Foreground reads made while the queue's write waits."""


async def test_the_graphs_queue_is_built_paced_by_its_priority(
    store: EmbeddedStore, embedder: HashEmbedder
) -> None:
    """``KnowledgeGraph`` builds its queue once, over a store paced by ``kg.priority``: an episode accepted
    while a read is in flight is stored only once the read ends; the queue's parts cannot be swapped."""
    kg = KnowledgeGraph(Settings(), store=store, llm=None, embedder=embedder)
    kg.priority.max_wait_s = 600
    queue = kg.ingestor
    item = EpisodeInput("Alice moved to Paris", T0, group_id=GROUP)
    async with kg.priority.foreground():
        accept = asyncio.create_task(queue.accept([item]))
        for _ in range(LOOKS):
            assert await store.episodes(GROUP) == []
        assert not accept.done()
    [stored] = await accept
    assert kg.priority.yielded >= 1
    assert [e.uuid for e in await store.episodes(GROUP)] == [stored.uuid]
    assert kg.ingestor is queue
    with pytest.raises(AttributeError):
        queue.llm = ScriptedLLM([])  # type: ignore[misc]


async def test_the_queue_waits_for_the_local_model(store: EmbeddedStore, embedder: HashEmbedder) -> None:
    """With the local model the queue is built once the model is known (it starts when the graph is
    opened): asked for before, the graph says so instead of building a queue without a model."""
    kg = KnowledgeGraph(Settings(llm_local=True), store=store, embedder=embedder)
    with pytest.raises(ConfigError, match="open it first"):
        _ = kg.ingestor
