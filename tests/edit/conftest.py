"""Fixtures of the corrections-by-hand tests: the store contract's ``store`` (embedded and the real
Neo4j), and the quickstart conversation ingested into it with its recorded answers (``quickstart``)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import AsyncIterator

import pytest

from epigraph import KnowledgeGraph
from epigraph.config import Settings
from epigraph.graph.store import GraphStore
from epigraph.prompts.protocol import ChatRequest
from epigraph.testing import HashEmbedder, ScriptedLLM
from epigraph.testing.overview import OVERVIEW_SCRIPT
from examples.quickstart import RECORDED, Replay, conversation
from tests.graph.conftest import group, other_group, store

__all__ = ["group", "other_group", "quickstart", "store"]

DIM = 384


def quickstart_llm() -> ScriptedLLM:
    """The quickstart's recorded answers, and scripted ones for communities and conversations."""
    replay = Replay(json.loads(RECORDED.read_text(encoding="utf-8")))

    def reply(request: ChatRequest) -> str:
        answer = OVERVIEW_SCRIPT.get(request.prompt_name, replay)
        return str(answer(request))

    return ScriptedLLM(reply)


async def ingest_quickstart(kg: KnowledgeGraph) -> None:
    """The quickstart's conversation, into ``kg``'s group."""
    results = await kg.add_episodes([dataclasses.replace(e, group_id=kg.group_id) for e in conversation()])
    assert all(r.ok for r in results)


@pytest.fixture
async def quickstart(store: GraphStore, group: str) -> AsyncIterator[KnowledgeGraph]:
    """A graph on ``store`` (group ``group``) holding the quickstart conversation; corrections by
    ``person:alice`` unless told otherwise."""
    settings = Settings(db_path=":memory:", author="alice")
    kg = KnowledgeGraph(
        settings, store=store, llm=quickstart_llm(), embedder=HashEmbedder(dim=DIM), group_id=group
    )
    await ingest_quickstart(kg)
    yield kg
    await store.delete_group(group)  # Neo4j is shared by the whole run: leave its indexes as they were
