"""A load file cannot write outside its group, on both stores: a dump naming another group loads only as
the group asked for (``into``), a record of a group its header does not name is refused, and so is a
correction carrying records of another group inside it (which an undo would write); nothing is written
in any group when a dump is refused. Over HTTP with group-scoped keys: tests/serve/test_security.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from epigraph import KnowledgeGraph
from epigraph.config import Settings
from epigraph.errors import InputError, StoreError
from epigraph.graph.store import GraphStore, GroupDump
from epigraph.testing import HashEmbedder, ScriptedLLM
from epigraph.transfer import read
from tests.support.stores import DIM

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "dump-v1.jsonl"
SOURCE = "v1-fixture"


def text_of(lines: list[dict[str, Any]]) -> str:
    return "\n".join(json.dumps(r) for r in lines)


def dump_of(group_id: str) -> list[dict[str, Any]]:
    """The fixture as a dump of ``group_id`` (records, header, end line, corrections' slices)."""
    text = FIXTURE.read_text(encoding="utf-8").replace(f'"{SOURCE}"', f'"{group_id}"')
    return [json.loads(line) for line in text.splitlines()]


def graph(store: GraphStore, group_id: str) -> KnowledgeGraph:
    settings = Settings(db_path=":memory:", author="mia")
    return KnowledgeGraph(settings, store=store, llm=ScriptedLLM({}), embedder=HashEmbedder(dim=DIM),
                          group_id=group_id)  # fmt: skip


async def held(store: GraphStore, group_id: str) -> int:
    s = await store.stats(group_id)
    return s.episodes + s.entities + s.facts + s.mentions + len(await store.corrections(group_id, limit=10))


async def test_a_dump_naming_another_group_loads_only_as_the_group_asked_for(
    store: GraphStore, group: str, other_group: str
) -> None:
    victim = dump_of(other_group)
    try:
        report = await graph(store, group).transfer.load(
            read(text_of(victim).splitlines(), "f.jsonl"), into=group
        )
        assert report.renamed == {other_group: group} and report.groups[group]["entity"] == 3
        assert await held(store, other_group) == 0, "the group the file names was not written"
        assert await held(store, group) == 3 + 2 + 3 + 5 + 2
        for correction in await store.corrections(group, limit=10):
            inside = [*correction.before.entities, *correction.after.entities, *correction.after.facts]
            assert {r.group_id for r in inside} == {group}, "a correction's records moved with it"
    finally:
        await store.delete_group(group)


async def test_a_record_of_a_group_the_header_does_not_name_is_refused_before_anything_is_written(
    store: GraphStore, group: str, other_group: str
) -> None:
    lines = dump_of(group)
    number = next(i for i, r in enumerate(lines) if r["record"] == "entity")
    lines[number]["group_id"] = other_group
    with pytest.raises(InputError) as refused:
        await graph(store, group).transfer.load(read(text_of(lines).splitlines(), "f.jsonl"))
    assert (refused.value.line, refused.value.field) == (number + 1, "group_id")
    assert other_group in str(refused.value)
    assert (await held(store, group), await held(store, other_group)) == (0, 0)


@pytest.mark.parametrize("side", ["before", "after"])
async def test_a_correction_holding_records_of_another_group_is_refused(
    store: GraphStore, group: str, other_group: str, side: str
) -> None:
    """A correction's slices are records too: one of another group would be written there by an undo."""
    lines = dump_of(group)
    number = next(i for i, r in enumerate(lines) if r["record"] == "correction")
    lines[number][side]["entities"][0]["group_id"] = other_group
    for into in (None, group):
        with pytest.raises(InputError) as refused:
            await graph(store, group).transfer.load(read(text_of(lines).splitlines(), "f.jsonl"), into=into)
        assert refused.value.line == number + 1
        assert refused.value.field == f"{side}.entities.0.group_id"
        assert other_group in str(refused.value)
    assert (await held(store, group), await held(store, other_group)) == (0, 0)


async def test_a_store_refuses_a_group_dump_whose_correction_holds_another_groups_records(
    store: GraphStore, group: str, other_group: str
) -> None:
    """The store's own guard, for a dump built in code rather than read from a file."""
    dump = read(text_of(dump_of(group)).splitlines(), "f.jsonl").groups[group]
    first = dump.corrections[0]
    entities = [first.before.entities[0].model_copy(update={"group_id": other_group})]
    bad = first.model_copy(update={"before": first.before.model_copy(update={"entities": entities})})
    smuggled = GroupDump(
        group, dump.episodes, dump.entities, dump.facts, dump.mentions, [bad, *dump.corrections[1:]],
        dump.communities, dump.conversations,
    )  # fmt: skip
    with pytest.raises(StoreError, match="nothing crosses groups"):
        await store.load_group(smuggled)
    assert (await held(store, group), await held(store, other_group)) == (0, 0)
