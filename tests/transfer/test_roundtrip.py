"""Moving a graph between stores gives the same graph: embedded -> Neo4j -> embedded through dump files,
on the quickstart graph and on the tiny LoCoMo import, each with corrections by hand (a merge and its
undo, a retirement, an added fact, a rename), communities and (LoCoMo) a conversation summary. Needs the
real Neo4j (``make test`` starts one)."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from epigraph import KnowledgeGraph
from epigraph.config import Settings
from epigraph.graph.embedded import EmbeddedStore
from epigraph.graph.store import GraphStore
from epigraph.testing import HashEmbedder
from tests.support.stores import DIM, neo4j_store
from tests.support.transfer_graphs import BUILDERS, llm_for

pytestmark = pytest.mark.neo4j


def records(path: Path) -> list[dict[str, Any]]:
    """The dump's lines as objects, the header's creation time (the one thing that differs) left out."""
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    lines[0].pop("created_at")
    return lines


def graph(store: GraphStore, group: str, name: str) -> KnowledgeGraph:
    return KnowledgeGraph(
        Settings(db_path=":memory:"), store=store, llm=llm_for(name), embedder=HashEmbedder(dim=DIM),
        group_id=group,
    )  # fmt: skip


@pytest.mark.parametrize("name", sorted(BUILDERS))
@pytest.mark.parametrize("vectors", [True, False], ids=["vectors", "no-vectors"])
async def test_embedded_to_neo4j_to_embedded_gives_the_same_graph(
    tmp_path: Path, name: str, vectors: bool
) -> None:
    group = f"move-{uuid.uuid4().hex[:12]}"
    neo4j = neo4j_store()
    first, last = EmbeddedStore(str(tmp_path / "first.db")), EmbeddedStore(str(tmp_path / "last.db"))
    dumps = [tmp_path / f"{i}.jsonl" for i in range(3)]
    try:
        kg = await graph(first, group, name).open()
        await BUILDERS[name][0](kg)
        await kg.transfer.export(dumps[0], vectors=vectors)
        middle = await graph(neo4j, group, name).open()
        report = await middle.transfer.load(dumps[0])
        assert report.embeddings == ("dump" if vectors else "computed")
        await middle.transfer.export(dumps[1], vectors=vectors)
        again = await graph(last, group, name).open()
        await again.transfer.load(dumps[1])
        await again.transfer.export(dumps[2], vectors=vectors)

        assert records(dumps[0]) == records(dumps[1]) == records(dumps[2])
        kinds = {line["record"] for line in records(dumps[0])}
        derived = {"community", "conversation"} if name == "locomo" else {"community"}
        kept = {"episode", "entity", "fact", "mention", "correction", "decisions"}  # decision records too
        assert kinds == {"header", *kept, "end", *derived}
        # the same graph answers the same: counts, an entity's view with its history, a search
        for store in (neo4j, last):
            assert await store.stats(group) == await first.stats(group)
        moved = graph(last, group, name)
        for ref in ("Bob", "Globex") if name == "quickstart" else ("Mia", "Pixel the cat"):
            assert (await moved.entity(ref)).to_dict() == (await kg.entity(ref)).to_dict()
        assert await moved.overview.communities() == await kg.overview.communities()
        if name == "locomo":
            [chain] = await kg.overview.conversations()
            assert (await moved.overview.conversation(chain.key)) == (
                await kg.overview.conversation(chain.key)
            )
        query = "where does Alice live" if name == "quickstart" else "marathon"
        found = [{**(await g.search(query)).to_dict(), "elapsed_ms": None} for g in (moved, kg)]
        assert found[0] == found[1]
        if vectors:  # every embedding made the trip exactly (float32 values, kept as doubles by Neo4j)
            assert [line.get("name_embedding") for line in records(dumps[2])] == [
                line.get("name_embedding") for line in records(dumps[0])
            ]
    finally:
        await neo4j.delete_group(group)
        for store in (first, neo4j, last):
            await store.close()
