"""Every known format, end to end without an LLM: detection, validation, conversion to episodes."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from epigraph.episodes.inputs import MAX_EPISODE_CHARS, EpisodeInput
from epigraph.errors import InputError
from epigraph.graph.model import Episode
from epigraph.importers import (
    ConvertStats,
    InvalidRecord,
    MappingError,
    detect,
    iter_episodes,
    iter_inputs,
    plan_without_llm,
    sample_records,
    to_episode,
)

FIXTURES = Path(__file__).parent / "fixtures"
T0 = datetime(2020, 1, 1, tzinfo=UTC)


def episodes(name: str, **kw: object) -> list[Episode]:
    plan = plan_without_llm(FIXTURES / name, group_id="g", default_time=T0)
    out = [e for e in iter_episodes(plan, **kw) if isinstance(e, Episode)]  # type: ignore[arg-type]
    return out


@pytest.mark.parametrize(
    ("name", "detector"),
    [
        ("locomo_mini.json", "locomo"),
        ("locomo10_mini.json", "locomo"),
        ("openai.jsonl", "openai-messages"),
        ("sharegpt.json", "sharegpt"),
        ("flat.jsonl", "flat-messages"),
        ("chat.csv", "flat-messages"),
        ("articles.jsonl", "text-records"),
        ("docs", "text-files"),
        ("docs/beta.md", "text-files"),
    ],
)
def test_detection(name: str, detector: str) -> None:
    plan = plan_without_llm(FIXTURES / name)
    assert plan.origin == f"detected: {detector}"


def test_unknown_shapes_are_not_guessed() -> None:
    for name in ("odd.jsonl", "irrelevant.jsonl"):
        with pytest.raises(MappingError, match="no known format recognised"):
            plan_without_llm(FIXTURES / name)
    assert detect([], "jsonl", "x") is None


def test_locomo_turns_speakers_and_session_times() -> None:
    eps = episodes("locomo_mini.json")
    assert len(eps) == 5  # session_3 has a date but no turns
    assert [e.name for e in eps] == ["Ana", "Ben", "Ana", "Ben", "Ana"]
    assert eps[0].content == "Ana: Hi Ben! I started a pottery class yesterday."
    assert {e.kind for e in eps} == {"message"}
    assert {e.source_description for e in eps} == {"locomo:locomo_mini"}
    assert [e.reference_time for e in eps] == [datetime(2023, 5, 8, 13, 56, tzinfo=UTC)] * 3 + [
        datetime(2023, 6, 27, 10, 37, tzinfo=UTC)
    ] * 2


def test_locomo_original_layout_keeps_conversations_apart() -> None:
    eps = episodes("locomo10_mini.json")
    assert len(eps) == 8
    assert len({e.uuid for e in eps}) == 8  # dia_ids repeat across conversations; sample_id separates them
    assert eps[5].content == eps[0].content and eps[5].uuid != eps[0].uuid


def test_openai_messages() -> None:
    stats = ConvertStats()
    plan = plan_without_llm(FIXTURES / "openai.jsonl", group_id="g", default_time=T0)
    eps = [e for e in iter_episodes(plan, stats=stats) if isinstance(e, Episode)]
    assert [e.content for e in eps[:3]] == [
        "user: My sister Eve lives in Oslo.",
        "assistant: Noted: Eve lives in Oslo.",
        "user: Eve moved to Bergen.",  # content given as text parts
    ]
    assert eps[0].reference_time == datetime(2024, 1, 2, 10, tzinfo=UTC)
    assert (stats.empty_messages, stats.skipped_roles) == (1, {"system": 1, "tool": 1})
    # the same "thanks" three times in one conversation stays three episodes
    assert [e.content for e in eps[-3:]] == ["user: thanks", "assistant: thanks", "user: thanks"]
    assert len({e.uuid for e in eps}) == len(eps)


def test_sharegpt_roles_and_default_time() -> None:
    eps = episodes("sharegpt.json")
    assert [e.content for e in eps] == [
        "user: What is the capital of Norway?",
        "assistant: Oslo.",
        "user: Name a fjord.",
        "assistant: Geirangerfjord.",
    ]
    assert {e.reference_time for e in eps} == {T0}


def test_flat_rows_jsonl_and_csv() -> None:
    eps = episodes("flat.jsonl")
    assert [(e.name, e.reference_time.minute) for e in eps] == [
        ("Kim", 0),
        ("Lee", 1),
        ("Kim", 2),
    ]  # epoch too
    csv_eps = episodes("chat.csv")
    assert [e.content for e in csv_eps] == ["Kim: Hello, Lee", "Lee: Line one\nline two", "Kim: Bye"]
    assert csv_eps[2].reference_time == datetime(2024, 2, 1, 18, 9, tzinfo=UTC)


def test_text_records_and_files() -> None:
    arts = episodes("articles.jsonl")
    assert [(e.name, e.kind, e.source_description) for e in arts] == [
        ("Fjords", "text", "wiki"),
        ("Oslo", "text", "wiki"),
    ]
    assert arts[0].reference_time == datetime(2023, 3, 1, tzinfo=UTC)
    docs = episodes("docs")
    assert [e.name for e in docs] == ["alpha", "beta", "gamma"]
    assert docs[1].content == "# Beta\n\nBeta is a dog.\n"
    assert {e.source_description for e in docs} == {"docs"}


def test_reimport_is_idempotent_and_scoped_by_group() -> None:
    for name in ("locomo_mini.json", "openai.jsonl", "chat.csv", "docs", "sharegpt.json"):
        first = [e.uuid for e in episodes(name)]
        assert first == [e.uuid for e in episodes(name)]
        plan = plan_without_llm(FIXTURES / name, group_id="other", default_time=T0)
        other = [e.uuid for e in iter_episodes(plan) if isinstance(e, Episode)]
        assert not set(first) & set(other)


def test_ids_come_from_original_ids() -> None:
    # an id-keyed episode keeps its uuid when its time changes (e.g. a file re-downloaded: new mtime)
    plan_a = plan_without_llm(FIXTURES / "sharegpt.json", group_id="g", default_time=T0)
    plan_b = plan_without_llm(
        FIXTURES / "sharegpt.json", group_id="g", default_time=datetime(2021, 1, 1, tzinfo=UTC)
    )
    assert [e.uuid for e in iter_episodes(plan_a)] == [e.uuid for e in iter_episodes(plan_b)]  # type: ignore[union-attr]


def test_limit_stops_early() -> None:
    assert len(episodes("locomo_mini.json", limit=2)) == 2
    assert episodes("locomo_mini.json", limit=0) == []


def test_invalid_records_raise_unless_skipped() -> None:
    plan = plan_without_llm(FIXTURES / "broken.jsonl", group_id="g", default_time=T0)
    with pytest.raises(InputError) as info:
        list(iter_episodes(plan))
    assert info.value.line == 2 and info.value.file and info.value.file.endswith("broken.jsonl")
    items = list(iter_episodes(plan, skip_invalid=True))
    bad = [i for i in items if isinstance(i, InvalidRecord)]
    assert [(b.line, b.path) for b in bad] == [(2, None), (3, "text")]
    assert [i.content for i in items if isinstance(i, Episode)] == ["Kim: first", "Kim: last"]


def test_bad_timestamp_in_a_record_is_invalid(tmp_path: Path) -> None:
    path = tmp_path / "f.jsonl"
    rows = [
        {"speaker": "A", "text": "x", "timestamp": "2024-01-01"},
        {"speaker": "B", "text": "y", "timestamp": "later"},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    plan = plan_without_llm(path, group_id="g")
    items = list(iter_episodes(plan, skip_invalid=True))
    assert isinstance(items[1], InvalidRecord) and "'later' is not a date" in items[1].reason


def test_fan_out_record_errors_name_the_item(tmp_path: Path) -> None:
    path = tmp_path / "f.json"
    path.write_text(json.dumps({"rows": [{"t": "a"}, {"u": "b"}]}))
    mapping = tmp_path / "m.json"
    mapping.write_text(json.dumps({"records": "rows[*]", "text": "t"}))
    plan = plan_without_llm(path, mapping, group_id="g")
    items = list(iter_episodes(plan, skip_invalid=True))
    assert isinstance(items[0], Episode) and items[0].content == "a"
    assert isinstance(items[1], InvalidRecord) and "item 1 of rows[*]" in items[1].reason


def test_given_mapping_file_overrides_detection(tmp_path: Path) -> None:
    mapping = tmp_path / "m.json"
    mapping.write_text(
        json.dumps(
            {
                "messages": [{"role": "user", "content": "text", "speaker": {"value": "Someone"}}],
                "meta": {"source": {"value": "chat"}, "original_id": "id"},
            }
        )
    )
    plan = plan_without_llm(FIXTURES / "flat.jsonl", mapping, group_id="g")
    assert plan.origin == f"file: {mapping}"
    eps = [e for e in iter_episodes(plan) if isinstance(e, Episode)]
    assert {e.name for e in eps} == {"Someone"} and {e.source_description for e in eps} == {"chat"}


def test_include_system_and_tool(tmp_path: Path) -> None:
    mapping = tmp_path / "m.json"
    mapping.write_text(
        json.dumps(
            {
                "messages": [
                    {
                        "each": "messages[*]",
                        "role": {"path": "role"},
                        "content": ["content", "content[*].text"],
                    }
                ],
                "include_system": True,
                "include_tool": True,
            }
        )
    )
    plan = plan_without_llm(FIXTURES / "openai.jsonl", mapping, group_id="g")
    eps = [e for e in iter_episodes(plan) if isinstance(e, Episode)]
    assert eps[0].content == "system: You are a helpful assistant."
    assert "tool: ok" in [e.content for e in eps]


def test_samples_feed_detection() -> None:
    samples = sample_records(FIXTURES / "openai.jsonl", 2)
    found = detect(samples, "jsonl", "openai.jsonl")
    assert found is not None and found.name == "openai-messages"
    assert found.mapping.description == "detected: openai-messages"


@pytest.mark.parametrize("name", ["locomo_mini.json", "openai.jsonl", "chat.csv", "articles.jsonl", "docs"])
def test_inputs_become_the_same_episodes_in_the_ingestor(name: str) -> None:
    """A dry run shows exactly what an import stores: same uuid, content, name, time, source (the
    ingestor's door is async: it may redact before storing; off here)."""
    from epigraph.ingestion.ingestor import Ingestor

    ingestor = Ingestor(store=None, llm=None, embedder=None)  # type: ignore[arg-type]  # only _episode is used
    plan = plan_without_llm(FIXTURES / name, group_id="g", default_time=T0)
    fields = ("uuid", "group_id", "name", "content", "kind", "source_description", "reference_time")
    inputs = [i for i in iter_inputs(plan) if isinstance(i, EpisodeInput)]
    assert inputs
    for item in inputs:
        ours, theirs = to_episode(item), asyncio.run(ingestor._episode(item))
        assert [getattr(ours, f) for f in fields] == [getattr(theirs, f) for f in fields]


def test_a_text_over_the_episode_limit_is_an_invalid_record(tmp_path: Path) -> None:
    """The one limit of every door (``MAX_EPISODE_CHARS``): a document longer than it is an invalid record
    naming its file, not an episode sent whole to the model."""
    (tmp_path / "short.md").write_text("Ann lives in Oslo.\n")
    (tmp_path / "long.md").write_text("word " * (MAX_EPISODE_CHARS // 5 + 1))
    plan = plan_without_llm(tmp_path, group_id="g", default_time=T0)
    items = list(iter_inputs(plan, skip_invalid=True))
    kept = [i for i in items if isinstance(i, EpisodeInput)]
    refused = [i for i in items if isinstance(i, InvalidRecord)]
    assert [i.content for i in kept] == ["Ann lives in Oslo.\n"]
    assert len(refused) == 1 and refused[0].file is not None and refused[0].file.endswith("long.md")
    assert f"the text is too long: at most {MAX_EPISODE_CHARS} characters" in refused[0].reason
