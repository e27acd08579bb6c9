"""The JSONL episode-file parser: episodes, or errors that say file, line and field."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from epigraph.episodes.inputs import MAX_EPISODE_CHARS, EpisodeInput, parse_episode_lines
from epigraph.errors import InputError
from epigraph.graph.model import EpisodeKind

GOOD = {"content": "I moved.", "kind": "message", "speaker": "Ann", "reference_time": "2024-05-02T10:00:00Z",
        "group": "ann", "source": "chat", "name": "m1", "id": "m-1"}  # fmt: skip


def test_a_full_line_becomes_an_episode_input() -> None:
    [item] = parse_episode_lines([json.dumps(GOOD)], file="e.jsonl")
    assert item == EpisodeInput(
        content="I moved.",
        reference_time=datetime(2024, 5, 2, 10, tzinfo=UTC),
        group_id="ann",
        kind=EpisodeKind.MESSAGE,
        speaker="Ann",
        name="m1",
        source_description="chat",
        episode_id="m-1",
        line=1,
    )


def test_defaults_blank_lines_and_comments() -> None:
    lines = ["", "# a comment", json.dumps({"content": "x"}), "   "]
    [item] = parse_episode_lines(lines, default_group="team", default_reference_time=datetime(2024, 1, 1))
    assert isinstance(item, EpisodeInput)
    assert (item.group_id, item.kind, item.line, item.reference_time.tzinfo) == (
        "team",
        EpisodeKind.MESSAGE,
        3,
        UTC,
    )


@pytest.mark.parametrize(
    ("line", "field", "fragment"),
    [
        ("{not json", None, "not valid JSON"),
        ("[1, 2]", None, "expected a JSON object"),
        (json.dumps({**GOOD, "content": "  "}), "content", "missing or empty"),
        (json.dumps({k: v for k, v in GOOD.items() if k != "reference_time"}), "reference_time", "missing"),
        (json.dumps({**GOOD, "reference_time": "last tuesday"}), "reference_time", "not an ISO 8601 time"),
        (json.dumps({**GOOD, "kind": "email"}), "kind", "must be one of message, text, json"),
        (json.dumps({**GOOD, "group": "no spaces allowed"}), "group", "group_id"),
        (json.dumps({**GOOD, "refrence_time": "x"}), "refrence_time", "unknown field"),
        (json.dumps({**GOOD, "speaker": 7}), "speaker", "must be a string"),
    ],
)
def test_errors_name_the_file_line_and_field(line: str, field: str | None, fragment: str) -> None:
    results = list(parse_episode_lines([json.dumps(GOOD), line], file="eps.jsonl"))
    assert isinstance(results[0], EpisodeInput)
    error = results[1]
    assert isinstance(error, InputError)
    assert (error.file, error.line, error.field) == ("eps.jsonl", 2, field)
    assert fragment in str(error) and str(error).startswith("eps.jsonl:2: ")


def test_coerce_accepts_mappings_with_file_or_attribute_names() -> None:
    item = EpisodeInput.coerce({"content": "x", "reference_time": "2024-01-01", "group": "g", "id": "7"})
    assert (item.group_id, item.episode_id, item.reference_time.tzinfo) == ("g", "7", UTC)
    with pytest.raises(InputError):
        EpisodeInput.coerce({"content": "x"})


def test_content_over_the_one_limit_is_refused_naming_the_line() -> None:
    longest, over = "a" * MAX_EPISODE_CHARS, "a" * (MAX_EPISODE_CHARS + 1)
    lines = [json.dumps({**GOOD, "content": longest}), json.dumps({**GOOD, "content": over})]
    ok, refused = parse_episode_lines(lines, file="e.jsonl")
    assert isinstance(ok, EpisodeInput) and isinstance(refused, InputError)
    assert str(refused) == (
        f"e.jsonl:2: at most {MAX_EPISODE_CHARS} characters, got {MAX_EPISODE_CHARS + 1} "
        "(split it into several episodes) (field 'content')"
    )
    at = datetime(2024, 5, 2, tzinfo=UTC)
    with pytest.raises(InputError) as built:  # the library's own door: the same limit, the same words
        EpisodeInput(over, at)
    assert (built.value.field, built.value.reason) == ("content", refused.reason)
    with pytest.raises(InputError) as coerced:
        EpisodeInput.coerce({"content": over, "reference_time": at})
    assert coerced.value.field == "content"
