"""Pure parsing: json extraction and incremental JSONL, line by line."""

from __future__ import annotations

import json

import pytest
from pydantic import TypeAdapter

from epigraph.prompts.parsing import (
    JsonlParser,
    ReplyError,
    extract_json_value,
    parse_json_reply,
    parse_jsonl_reply,
    strip_think,
)
from tests.support.prompt_defs import Decision, EntityLine, EntityOut, FactLine, MixedLine

ENT = TypeAdapter(EntityOut)
MIXED = TypeAdapter(MixedLine)


def line(name: str, kind: str = "person") -> str:
    return json.dumps({"name": name, "kind": kind})


# ---------------------------------------------------------------------------------------- jsonl


def test_valid_jsonl() -> None:
    items, dropped = parse_jsonl_reply(f"{line('Alice')}\n{line('Paris', 'place')}\n", ENT)
    assert items == [EntityOut(name="Alice", kind="person"), EntityOut(name="Paris", kind="place")]
    assert dropped == []


def test_final_line_without_newline_is_parsed() -> None:
    items, dropped = parse_jsonl_reply(f"{line('A')}\n{line('B')}", ENT)
    assert [i.name for i in items] == ["A", "B"] and dropped == []


def test_empty_lines_and_whitespace_are_skipped() -> None:
    items, dropped = parse_jsonl_reply(f"\n\n  {line('A')}  \n\n\t\n{line('B')}\n\n", ENT)
    assert [i.name for i in items] == ["A", "B"] and dropped == []


@pytest.mark.parametrize("fence", ["```", "```json", "```jsonl", "  ```JSON  ", "~~~"])
def test_code_fences_are_skipped(fence: str) -> None:
    items, dropped = parse_jsonl_reply(f"{fence}\n{line('A')}\n{line('B')}\n```\n", ENT)
    assert [i.name for i in items] == ["A", "B"] and dropped == []


@pytest.mark.parametrize("text", ["", "   ", "\n\n", "```\n```"])
def test_empty_reply_gives_empty_list(text: str) -> None:
    assert parse_jsonl_reply(text, ENT) == ([], [])


def test_wholly_invalid_reply_gives_empty_list_and_counts_lines() -> None:
    items, dropped = parse_jsonl_reply("I could not find any entities.\nSorry!", ENT)
    assert items == []
    assert [(d.line_no, d.text) for d in dropped] == [(1, "I could not find any entities."), (2, "Sorry!")]
    assert all("not valid JSON" in d.reason for d in dropped)


def test_invalid_lines_interspersed_are_dropped_with_line_numbers() -> None:
    reply = "\n".join(
        ["Here you go:", line("A"), "{not json", line("B"), '{"name": "C", "kind": ', line("D")]
    )
    items, dropped = parse_jsonl_reply(reply, ENT)
    assert [i.name for i in items] == ["A", "B", "D"]
    assert [d.line_no for d in dropped] == [1, 3, 5]


def test_schema_violations_are_dropped_with_reason() -> None:
    reply = "\n".join([line("A"), '{"name": "B"}', '{"name": 3, "kind": "x"}', '"just a string"', line("E")])
    items, dropped = parse_jsonl_reply(reply, ENT)
    assert [i.name for i in items] == ["A", "E"]
    assert [d.line_no for d in dropped] == [2, 3, 4]
    assert "schema violation" in dropped[0].reason and "kind" in dropped[0].reason
    assert "name" in dropped[1].reason


@pytest.mark.parametrize("k", [0, 1, 3])
def test_truncated_after_k_complete_lines_gives_k_items(k: int) -> None:
    complete = "".join(line(f"E{i}") + "\n" for i in range(k))
    items, dropped = parse_jsonl_reply(complete + '{"name": "cut', ENT, cut_reason="truncated")
    assert len(items) == k
    assert len(dropped) == 1 and dropped[0].line_no == k + 1
    assert dropped[0].reason == "truncated: incomplete final line"


def test_truncated_reply_with_complete_final_line_keeps_it() -> None:
    items, dropped = parse_jsonl_reply(f"{line('A')}\n{line('B')}", ENT, cut_reason="truncated")
    assert [i.name for i in items] == ["A", "B"] and dropped == []


def test_unterminated_invalid_final_line_without_cut_is_an_ordinary_drop() -> None:
    _, dropped = parse_jsonl_reply(f"{line('A')}\n{{bad", ENT)
    assert "not valid JSON" in dropped[0].reason


