"""The dump format: what a dump holds, the version-1 fixture that must load forever, and every malformed
line refused with its file, line number and field before anything is written."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from epigraph import KnowledgeGraph
from epigraph.config import Settings
from epigraph.errors import ConflictError, InputError, UsageError
from epigraph.graph.corrections import CorrectionOp
from epigraph.graph.embedded import EmbeddedStore
from epigraph.graph.model import Invalidation
from epigraph.graph.store import GraphStore, StoreStats
from epigraph.testing import HashEmbedder
from epigraph.transfer import VERSION, read
from epigraph.transfer.format import KINDS, Header
from tests.support.transfer_graphs import ingest_locomo, locomo_reply

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "dump-v1.jsonl"
FIXTURE_V3 = FIXTURE.with_name("dump-v3.jsonl")
"""A version-3 dump (committed, never regenerated): a group after a forgetting and a retention pass, with
their audit records and its retention policy."""
DIM = 384


def lines_of(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def graph(store: GraphStore, group: str = "g") -> KnowledgeGraph:
    from epigraph.testing import ScriptedLLM

    settings = Settings(db_path=":memory:", author="mia")
    llm, embedder = ScriptedLLM(locomo_reply), HashEmbedder(dim=DIM)
    return KnowledgeGraph(settings, store=store, llm=llm, embedder=embedder, group_id=group)


async def test_the_version_1_fixture_loads_with_its_history() -> None:
    """A dump written by the first version of the format (committed, never regenerated): every later
    epigraph must load it, or refuse it saying why (docs/dump-format.md, "Versions")."""
    async with EmbeddedStore(":memory:") as store:
        kg = graph(store, "v1-fixture")
        report = await kg.transfer.load(FIXTURE)
        assert report.groups == {
            "v1-fixture": {
                "episode": 2,
                "entity": 3,
                "fact": 3,
                "mention": 5,
                "correction": 2,
                "community": 1,
                "conversation": 1,
                "forgetting": 0,
                "retention": 0,
                "decisions": 0,
            }
        }
        assert report.embeddings == "computed" and report.embedded == 7  # names, texts, the community
        ana = await kg.entity("Ana")
        assert {f.text for f in ana.current} == {"Ana lives in Braga.", "Ana works in Braga."}
        [moved] = ana.history
        assert moved.fact.text == "Ana lives in Porto." and moved.by_fact is not None
        assert moved.fact.invalid_at == datetime(2024, 2, 3, tzinfo=UTC)
        assert [c.operation for c in ana.corrections] == [CorrectionOp.ADD_FACT]
        porto = await kg.entity("Porto")  # renamed by hand; the old name is an alias
        assert porto.name == "Porto, Portugal"
        await kg.corrections.undo(porto.corrections[0].uuid, author="mia")
        assert (await kg.entity("Porto")).aliases == []
        [community] = await kg.overview.communities()
        assert community.community.name == "Ana and Braga" and community.size == 2
        conversation = await kg.overview.conversation("chat:ana")
        assert conversation.summary is not None and conversation.summary.version == 1
        found = await kg.search("where does Ana work")
        assert "Ana works in Braga." in [f.fact.text for f in found.facts]


async def test_a_dump_is_a_header_records_and_an_end_line(tmp_path: Path) -> None:
    async with EmbeddedStore(":memory:") as store:
        kg = graph(store)
        await ingest_locomo(kg)
        counts = await kg.transfer.export(tmp_path / "g.jsonl")
        lines = [json.loads(line) for line in lines_of(tmp_path / "g.jsonl")]
    head, end = lines[0], lines[-1]
    assert head["record"] == "header" and head["format"] == "epigraph-dump" and head["version"] == VERSION
    assert head["groups"] == ["g"] and head["vectors"] is False and head["embedding"] is None
    assert "valid_at" in head["schema"]["fact"] and "text_embedding" not in head["schema"]["fact"]
    assert end == {"record": "end", "counts": counts}
    assert counts == {
        "g": {
            "episode": 5,
            "entity": 6,
            "fact": 4,
            "mention": 12,
            "correction": 0,
            "community": 0,
            "conversation": 1,
            "forgetting": 0,
            "retention": 0,
            "decisions": 5,
        }
    }  # the import's conversation, summarized
    kinds = [line["record"] for line in lines[1:-1]]
    order = ["episode", "entity", "fact", "mention", "correction", "community", "conversation", "decisions"]
    assert kinds == sorted(kinds, key=order.index)
    fact = next(line for line in lines if line["record"] == "fact")
    assert set(fact) == {"record", *head["schema"]["fact"]}
    assert {"valid_at", "invalid_at", "created_at", "expired_at", "invalidated_by", "episodes"} <= set(fact)


def _dump(tmp_path: Path, lines: list[str]) -> Path:
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _edit(line: str, **changes: Any) -> str:
    record = json.loads(line)
    record.update(changes)
    return json.dumps(record)


def _at(index: int, **changes: Any) -> Any:
    """An edit of the fixture's lines: line ``index`` (0-based) with ``changes``."""
    return lambda ls: [*ls[:index], _edit(ls[index], **changes), *ls[index + 1 :]]


