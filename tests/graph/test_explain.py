"""Why the graph holds what it holds (issue 61 parts 1 and 2): decision records stored with each episode,
and ``kg.explain`` through every door (Python, CLI, HTTP, MCP) on every store.

The scripted conversation: Ann lives in Oslo (the model also names "Zeus", whom the message never
mentions: the ``grounded`` gate refuses him); she moves to Berlin "since 2023" (the resolve call retires
Oslo); Bo says "Ann Smith plays chess" (the resolve call merges "Ann Smith" into Ann, shown one
candidate). Each door must explain the four subjects of the bar: a kept fact (Berlin: its episode, its
reply line, what decided it, the words that dated it), a retired fact (Oslo: what retired it and what
decided that), a merged entity (Ann) and a refused name (Zeus). Then the records themselves: they
survive export and load, are counted in ``stats``, replaced by a retried run, gone with their episode,
kept only as long as the retention says, and hold the reply's lines only when asked.
"""

from __future__ import annotations

import json
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

import epigraph
from epigraph import KnowledgeGraph, RecordOptions
from epigraph.config import Settings
from epigraph.errors import EntityNotFound, FactNotFound
from epigraph.graph.store import GraphStore
from epigraph.graph.store_roles import DecisionReads
from epigraph.pipeline.options import IngestOptions
from epigraph.serve import create_app
from epigraph.testing import HashEmbedder
from tests.support.doors import cli_json, http_json, mcp_json
from tests.support.stores import DIM
from tests.support.world import F, Turn, World

OSLO = F("Ann", "Oslo", "LIVES_IN", "Ann lives in Oslo.")
BERLIN = F("Ann", "Berlin", "LIVES_IN", "Ann lives in Berlin since 2023.")
CHESS = F("Ann Smith", "chess", "PLAYS", "Ann Smith plays chess.")
MESSAGES = ["Ann: I live in Oslo.", "Ann: I moved to Berlin in 2023.", "Bo: Ann Smith plays chess."]
WORLD = World(
    turns={
        MESSAGES[0]: Turn(["Ann", "Oslo", "Zeus"], [OSLO]),
        MESSAGES[1]: Turn(["Ann", "Berlin"], [BERLIN]),
        MESSAGES[2]: Turn(["Bo", "Ann Smith", "chess"], [CHESS]),
    },
    contradicts={BERLIN.fact: [OSLO.fact]},
    same_as={"Ann Smith": "Ann"},
)
T0 = datetime(2024, 1, 1, tzinfo=UTC)
NOW = datetime(2025, 1, 1, tzinfo=UTC)


def graph(
    store: GraphStore, group: str, record: RecordOptions | None = None, now: datetime = NOW
) -> KnowledgeGraph:
    options = IngestOptions(clock=lambda: now, record=record or RecordOptions())
    return KnowledgeGraph(Settings(db_path=":memory:", embedder="hash"), store=store, llm=WORLD.llm(),
                          embedder=HashEmbedder(dim=DIM), options=options, group_id=group)  # fmt: skip


@dataclass
class Built:
    kg: KnowledgeGraph
    kept: str
    """Berlin's fact uuid"""
    retired: str
    """Oslo's"""
    episodes: list[str]


async def build(store: GraphStore, group: str, record: RecordOptions | None = None) -> Built:
    kg = graph(store, group, record)
    await kg.open()
    episodes = []
    for i, message in enumerate(MESSAGES):
        result = await kg.add_episode(message, reference_time=T0 + timedelta(days=31 * i))
        assert result.ok, result.error
        episodes.append(result.episode.uuid)
    everything = await kg.search("Ann", include_retired=True, limit=20)
    uuid = {f.fact.text: f.fact.uuid for f in everything.facts}
    return Built(kg, uuid[BERLIN.fact], uuid[OSLO.fact], episodes)


@pytest.fixture
async def built(store: GraphStore) -> Built:
    return await build(store, f"explain-{os.urandom(4).hex()}")


