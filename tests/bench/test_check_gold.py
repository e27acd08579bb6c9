"""bench/quality/check_gold.py: the rules of a hand-made gold extraction set, on a tiny conversation made
here."""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bench.quality.check_gold import check, counts, main, session_time_utc

CONVERSATION: dict[str, Any] = {
    "speaker_a": "Ann",
    "speaker_b": "Bob",
    "session_1_date_time": "1:56 pm on 8 May, 2023",
    "session_1": [
        {"speaker": "Ann", "dia_id": "D1:1", "text": "Hi Bob!"},
        {
            "speaker": "Bob",
            "dia_id": "D1:2",
            "text": "Hey Ann! I moved to Oslo last year and I work at Acme.",
        },
        {"speaker": "Ann", "dia_id": "D1:3", "text": "Nice, Bob! "},
    ],
    "session_2_date_time": "12:48 am on 1 February, 2024",
    "session_2": [
        {"speaker": "Bob", "dia_id": "D2:1", "text": "Acme Corp let me go yesterday, but I still love Oslo."},
    ],
    "session_3_date_time": "9:00 am on 2 March, 2024",
    "session_3": [{"speaker": "Ann", "dia_id": "D3:1", "text": "Not annotated."}],
}


def _sha(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:12]


def _fact(fid: str, source: str, relation: str, target: str, sentence: str, valid: str | None) -> dict:
    return {
        "id": fid,
        "source": source,
        "target": target,
        "relation": relation,
        "fact": sentence,
        "valid_at": valid,
        "invalid_at": None,
    }


def _gold() -> dict[str, Any]:
    texts = {t["dia_id"]: t["text"] for s in (1, 2) for t in CONVERSATION[f"session_{s}"]}
    bob, ann = {"name": "Bob", "type": "Person"}, {"name": "Ann", "type": "Person"}
    oslo = {"name": "Oslo", "type": "Location"}
    turns = {
        "D1:1": {"speaker": "Ann", "kind": "greeting", "entities": [], "facts": []},
        "D1:2": {
            "speaker": "Bob",
            "kind": "substantive",
            "entities": [bob, ann, oslo, {"name": "Acme", "type": "Location"}],
            "facts": [
                _fact(
                    "D1:2#1",
                    "Bob",
                    "LIVES_IN",
                    "Oslo",
                    "Bob moved to Oslo last year.",
                    "2022-01-01T00:00:00Z",
                ),
                _fact("D1:2#2", "Bob", "WORKS_AT", "Acme", "Bob works at Acme.", "2023-05-08T13:56:00Z"),
            ],
        },
        "D1:3": {"speaker": "Ann", "kind": "minor", "entities": [ann, bob], "facts": []},
        "D2:1": {
            "speaker": "Bob",
            "kind": "substantive",
            "entities": [bob, {"name": "Acme Corp", "type": "Location"}, oslo],
            "facts": [
                _fact(
                    "D2:1#1",
                    "Bob",
                    "LOST_JOB_AT",
                    "Acme Corp",
                    "Acme Corp let Bob go yesterday.",
                    "2024-01-31T00:00:00Z",
                ),
                _fact(
                    "D2:1#2",
                    "Bob",
                    "LOVES",
                    "Oslo",
                    "Bob still loves living in Oslo.",
                    "2024-02-01T00:48:00Z",
                ),
            ],
            "duplicates": [{"name": "Acme Corp", "same_as": "Acme"}],
        },
    }
    turns["D2:1"]["facts"][0]["contradicts"] = ["D1:2#2"]
    turns["D2:1"]["facts"][1]["duplicate_of"] = ["D1:2#1"]
    for dia_id, turn in turns.items():
        turn["text_sha1"] = _sha(texts[dia_id])
    return {
        "about": "a test set",
        "conversation": "t",
        "sessions": [1, 2],
        "speakers": ["Ann", "Bob"],
        "session_times_utc": {"1": "2023-05-08T13:56:00Z", "2": "2024-02-01T00:48:00Z"},
        "conventions": {},
        "turns": turns,
    }


def test_session_times_are_read_as_utc() -> None:
    assert session_time_utc("1:56 pm on 8 May, 2023") == "2023-05-08T13:56:00Z"
    assert session_time_utc("12:48 am on 1 February, 2023") == "2023-02-01T00:48:00Z"


def test_a_sound_set_passes_and_is_counted() -> None:
    gold = _gold()
    assert check(CONVERSATION, gold) == []
    c = counts(gold)
    assert c["turns"] == 4 and c["turns_per_session"] == {"1": 3, "2": 1}
    assert c["kinds"] == {"greeting": 1, "minor": 1, "substantive": 2}
    assert c["entity_mentions"] == 9 and c["entity_mentions_by_type"] == {"Person": 5, "Location": 4}
    assert (c["distinct_names"], c["distinct_entities"], c["aliases"]) == (5, 4, [("Acme Corp", "Acme")])
    assert (c["facts"], c["restated"], c["distinct_facts"]) == (4, 1, 3)
    assert c["contradictions"] == {"D2:1#1": ["D1:2#2"]}
    assert (c["valid_at_session_time"], c["valid_at_stated"], c["valid_at_null"]) == (2, 2, 0)