def _without(*indexes: int) -> Any:
    return lambda ls: [line for i, line in enumerate(ls) if i not in indexes]


NEWER = VERSION + 1
BROKEN: list[tuple[str, Any, str, int | None, str | None]] = [
    # (case, edit of the fixture's lines, message, line, field)
    ("not JSON", lambda ls: [*ls[:4], "{not json", *ls[5:]], "not JSON: Expecting property name", 5, None),
    ("a bad date", _at(6, valid_at="yesterday"), "Invalid isoformat string: 'yesterday'", 7, "valid_at"),
    ("an unknown field", _at(3, mood="happy"), "Extra inputs", 4, "mood"),
    (
        "an owed summary not a boolean",
        _at(3, summary_owed="yes"),
        "is true or false, got 'yes'",
        4,
        "summary_owed",
    ),
    ("an unknown record", _at(3, record="person"), "unknown record", 4, "record"),
    ("another group", _at(3, group_id="other"), "not among the header", 4, "group_id"),
    ("a uuid twice", _at(4, uuid="ent-ana"), "already on line 4", 5, "uuid"),
    ("a dangling fact", _without(3), "points at 'ent-ana', no entity", 6, "source_uuid"),
    ("a dangling mention", _without(1), "no episode 'ep-1' in the dump", 9, "episode_uuid"),
    ("an inverted interval", _at(7, invalid_at="2020-01-01T00:00:00Z"), "is before valid_at", 8, None),
    ("no end line", lambda ls: ls[:-1], "no end line: the dump was cut short", None, None),
    ("a wrong count", _without(9), "counts 5 mention", 18, "counts.v1-fixture.mention"),
    ("a line after the end", lambda ls: [*ls, ls[1]], "a record after the end line (line 19)", 20, None),
    ("a stray member", _at(16, members=["ent-ana", "nobody"]), "member 'nobody' is no entity", 17, "members"),
    ("a newer version", _at(0, version=NEWER), f"newer epigraph (dump format version {NEWER}", 1, "version"),
    ("version 0", _at(0, version=0), "no epigraph ever wrote it", 1, "version"),
    ("not a dump", lambda ls: ls[1:], "not an epigraph dump", 1, "format"),
    ("empty", lambda ls: [], "empty", 1, None),
]


@pytest.mark.parametrize(("case", "edit", "message", "line", "field"), BROKEN, ids=[b[0] for b in BROKEN])
async def test_a_malformed_dump_is_refused_with_its_line_and_field_and_nothing_is_written(
    tmp_path: Path, case: str, edit: Any, message: str, line: int | None, field: str | None
) -> None:
    bad = _dump(tmp_path, edit(lines_of(FIXTURE)))
    with pytest.raises(InputError) as caught:
        read(lines_of(bad), str(bad))
    error = caught.value
    assert message in error.reason, error.reason
    assert (error.file, error.line, error.field) == (str(bad), line, field)
    async with EmbeddedStore(str(tmp_path / "g.db")) as store:
        with pytest.raises(InputError, match=str(bad)):
            await graph(store, "v1-fixture").transfer.load(bad)
        assert await store.groups() == []


def _datetime_fields() -> set[str]:
    """The name of every datetime field of every record a dump holds (nested ones included; a field
    left out of every dump, ``Entity.summary_withheld``, is not)."""
    models: list[type[BaseModel]] = [Header, Invalidation, *KINDS.values()]
    return {
        name for m in models for name, f in m.model_fields.items()
        if "datetime" in str(f.annotation) and not f.exclude
    }  # fmt: skip


