"""LangGraph's store interface over the graph, and a compiled ``StateGraph`` whose nodes read and write
long-term memory through it, offline (the scripted world of ``tests/support/integrations_world.py``)."""

from __future__ import annotations

import asyncio
from typing import TypedDict

import pytest
from langgraph.graph import END, START, StateGraph
from langgraph.store.base import BaseStore, GetOp, Item, ListNamespacesOp, PutOp, SearchItem

from epigraph import KnowledgeGraph
from epigraph.errors import UsageError
from epigraph.graph.model import utc_now
from epigraph.integrations.langgraph import EpigraphStore
from tests.support.integrations_world import ACME, BERLIN, LISBON, NOTES, PARIS, SAID

ALICE = ("memories", "alice")


async def test_put_get_replace_delete(kg: KnowledgeGraph) -> None:
    store = EpigraphStore(kg)
    assert isinstance(store, BaseStore)
    await store.aput(ALICE, "home", NOTES["berlin"])
    item = await store.aget(ALICE, "home")
    assert isinstance(item, Item)
    assert (item.namespace, item.key, item.value) == (ALICE, "home", NOTES["berlin"])
    assert [f.text for f in (await kg.search("Alice", group_ids="memories.alice")).facts] == [BERLIN]

    await store.aput(ALICE, "home", NOTES["lisbon"])  # the old value and what only it supported go
    assert (await store.aget(ALICE, "home")).value == NOTES["lisbon"]  # type: ignore[union-attr]
    found = await kg.search("Alice lives", group_ids="memories.alice", include_retired=True)
    assert [f.text for f in found.facts] == [LISBON]
    assert len(await kg.group("memories.alice").episodes()) == 1

    await store.adelete(ALICE, "home")
    assert await store.aget(ALICE, "home") is None
    assert not (await kg.search("Alice", group_ids="memories.alice")).facts


async def test_search_ranks_by_the_graph_and_filters(kg: KnowledgeGraph) -> None:
    store = EpigraphStore(kg)
    for topic in ("paris", "acme"):
        await store.aput(ALICE, topic, {**NOTES[topic], "topic": topic})
    await store.aput(("memories", "bob"), "acme", NOTES["acme"])

    hits = await store.asearch(ALICE, query="Alice works at Acme")
    assert all(isinstance(h, SearchItem) and h.score is not None for h in hits)
    assert hits[0].key == "acme" and {h.namespace for h in hits} == {ALICE}
    both = await store.asearch(("memories",), query="Acme")
    assert {(h.namespace, h.key) for h in both} >= {(ALICE, "acme"), (("memories", "bob"), "acme")}

    latest = await store.asearch(ALICE)  # no query: newest first
    assert [h.key for h in latest] == ["acme", "paris"] and all(h.score is None for h in latest)
    assert [h.key for h in await store.asearch(ALICE, filter={"topic": "paris"})] == ["paris"]
    assert [h.key for h in await store.asearch(ALICE, limit=1, offset=1)] == ["paris"]
    with pytest.raises(UsageError, match="operators"):
        await store.asearch(ALICE, filter={"topic": {"$ne": "x"}})


async def test_namespaces_are_the_graphs_groups(kg: KnowledgeGraph) -> None:
    store = EpigraphStore(kg)
    await store.aput(ALICE, "a", NOTES["paris"])
    await store.aput(("memories", "bob", "work"), "b", NOTES["acme"])
    await kg.group("chat").add_episode(f"Alice: {SAID['acme']}", reference_time=utc_now())

    assert await store.alist_namespaces() == [("chat",), ("memories", "alice"), ("memories", "bob", "work")]
    assert await store.alist_namespaces(prefix=("memories",), max_depth=2) == [
        ("memories", "alice"),
        ("memories", "bob"),
    ]
    assert await store.alist_namespaces(suffix=("*", "work")) == [("memories", "bob", "work")]
    # an episode from another door is an item keyed by its uuid
    (chat,) = await store.asearch(("chat",))
    assert chat.value == {"content": f"Alice: {SAID['acme']}"}
    assert (await store.aget(("chat",), chat.key)).value == chat.value  # type: ignore[union-attr]


async def test_batch_and_bad_namespaces(kg: KnowledgeGraph) -> None:
    store = EpigraphStore(kg)
    results = await store.abatch(
        [PutOp(ALICE, "k", NOTES["paris"]), GetOp(ALICE, "k"), ListNamespacesOp(limit=5)]
    )
    assert results[0] is None and results[1].value == NOTES["paris"] and results[2] == [ALICE]  # type: ignore[union-attr]
    with pytest.raises(UsageError, match=r"label 'a/b' must be characters"):
        await store.aput(("a/b",), "k", {"x": 1})
    with pytest.raises(UsageError, match="use the async methods"):
        store.get(ALICE, "k")  # on the store's own loop: it would block
    assert (await asyncio.to_thread(store.get, ALICE, "k")).value == NOTES["paris"]  # type: ignore[union-attr]


class State(TypedDict):
    user: str
    said: str
    reply: str


async def remember(state: State, *, store: BaseStore) -> dict[str, str]:
    """Writes what the user said as a memory of their namespace."""
    namespace = ("memories", state["user"])
    key = f"turn-{len(await store.asearch(namespace)) + 1}"
    await store.aput(namespace, key, {"data": f"Alice said: {state['said']}"})
    return {}


def recall(state: State, *, store: BaseStore) -> dict[str, str]:
    """A synchronous node (run in a worker thread by LangGraph): reads the user's memories."""
    hits = store.search(("memories", state["user"]), query="where does Alice live", limit=2)
    return {"reply": " | ".join(h.value["data"] for h in hits)}


async def test_a_compiled_graph_reads_and_writes_memory_in_its_nodes(kg: KnowledgeGraph) -> None:
    builder = StateGraph(State)
    builder.add_node("remember", remember)
    builder.add_node("recall", recall)
    builder.add_edge(START, "remember")
    builder.add_edge("remember", "recall")
    builder.add_edge("recall", END)
    graph = builder.compile(store=EpigraphStore(kg))

    first = await graph.ainvoke({"user": "alice", "said": SAID["paris"], "reply": ""})
    assert first["reply"] == f"Alice said: {SAID['paris']}"
    await graph.ainvoke({"user": "alice", "said": SAID["acme"], "reply": ""})
    await graph.ainvoke({"user": "alice", "said": SAID["berlin"], "reply": ""})

    found = await kg.search("Alice", group_ids="memories.alice", include_retired=True)
    assert {f.fact.text: f.retired for f in found.facts} == {PARIS: True, ACME: False, BERLIN: False}
    keys = [i.key for i in await EpigraphStore(kg).asearch(("memories", "alice"))]
    assert keys == ["turn-3", "turn-2", "turn-1"]