def test_discriminated_union_lines() -> None:
    reply = "\n".join(
        [
            '{"type": "entity", "name": "Alice"}',
            '{"type": "fact", "source": "Alice", "target": "Paris", "relation": "LIVES_IN"}',
            '{"type": "event", "name": "x"}',
            '{"type": "fact", "source": "Alice"}',
            '{"name": "no type"}',
            '{"type": "entity", "name": "Paris"}',
        ]
    )
    items, dropped = parse_jsonl_reply(reply, MIXED)
    assert [type(i) for i in items] == [EntityLine, FactLine, EntityLine]
    assert isinstance(items[1], FactLine) and items[1].relation == "LIVES_IN"
    assert [d.line_no for d in dropped] == [3, 4, 5]
    assert "event" in dropped[0].reason or "tag" in dropped[0].reason


def test_think_block_lines_are_skipped() -> None:
    reply = f"<think>\nLet me think {{about}} this.\n{line('NotMe')}\n</think>\n{line('A')}\n"
    items, dropped = parse_jsonl_reply(reply, ENT)
    assert [i.name for i in items] == ["A"] and dropped == []


def test_inline_think_block_and_stray_close_tag() -> None:
    items, _ = parse_jsonl_reply(f"<think>hmm</think>{line('A')}\n", ENT)
    assert [i.name for i in items] == ["A"]
    items, _ = parse_jsonl_reply(f"reasoning</think>{line('B')}\n", ENT)
    assert [i.name for i in items] == ["B"]


def test_lenient_trailing_comma_several_objects_and_arrays() -> None:
    reply = f"{line('A')},\n{line('B')} {line('C')}\n[{line('D')}, {line('E')}]\n[\n]\n"
    items, dropped = parse_jsonl_reply(reply, ENT)
    assert [i.name for i in items] == ["A", "B", "C", "D", "E"]
    assert [d.line_no for d in dropped] == [4, 5]  # a lone bracket is not JSON


def test_incremental_feed_yields_items_as_lines_complete() -> None:
    parser = JsonlParser(ENT)
    text = f"{line('A')}\n{line('B')}\n{line('C')}"
    got: list[list[str]] = []
    for i in range(0, len(text), 7):
        got.append([e.name for e in parser.feed(text[i : i + 7])])
    flat = [n for chunk in got for n in chunk]
    assert flat == ["A", "B"]  # the unterminated last line waits for finish()
    first_chunk_with_a = next(i for i, names in enumerate(got) if names)
    assert first_chunk_with_a * 7 <= len(line("A")) + 1  # handed on right when its newline arrived
    assert [e.name for e in parser.finish()] == ["C"]
    assert [e.name for e in parser.items] == ["A", "B", "C"]
    assert parser.finish() == []
    with pytest.raises(RuntimeError):
        parser.feed("x")


def test_think_block_split_across_chunks() -> None:
    parser = JsonlParser(ENT)
    names: list[str] = []
    for piece in ["<thi", "nk>\n", line("X"), "\n</th", "ink>\n", line("A"), "\n"]:
        names.extend(e.name for e in parser.feed(piece))
    parser.finish()
    assert names == ["A"] and parser.dropped == []


def test_long_dropped_line_text_is_clipped() -> None:
    _, dropped = parse_jsonl_reply("x" * 5000, ENT)
    assert len(dropped[0].text) <= 2001


# ----------------------------------------------------------------------------------------- json

DEC = TypeAdapter(Decision)
GOOD = '{"reasoning": "same person", "duplicate": true}'


@pytest.mark.parametrize(
    "reply",
    [
        GOOD,
        f"```json\n{GOOD}\n```",
        f"Sure! Here is the answer:\n{GOOD}\nLet me know if you need more.",
        f"<think>The {{answer}} is probably yes.</think>\n{GOOD}",
        f"<think>\nstep 1 {{\n</think>\n```json\n{GOOD}\n```",
        f"I thought about it </think>{GOOD}",
        f"Options: {{a}} or {{b}}. Final: {GOOD}",
    ],
)
def test_json_reply_variants(reply: str) -> None:
    assert parse_json_reply(reply, DEC) == Decision(reasoning="same person", duplicate=True)


def test_json_scalar_and_list_values() -> None:
    assert parse_json_reply("42", TypeAdapter(int)) == 42
    assert parse_json_reply("Result: [1, 2]", TypeAdapter(list[int])) == [1, 2]


@pytest.mark.parametrize("reply", ["", "no json here", '{"reasoning": "cut', "<think>only thinking"])
def test_json_without_a_value_raises(reply: str) -> None:
    with pytest.raises(ReplyError):
        extract_json_value(reply)


def test_json_schema_violation_names_the_field() -> None:
    with pytest.raises(ReplyError, match="duplicate"):
        parse_json_reply('{"reasoning": "x"}', DEC)


def test_strip_think() -> None:
    assert strip_think("<think>a</think>b<think>c</think>d") == "bd"
    assert strip_think("x<think>unclosed") == "x"
    assert strip_think("plain") == "plain"