Door = Callable[[Built, str, str], Awaitable[dict[str, Any]]]
"""An explanation as JSON through one door: (the graph, the subject, "fact" or "entity")."""


def check_the_bar(explain: dict[str, dict[str, Any]], built: Built) -> None:
    """The four subjects of the bar, as every door gives them (``Explanation.to_dict``)."""
    kept = explain["kept"]
    assert kept["kind"] == "fact" and kept["uuid"] == built.kept and kept["holds"].endswith(", current")
    assert [link["what"] for link in kept["links"]] == ["said", "decided", "dated"]
    said, decided, dated = (link["text"] for link in kept["links"])
    assert MESSAGES[1] in said and kept["links"][0]["episode_uuid"] == built.episodes[1]
    assert decided.startswith("fact line 1 of the reply kept as a new fact (the resolve call")
    assert "it retired 1 fact(s)" in decided and "'since 2023'" in dated

    retired = explain["retired"]
    assert [link["what"] for link in retired["links"]] == ["said", "decided", "retired"]
    assert "retired 2025-01-01" in retired["holds"]
    assert "no stored fact to compare it with" in retired["links"][1]["text"]
    assert (
        BERLIN.fact in retired["links"][2]["text"]
        and "decided by the resolve call" in retired["links"][2]["text"]
    )
    assert retired["links"][2]["ids"] == [built.retired, built.kept]

    merged = explain["merged"]
    assert merged["kind"] == "entity" and merged["holds"].startswith("Ann, also 'Ann Smith'")
    whats = [link["what"] for link in merged["links"]]
    assert whats == ["resolved", "resolved", "merged"]
    assert (
        "'Ann Smith'" in merged["links"][2]["text"] and "1 candidate(s) shown" in merged["links"][2]["text"]
    )

    refused = explain["refused"]
    assert refused["holds"] is None and refused["uuid"] is None
    assert [link["what"] for link in refused["links"]] == ["refused"]
    assert "refused by the grounded gate" in refused["links"][0]["text"]
    assert refused["lines"][0] == "the graph holds no entity 'Zeus'"


async def through(door: Door, built: Built) -> dict[str, dict[str, Any]]:
    subjects = {"kept": (built.kept, "fact"), "retired": (built.retired, "fact"),
                "merged": ("Ann", "entity"), "refused": ("Zeus", "entity")}  # fmt: skip
    return {name: await door(built, subject, kind) for name, (subject, kind) in subjects.items()}


# --- the doors -----------------------------------------------------------------------------------------


async def python_door(built: Built, subject: str, kind: str) -> dict[str, Any]:
    return (await built.kg.explain(subject)).to_dict()


async def cli_door(
    built: Built, subject: str, kind: str, capsys: pytest.CaptureFixture[str]
) -> dict[str, Any]:
    return await cli_json(built.kg, ["explain", subject], capsys)


async def http_door(built: Built, subject: str, kind: str) -> dict[str, Any]:
    path = "facts" if kind == "fact" else "entities"
    return await http_json(built.kg, f"{path}/{subject}/explain")


async def mcp_door(built: Built, subject: str, kind: str) -> dict[str, Any]:
    return await mcp_json(built.kg, "explain", {"subject": subject})


async def test_explain_in_python(built: Built) -> None:
    check_the_bar(await through(python_door, built), built)
    text = str(await built.kg.explain(built.retired))
    assert text.splitlines()[0].startswith("Ann LIVES_IN Oslo: 'Ann lives in Oslo.'")
    assert (await built.kg.explain("Ann")).to_pandas().shape[0] == 3


async def test_explain_on_the_command_line(built: Built, capsys: pytest.CaptureFixture[str]) -> None:
    async def door(b: Built, subject: str, kind: str) -> dict[str, Any]:
        return await cli_door(b, subject, kind, capsys)

    check_the_bar(await through(door, built), built)


