"""Reads first (``epigraph.ingestion.pacing``): while a search is in flight, the server's ingestion steps
wait for their turn (at most ``max_wait_s``), through the real embedded store and a scripted LLM."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from epigraph.graph.embedded import EmbeddedStore
from epigraph.graph.model import Episode
from epigraph.graph.priority import in_foreground
from epigraph.ingestion.pacing import PacedLLM, PacedStore, Priority
from epigraph.prompts.protocol import ChatRequest
from epigraph.testing import ScriptedLLM

GROUP = "g"
T0 = datetime(2024, 1, 1, tzinfo=UTC)
LOOKS = 20
"""Foreground reads made while a background write waits (each is a round trip to the store's thread)."""


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[EmbeddedStore]:
    async with EmbeddedStore(str(tmp_path / "graph.db")) as backend:
        await backend.setup(embedding_dim=8)
        yield backend


def episode(content: str = "Alice moved to Paris") -> Episode:
    return Episode(group_id=GROUP, content=content, reference_time=T0)


async def test_an_ingestion_write_waits_while_a_search_is_in_flight(store: EmbeddedStore) -> None:
    priority = Priority(max_wait_s=600)
    background = PacedStore(store, priority)
    item = episode()
    async with priority.foreground():
        assert in_foreground()  # the search's own store calls go first in the store's queue
        write = asyncio.create_task(background.save_episode(item))
        for _ in range(LOOKS):
            assert await store.get_episode(GROUP, item.uuid) is None
        assert not write.done()
    await write
    assert priority.yielded == 1
    stored = await store.get_episode(GROUP, item.uuid)
    assert stored is not None and stored.content == item.content


async def test_a_turn_comes_after_max_wait_even_while_searches_go_on(store: EmbeddedStore) -> None:
    priority = Priority(max_wait_s=0)
    background = PacedStore(store, priority)
    item = episode()
    async with priority.foreground():
        await background.save_episode(item)
        assert await store.get_episode(GROUP, item.uuid) is not None
    assert priority.yielded == 1


async def test_without_searches_background_calls_never_wait(store: EmbeddedStore) -> None:
    priority = Priority(max_wait_s=600)
    background = PacedStore(store, priority)
    await background.save_episode(episode())
    assert priority.yielded == 0
    assert background.path == store.path  # other attributes pass through


def request() -> ChatRequest:
    return ChatRequest(messages=[{"role": "user", "content": "hi"}], prompt_name="greet")


async def test_an_llm_call_starts_only_when_the_search_is_answered() -> None:
    llm = ScriptedLLM({"greet": "hello there"})
    priority = Priority(max_wait_s=600)
    yielding = PacedLLM(llm, priority)

    async def collect() -> str:
        return "".join([chunk.text async for chunk in yielding.stream(request())])

    async with priority.foreground():
        streamed = asyncio.create_task(collect())
        for _ in range(LOOKS):
            await asyncio.sleep(0)
        assert llm.calls == [] and not streamed.done()
    assert await streamed == "hello there"
    assert (await yielding.complete(request())).text == "hello there"
    assert len(llm.calls) == 2