def _turn(gold: dict, dia_id: str) -> dict:
    return gold["turns"][dia_id]  # type: ignore[no-any-return]


BROKEN: dict[str, tuple[Callable[[dict], Any], str, str]] = {
    "changed text": (lambda g: _turn(g, "D1:2").update(text_sha1="0" * 12), "D1:2", "text_sha1"),
    "wrong speaker": (lambda g: _turn(g, "D1:3").update(speaker="Bob"), "D1:3", "speaker"),
    "missing turn": (lambda g: g["turns"].pop("D1:3"), "file", "turns"),
    "session time": (
        lambda g: g["session_times_utc"].update({"2": "2024-02-01T12:48:00Z"}),
        "file",
        "session_times_utc",
    ),
    "speaker not first": (lambda g: _turn(g, "D1:3")["entities"].reverse(), "D1:3", "entities[0]"),
    "repeated name": (
        lambda g: _turn(g, "D1:2")["entities"].append({"name": "Oslo", "type": "Location"}),
        "D1:2",
        "entities",
    ),
    "greeting with an entity": (
        lambda g: _turn(g, "D1:1")["entities"].append({"name": "Ann", "type": "Person"}),
        "D1:1",
        "kind",
    ),
    "minor with a fact": (
        lambda g: _turn(g, "D1:3")["facts"].append(
            _fact("D1:3#1", "Ann", "LIKES", "Bob", "Ann likes Bob.", None)
        ),
        "D1:3",
        "facts",
    ),
    "substantive without facts": (lambda g: _turn(g, "D2:1").update(facts=[]), "D2:1", "facts"),
    "endpoint not in the turn": (
        lambda g: _turn(g, "D1:2")["facts"][1].update(target="Acme Corp"),
        "D1:2",
        "facts[1].target",
    ),
    "same endpoints": (
        lambda g: _turn(g, "D1:2")["facts"][1].update(target="Bob"),
        "D1:2",
        "facts[1].target",
    ),
    "relation case": (
        lambda g: _turn(g, "D1:2")["facts"][0].update(relation="livesIn"),
        "D1:2",
        "facts[0].relation",
    ),
    "repeated sentence": (
        lambda g: _turn(g, "D2:1")["facts"][1].update(fact="Bob moved to Oslo last year."),
        "D2:1",
        "facts[1].fact",
    ),
    "bad date": (
        lambda g: _turn(g, "D1:2")["facts"][0].update(valid_at="2022-13-01T00:00:00Z"),
        "D1:2",
        "facts[0].valid_at",
    ),
    "later duplicate_of": (
        lambda g: _turn(g, "D1:2")["facts"][0].update(duplicate_of=["D2:1#2"]),
        "D1:2",
        "facts[0].duplicate_of",
    ),
    "unknown contradicts": (
        lambda g: _turn(g, "D2:1")["facts"][0].update(contradicts=["D1:9#1"]),
        "D2:1",
        "facts[0].contradicts",
    ),
    "alias of an unseen name": (
        lambda g: _turn(g, "D2:1")["duplicates"][0].update(same_as="Acme Inc"),
        "D2:1",
        "duplicates[0].same_as",
    ),
}


@pytest.mark.parametrize("broken", list(BROKEN))
def test_each_broken_rule_is_reported_with_turn_and_field(broken: str) -> None:
    mutate, where, field = BROKEN[broken]
    gold = copy.deepcopy(_gold())
    mutate(gold)
    violations = check(CONVERSATION, gold)
    assert [(v.where, v.field) for v in violations] == [(where, field)], violations


def test_the_command_exits_non_zero_naming_the_turn_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    conversation = tmp_path / "t.json"
    conversation.write_text(json.dumps(CONVERSATION), encoding="utf-8")
    gold = _gold()
    good = tmp_path / "gold.json"
    good.write_text(json.dumps(gold), encoding="utf-8")
    assert main(["--conversation", str(conversation), "--gold", str(good)]) == 0
    out = capsys.readouterr().out
    assert "all checks pass" in out and "contradictions (contradicts): 1" in out and "D2:1#1 -> D1:2#2" in out

    _turn(gold, "D2:1")["facts"][0]["relation"] = "lost job at"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(gold), encoding="utf-8")
    assert main(["--conversation", str(conversation), "--gold", str(bad)]) == 1
    assert "D2:1 facts[0].relation" in capsys.readouterr().err