def _datetime_paths(record: Any, fields: set[str], path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    """Where ``record`` holds a datetime field (set or null), as key paths (list indexes as strings)."""
    items = (
        record.items() if isinstance(record, dict) else enumerate(record) if isinstance(record, list) else ()
    )
    for key, value in items:
        here = (*path, str(key))
        if key in fields and (value is None or isinstance(value, str)):
            yield here
        else:
            yield from _datetime_paths(value, fields, here)


def _set(record: Any, path: tuple[str, ...], value: Any) -> Any:
    copy = json.loads(json.dumps(record))
    inner = copy
    for key in path[:-1]:
        inner = inner[int(key)] if isinstance(inner, list) else inner[key]
    inner[path[-1]] = value
    return copy


NUMBERED = [
    (fixture, number, path, value)
    for fixture in (FIXTURE, FIXTURE_V3)
    for number, line in enumerate(lines_of(fixture), start=1)
    for path in _datetime_paths(json.loads(line), _datetime_fields())
    for value in (12345, 1.7e9)
]


@pytest.mark.parametrize(
    ("fixture", "number", "path", "value"),
    NUMBERED,
    ids=[f"{f.stem}:line{n}:{'.'.join(p)}={v}" for f, n, p, v in NUMBERED],
)
def test_a_number_where_a_datetime_belongs_is_refused_with_its_line_and_field(
    tmp_path: Path, fixture: Path, number: int, path: tuple[str, ...], value: float
) -> None:
    """Every datetime field of every record kind (nested records of corrections and invalidations too)
    is an ISO 8601 string: a number (pydantic would read seconds since 1970) is refused."""
    lines = lines_of(fixture)
    lines[number - 1] = json.dumps(_set(json.loads(lines[number - 1]), path, value))
    with pytest.raises(InputError) as caught:
        read(lines, "numbers.jsonl")
    error = caught.value
    assert (error.file, error.line, error.field) == ("numbers.jsonl", number, ".".join(path)), error.reason
    assert "ISO 8601" in error.reason and repr(value) in error.reason, error.reason


def test_every_datetime_field_of_the_fixtures_is_tried_with_a_number() -> None:
    tried = {(fixture, line, path[-1]) for fixture, line, path, _ in NUMBERED}
    kinds = {json.loads(lines_of(fixture)[line - 1])["record"] for fixture, line, _ in tried}
    assert kinds == {"header", "episode", "entity", "fact", "correction", "community", "conversation",
                     "forgetting", "retention"}  # fmt: skip
    assert {name for _, _, name in tried} == _datetime_fields()


async def test_the_version_3_fixture_loads_with_its_audit_records_and_retention() -> None:
    async with EmbeddedStore(":memory:") as store:
        kg = graph(store, "v3-fixture")
        report = await kg.transfer.load(FIXTURE_V3)
        assert (
            report.groups["v3-fixture"]["forgetting"] == 2 and report.groups["v3-fixture"]["retention"] == 1
        )
        records = await kg.forget.history()
        assert [r.call for r in records] == ["retention", "python"]  # newest first
        assert records[1].is_of("Zaria Quillfeather") and records[0].older_than is not None
        policy = await kg.forget.retention()
        assert policy is not None and policy.days == 400
        lines = [line async for line in kg.transfer.export_lines()]
        assert sum('"record": "forgetting"' in line for line in lines) == 2


async def test_a_load_writes_nothing_when_one_target_group_holds_data(tmp_path: Path) -> None:
    async with EmbeddedStore(str(tmp_path / "g.db")) as store:
        kg = graph(store, "a")
        await ingest_locomo(kg)
        await kg.corrections.add_fact("Mia", "knows", "Noah")
        await graph(store, "b").transfer.load(FIXTURE, into="b")
        await kg.transfer.export(tmp_path / "both.jsonl", groups=["a", "b"], vectors=True)
        held = await store.stats("b")
        await store.delete_group("a")
        with pytest.raises(ConflictError, match="'b' already hold"):
            await kg.transfer.load(tmp_path / "both.jsonl")
        assert await store.stats("a") == StoreStats(0, 0, 0, 0, 0)  # not even the group that was empty
        assert await store.stats("b") == held
        with pytest.raises(UsageError, match="only a one-group dump"):
            await kg.transfer.load(tmp_path / "both.jsonl", into="c")
        await store.delete_group("b")
        report = await kg.transfer.load(tmp_path / "both.jsonl")
        assert report.embeddings == "dump" and set(report.groups) == {"a", "b"}
        assert len(await store.corrections("a")) == 1
