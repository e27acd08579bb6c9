"""Mapping models, load/save, and validation against sample records."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from epigraph.errors import InputError
from epigraph.importers import (
    IrrelevantDataset,
    MappingError,
    MessagesMapping,
    TextMapping,
    Value,
    compile_mapping,
    load_mapping,
    mapping_json,
    parse_mapping,
    save_mapping,
)

QA = [{"q": {"text": "Where is Oslo?"}, "a": "Norway", "src": "quiz", "when": "2024-01-01"}]
CHAT = [{"id": 1, "turns": [{"who": "human", "said": "hi"}, {"who": "bot", "said": "hello"}]}]


def problems(mapping: dict[str, Any], samples: list[Any]) -> list[str]:
    with pytest.raises(MappingError) as info:
        compile_mapping(parse_mapping(mapping), samples)
    return info.value.errors


# ------------------------------------------------------------------------------------------------ models


def test_mode_is_given_by_the_key() -> None:
    assert isinstance(parse_mapping({"text": "body"}), TextMapping)
    assert isinstance(parse_mapping({"messages": [{"role": "user", "content": "q"}]}), MessagesMapping)
    with pytest.raises(InputError, match="exactly one of"):
        parse_mapping({"meta": None})
    with pytest.raises(InputError, match="exactly one of"):
        parse_mapping({"text": "a", "messages": []})
    with pytest.raises(InputError, match="JSON object"):
        parse_mapping(["text"])


@pytest.mark.parametrize(
    "data",
    [
        {"text": ""},
        {"text": "body", "meta": {"source": "x", "language": ""}},
        {"messages": [{"role": "user", "content": "q", "speaker": ""}]},
        {"text": "body", "meta": {"source": {"value": ""}}},
    ],
)
def test_empty_strings_are_rejected(data: dict[str, Any]) -> None:
    with pytest.raises(InputError, match="never an empty value"):
        parse_mapping(data)


def test_unknown_fields_and_bad_roles_are_rejected() -> None:
    with pytest.raises(InputError, match="body_text"):
        parse_mapping({"text": "body", "body_text": "x"})
    with pytest.raises(InputError, match="role_map"):
        parse_mapping({"messages": [{"content": "q", "role_map": {"bot": "robot"}}]})


def test_meta_source_is_required_when_meta_is_present() -> None:
    with pytest.raises(InputError, match="source"):
        parse_mapping({"text": "body", "meta": {"language": "en"}})


def test_save_and_load_round_trip(tmp_path: Path) -> None:
    mapping = parse_mapping(
        {
            "records": "rows[*]",
            "messages": [
                {
                    "each": "m[*]",
                    "role": {"path": "user"},
                    "content": ["a", "b"],
                    "role_map": {"x": "assistant"},
                }
            ],
            "meta": {"source": {"value": "ds"}, "language": {"value": "en"}, "original_id": "id"},
        }
    )
    path = save_mapping(mapping, tmp_path / "m.json")
    assert load_mapping(path) == mapping
    data = json.loads(path.read_text())
    assert data["system"] is None and data["meta"]["timestamp"] is None  # nulls kept, never ""
    assert mapping_json(mapping).startswith("{\n")


def test_load_errors_say_where(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"text": \n oops}')
    with pytest.raises(InputError) as info:
        load_mapping(bad)
    assert info.value.file == str(bad) and info.value.line == 2
    with pytest.raises(InputError, match="cannot read"):
        load_mapping(tmp_path / "missing.json")


# -------------------------------------------------------------------------------------------- validation


def test_valid_text_mapping_compiles_and_decides_values() -> None:
    checked = compile_mapping(
        parse_mapping(
            {"text": ["q.text", "a"], "meta": {"source": "src", "language": "en", "timestamp": "when"}}
        ),
        QA,
    )
    assert checked.compiled.mode == "text"
    meta = checked.mapping.meta
    assert meta is not None
    assert meta.source == "src"  # resolves in the samples: a path
    assert meta.language == Value(value="en")  # does not: a value, made explicit


def test_unresolved_paths_are_listed_with_hints() -> None:
    with pytest.raises(MappingError) as info:
        compile_mapping(
            parse_mapping(
                {
                    "messages": [
                        {"role": "user", "content": "turns.said"},
                        {"role": "assistant", "content": "answer"},
                    ]
                }
            ),
            CHAT,
        )
    assert info.value.unresolved == ["messages[0].content: turns.said", "messages[1].content: answer"]
    text = str(info.value)
    assert "'turns' is an array of 2" in text and "turns[*]" in text
    assert "the record is an object (keys: id, turns)" in text


def test_all_problems_are_collected() -> None:
    errors = problems(
        {"records": "nope[*]", "text": "x", "name": "bad[", "meta": {"source": "s", "timestamp": "t"}}, QA
    )
    assert any(e.startswith("records:") for e in errors)
    assert len(errors) >= 2


def test_syntax_errors_are_reported() -> None:
    assert any("invalid path" in e for e in problems({"text": "q..text"}, QA))


def test_text_must_reach_text_not_objects() -> None:
    assert any("not text" in e for e in problems({"text": "q"}, QA))


def test_required_fields() -> None:
    assert "text: required (a path to the text)" in problems({"text": None, "meta": {"source": "x"}}, QA)
    errors = problems({"messages": [{"role": "user", "content": None}]}, QA)
    assert any("content: required" in e for e in errors)


def test_roles_are_inferred_from_content_paths() -> None:
    data = [{"question": "x", "answer": "y", "instruction": "z"}]
    checked = compile_mapping(
        parse_mapping(
            {"messages": [{"content": "question"}, {"content": "answer"}, {"content": "instruction"}]}
        ),
        data,
    )
    assert [m.role for m in checked.compiled.messages] == ["user", "assistant", "system"]
    assert isinstance(checked.mapping, MessagesMapping)
    assert [m.role for m in checked.mapping.messages or []] == ["user", "assistant", "system"]


def test_role_that_cannot_be_inferred_is_an_error() -> None:
    errors = problems({"messages": [{"content": "a"}]}, QA)
    assert any("role: missing" in e for e in errors)


def test_role_paths_need_known_values_or_a_role_map() -> None:
    spec = {"each": "turns[*]", "role": "who", "content": "said"}
    compile_mapping(parse_mapping({"messages": [spec]}), CHAT)  # human / bot are known role words
    data = [{"turns": [{"who": "npc", "said": "hi"}]}]
    assert any("['npc'] are not roles" in e for e in problems({"messages": [spec]}, data))
    compile_mapping(parse_mapping({"messages": [{**spec, "role_map": {"npc": "assistant"}}]}), data)


def test_bad_timestamps_are_caught_on_the_samples() -> None:
    data = [{"t": "someday", "x": "hello"}]
    errors = problems({"text": "x", "meta": {"source": "s", "timestamp": "t"}}, data)
    assert any("'someday' is not a date" in e and "timestamp_format" in e for e in errors)
    compile_mapping(
        parse_mapping(
            {"text": "x", "meta": {"source": "s", "timestamp": "t", "timestamp_format": "someday"}}
        ),
        data,
    )


def test_each_that_reaches_nothing_is_unresolved() -> None:
    with pytest.raises(MappingError) as info:
        compile_mapping(
            parse_mapping({"messages": [{"each": "msgs[*]", "role": "user", "content": "t"}]}), CHAT
        )
    assert info.value.unresolved == ["messages[0].each: msgs[*]"]


def test_irrelevant_mapping_is_refused_clearly() -> None:
    for data in ({"text": None, "meta": None}, {"messages": None, "system": None, "meta": None}):
        with pytest.raises(IrrelevantDataset, match="no chat messages or document text"):
            compile_mapping(parse_mapping(data), QA)


def test_no_samples_is_an_error() -> None:
    with pytest.raises(MappingError, match="no records"):
        compile_mapping(parse_mapping({"text": "x"}), [])


def test_variables_must_be_captured_before_they_are_reused() -> None:
    data = [{"s_1": [{"t": "a"}], "s_1_date": "2024-01-01", "s_2_date": "2024-02-01"}]
    spec = {"role": "user", "content": "t", "timestamp": "$.s_{n}_date"}
    mapping = {"records": "s_{n}[*]", "messages": [spec]}
    compile_mapping(parse_mapping(mapping), data)
    loose = {"messages": [{"role": "user", "content": "s_1[0].t", "timestamp": "s_{n}_date"}]}
    assert any("{n} in 's_{n}_date' is not captured" in e for e in problems(loose, data))