async def test_explain_over_http(built: Built) -> None:
    check_the_bar(await through(http_door, built), built)
    app = create_app(built.kg, close_graph=False)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client:
        group = built.kg.group_id
        assert (await client.get(f"/v1/groups/{group}/facts/no-such-fact/explain")).status_code == 404
        missing = await client.get(f"/v1/groups/{group}/entities/Nobody%20Here/explain")
        assert missing.status_code == 404 and "Nobody Here" in missing.text


async def test_explain_as_an_mcp_tool(built: Built) -> None:
    check_the_bar(await through(mcp_door, built), built)


async def test_the_old_function_still_explains_with_a_deprecation_warning(built: Built) -> None:
    """``epigraph.explain(kg, subject)`` (0.2.0.dev0 before ``kg.explain``) warns and gives the same."""
    with pytest.warns(DeprecationWarning, match=r"use await kg\.explain\(subject\)"):
        old = await epigraph.explain(built.kg, built.kept)
    assert old.to_dict() == (await built.kg.explain(built.kept)).to_dict()
    with pytest.warns(DeprecationWarning):
        assert (await epigraph.explain(built.kg, "Zeus", kind="entity")).whats() == ["refused"]


async def test_what_no_record_names_is_not_found(built: Built) -> None:
    with pytest.raises(EntityNotFound):
        await built.kg.explain("Nobody Here")
    with pytest.raises(FactNotFound):
        await built.kg.explain("no-such-fact", kind="fact")


# --- the records ---------------------------------------------------------------------------------------


async def test_the_records_survive_export_and_load(built: Built, store: GraphStore, tmp_path: Path) -> None:
    dump = tmp_path / "g.jsonl"
    counts = await built.kg.transfer.export(dump)
    assert counts[built.kg.group_id]["decisions"] == 3
    reads: DecisionReads = store  # type: ignore[assignment]
    before = await reads.decision_records(built.kg.group_id, built.episodes)
    other = f"loaded-{os.urandom(4).hex()}"
    moved = built.kg.group(other)
    await moved.transfer.load(dump, into=other)
    after = await reads.decision_records(other, built.episodes)
    assert [r.model_copy(update={"group_id": built.kg.group_id}) for r in after] == before
    assert (await moved.stats()).decision_records == 3
    explained = (await moved.explain("Zeus")).to_dict()
    assert [link["what"] for link in explained["links"]] == ["refused"]


async def test_the_records_are_counted_replaced_and_removed_with_their_episode(
    built: Built, store: GraphStore
) -> None:
    kg, reads = built.kg, store
    stats = await kg.stats()
    assert stats.decision_records == 3 and stats.decision_bytes > 0
    records = await reads.decision_records(kg.group_id, built.episodes)  # type: ignore[attr-defined]
    assert all("Ann: I" not in r.to_json() for r in records)  # no prompt or message text by default
    assert sum(len(r.to_json().encode()) for r in records) == stats.decision_bytes
    await kg.remove_episode(built.episodes[0])
    assert (await kg.stats()).decision_records == 2
    assert await reads.decisions_naming(kg.group_id, "Zeus") == []  # type: ignore[attr-defined]
    with pytest.raises(EntityNotFound):
        await kg.explain("Zeus")


async def test_the_retention_and_the_texts_options(store: GraphStore) -> None:
    group = f"kept-{os.urandom(4).hex()}"
    built = await build(store, group, RecordOptions(texts=True))
    records = await store.decision_records(group, built.episodes)  # type: ignore[attr-defined]
    assert [json.loads(t)["fact"] for t in records[1].texts] == [BERLIN.fact]
    # a later write with a retention of 30 days forgets the records made more than 30 days before it
    later = graph(store, group, RecordOptions(days=30), now=NOW + timedelta(days=31))
    result = await later.add_episode("Ann: I live in Berlin.", reference_time=T0 + timedelta(days=100))
    assert result.ok
    assert (await later.stats()).decision_records == 1
    off = await build(store, f"off-{os.urandom(4).hex()}", RecordOptions(keep=False))
    assert (await off.kg.stats()).decision_records == 0
    explained = await off.kg.explain(off.kept)
    assert explained.whats() == ["said"] and len(explained.unrecorded) == 1
