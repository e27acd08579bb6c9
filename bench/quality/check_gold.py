"""Check a hand-made gold extraction set against its LoCoMo conversation, and print its counts.

The rules are those of ``bench/data/README.md`` ("Checks done"): the exact ``dia_id``s of the annotated
sessions, in order, with matching speakers and ``text_sha1``; the session times; in each turn the speaker
first and no repeated name; greeting turns empty, minor turns without facts, substantive turns with 2-6
entities and 1-6 facts; fact endpoints that are entities of the turn and differ; SCREAMING_SNAKE_CASE
relations; fact sentences unique across the file; well-formed dates; every ``same_as`` naming an entity
of an earlier turn; every ``duplicate_of`` / ``contradicts`` id an earlier fact.

    python -m bench check_gold --conversation ../shared/datasets/locomo/30.json \
        --gold bench/data/locomo30_s1-3.json

Exits 1 and prints every violation (turn id, field, what is wrong) when a rule is broken.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

TOP_KEYS = ("about", "conversation", "sessions", "speakers", "session_times_utc", "conventions", "turns")
KINDS = ("greeting", "minor", "substantive")
ENTITY_TYPES = ("Person", "Location", "Object", "Topic", "Event")
FACT_KEYS = {"id", "source", "target", "relation", "fact", "valid_at", "invalid_at"}
FACT_LINKS = ("duplicate_of", "contradicts")
RELATION = re.compile(r"^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*$")
DATE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")
SUBSTANTIVE_ENTITIES = (2, 6)
SUBSTANTIVE_FACTS = (1, 6)


@dataclass(frozen=True)
class Violation:
    where: str
    """The turn's ``dia_id``, or ``file`` for the top level."""
    field: str
    message: str

    def __str__(self) -> str:
        return f"{self.where} {self.field}: {self.message}"


def sha1_12(text: str) -> str:
    """First 12 hex digits of the SHA-1 of the text (UTF-8, exactly as stored)."""
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:12]


def session_time_utc(stamp: str) -> str:
    """LoCoMo's ``session_N_date_time`` ("1:56 pm on 8 May, 2023") read as UTC, in ISO 8601."""
    when = datetime.strptime(stamp.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def _parse_date(value: str) -> datetime | None:
    if not DATE.match(value):
        return None
    try:
        return datetime.strptime(value, "%Y-%m-%dT%H:%M:%SZ")
    except ValueError:
        return None


@dataclass
class _Seen:
    """What earlier turns established, for the rules that look back."""

    names: set[str] = field(default_factory=set)
    aliases: set[str] = field(default_factory=set)
    facts: set[str] = field(default_factory=set)
    sentences: dict[str, str] = field(default_factory=dict)


class _Report:
    def __init__(self) -> None:
        self.violations: list[Violation] = []

    def __call__(self, where: str, what: str, message: str) -> None:
        self.violations.append(Violation(where, what, message))


def check(conversation: dict[str, Any], gold: dict[str, Any]) -> list[Violation]:
    """Every broken rule, in file order (empty when the gold set is sound)."""
    bad = _Report()
    expected_turns = _check_file(conversation, gold, bad)
    if expected_turns is None:
        return bad.violations
    speakers = gold["speakers"]
    seen = _Seen()
    for raw in expected_turns:
        turn = gold["turns"].get(raw["dia_id"])
        if isinstance(turn, dict):
            _check_turn(raw, turn, speakers, seen, bad)
    return bad.violations


def _check_file(
    conversation: dict[str, Any], gold: dict[str, Any], bad: _Report
) -> list[dict[str, Any]] | None:
    """The top level; returns the conversation's turns of the annotated sessions (None if unusable)."""
    missing = [k for k in TOP_KEYS if k not in gold]
    if missing:
        bad("file", "keys", f"missing {missing}")
        return None
    speakers = [conversation.get("speaker_a"), conversation.get("speaker_b")]
    if gold["speakers"] != speakers:
        bad("file", "speakers", f"{gold['speakers']} but the conversation has {speakers}")
    sessions = gold["sessions"]
    if not isinstance(sessions, list) or not sessions or not all(isinstance(s, int) for s in sessions):
        bad("file", "sessions", f"not a list of session numbers: {sessions!r}")
        return None
    expected: list[dict[str, Any]] = []
    times: dict[str, str] = {}
    for session in sessions:
        if f"session_{session}" not in conversation:
            bad("file", "sessions", f"the conversation has no session {session}")
            return None
        expected.extend(conversation[f"session_{session}"])
        times[str(session)] = session_time_utc(conversation[f"session_{session}_date_time"])
    if gold["session_times_utc"] != times:
        bad("file", "session_times_utc", f"{gold['session_times_utc']} but the conversation gives {times}")
    wanted = [t["dia_id"] for t in expected]
    if list(gold["turns"]) != wanted:
        extra = [i for i in gold["turns"] if i not in wanted]
        lacking = [i for i in wanted if i not in gold["turns"]]
        detail = f"extra {extra}, missing {lacking}" if extra or lacking else "not in conversation order"
        bad("file", "turns", f"dia_ids differ from sessions {sessions}: {detail}")
    return expected


def _check_turn(
    raw: dict[str, Any], turn: dict[str, Any], speakers: list[str], seen: _Seen, bad: _Report
) -> None:
    dia_id = raw["dia_id"]
    if turn.get("speaker") != raw["speaker"]:
        bad(dia_id, "speaker", f"{turn.get('speaker')!r} but the conversation has {raw['speaker']!r}")
    if turn.get("text_sha1") != sha1_12(raw["text"]):
        bad(dia_id, "text_sha1", f"{turn.get('text_sha1')!r}, the text gives {sha1_12(raw['text'])!r}")
    names = _check_entities(dia_id, raw["speaker"], turn.get("entities", []), bad)
    _check_kind(dia_id, turn, names, speakers, bad)
    _check_duplicates(dia_id, turn.get("duplicates", []), names, seen, bad)
    for i, fact in enumerate(turn.get("facts", [])):
        _check_fact(dia_id, i, fact, names, seen, bad)
    seen.names.update(n for n in names if isinstance(n, str))


def _check_entities(dia_id: str, speaker: str, entities: list[Any], bad: _Report) -> list[Any]:
    names = [e.get("name") if isinstance(e, dict) else None for e in entities]
    for i, entity in enumerate(entities):
        if not isinstance(entity, dict) or set(entity) != {"name", "type"}:
            bad(dia_id, f"entities[{i}]", f"not a {{name, type}} entry: {entity!r}")
        elif not isinstance(entity["name"], str) or not entity["name"]:
            bad(dia_id, f"entities[{i}].name", f"{entity['name']!r} is not a name")
        elif entity["type"] not in ENTITY_TYPES:
            bad(dia_id, f"entities[{i}].type", f"{entity['type']!r} is not one of {ENTITY_TYPES}")
    for name, n in Counter(names).items():
        if n > 1:
            bad(dia_id, "entities", f"{name!r} appears {n} times")
    if names and names[0] != speaker:
        bad(dia_id, "entities[0]", f"{names[0]!r}, the speaker {speaker!r} must come first")
    return names


def _check_kind(
    dia_id: str, turn: dict[str, Any], names: list[Any], speakers: list[str], bad: _Report
) -> None:
    kind, facts = turn.get("kind"), turn.get("facts", [])
    if kind not in KINDS:
        bad(dia_id, "kind", f"{kind!r} is not one of {KINDS}")
    elif kind == "greeting" and (names or facts or turn.get("duplicates")):
        bad(dia_id, "kind", "a greeting turn has no entities, facts or duplicates")
    elif kind == "minor":
        if facts:
            bad(dia_id, "facts", "a minor turn has no facts")
        if not names or len(names) > 2 or (len(names) == 2 and names[1] not in speakers):
            bad(dia_id, "entities", "a minor turn names the speaker, plus the addressee when named")
    elif kind == "substantive":
        lo, hi = SUBSTANTIVE_ENTITIES
        if not lo <= len(names) <= hi:
            bad(dia_id, "entities", f"{len(names)} entities, a substantive turn has {lo}-{hi}")
        lo, hi = SUBSTANTIVE_FACTS
        if not lo <= len(facts) <= hi:
            bad(dia_id, "facts", f"{len(facts)} facts, a substantive turn has {lo}-{hi}")


def _check_duplicates(
    dia_id: str, duplicates: list[Any], names: list[Any], seen: _Seen, bad: _Report
) -> None:
    for i, dup in enumerate(duplicates):
        where = f"duplicates[{i}]"
        if not isinstance(dup, dict) or set(dup) != {"name", "same_as"}:
            bad(dia_id, where, f"not a {{name, same_as}} entry: {dup!r}")
            continue
        if dup["name"] not in names:
            bad(dia_id, f"{where}.name", f"{dup['name']!r} is not an entity of the turn")
        if dup["name"] in seen.names or dup["name"] in seen.aliases:
            bad(dia_id, f"{where}.name", f"{dup['name']!r} was already named earlier")
        if dup["same_as"] not in seen.names or dup["same_as"] == dup["name"]:
            bad(dia_id, f"{where}.same_as", f"{dup['same_as']!r} is not an entity of an earlier turn")
        seen.aliases.add(dup["name"])


def _check_fact(dia_id: str, i: int, fact: Any, names: list[Any], seen: _Seen, bad: _Report) -> None:
    where = f"facts[{i}]"
    if not isinstance(fact, dict) or not FACT_KEYS <= set(fact) or set(fact) - FACT_KEYS - set(FACT_LINKS):
        keys = sorted(fact) if isinstance(fact, dict) else fact
        bad(dia_id, where, f"keys {keys}: needs {sorted(FACT_KEYS)}, optionally {FACT_LINKS}")
        return
    fid = fact["id"]
    if fid != f"{dia_id}#{i + 1}":
        bad(dia_id, f"{where}.id", f"{fid!r}, expected {dia_id}#{i + 1}")
    for end in ("source", "target"):
        if fact[end] not in names:
            bad(dia_id, f"{where}.{end}", f"{fact[end]!r} is not an entity of the turn")
    if fact["source"] == fact["target"]:
        bad(dia_id, f"{where}.target", "source and target are the same entity")
    if not isinstance(fact["relation"], str) or not RELATION.match(fact["relation"]):
        bad(dia_id, f"{where}.relation", f"{fact['relation']!r} is not SCREAMING_SNAKE_CASE")
    text = fact["fact"]
    if not isinstance(text, str) or not text.strip():
        bad(dia_id, f"{where}.fact", "empty sentence")
    elif text in seen.sentences:
        bad(dia_id, f"{where}.fact", f"same sentence as {seen.sentences[text]}")
    else:
        seen.sentences[text] = str(fid)
    _check_dates(dia_id, where, fact, bad)
    for link in FACT_LINKS:
        if link not in fact:
            continue
        ids = fact[link]
        if not isinstance(ids, list) or not ids or len(set(ids)) != len(ids):
            bad(dia_id, f"{where}.{link}", f"not a non-empty list of distinct ids: {ids!r}")
            continue
        for ref in ids:
            if ref not in seen.facts:
                bad(dia_id, f"{where}.{link}", f"{ref!r} is not an earlier fact")
    both = set(fact.get("duplicate_of", [])) & set(fact.get("contradicts", []))
    if both:
        bad(dia_id, where, f"{sorted(both)} both restated and contradicted")
    if isinstance(fid, str):
        seen.facts.add(fid)


def _check_dates(dia_id: str, where: str, fact: dict[str, Any], bad: _Report) -> None:
    dates: dict[str, datetime] = {}
    for key in ("valid_at", "invalid_at"):
        value = fact[key]
        parsed = _parse_date(value) if isinstance(value, str) else None
        if value is not None and parsed is None:
            bad(dia_id, f"{where}.{key}", f"{value!r} is not YYYY-MM-DDTHH:MM:SSZ or null")
        elif parsed is not None:
            dates[key] = parsed
    if len(dates) == 2 and dates["valid_at"] > dates["invalid_at"]:
        bad(dia_id, f"{where}.invalid_at", "before valid_at")


def counts(gold: dict[str, Any]) -> dict[str, Any]:
    """The figures of the README's counts table."""
    turns: dict[str, Any] = gold["turns"]

    def session(dia_id: str) -> str:
        return dia_id[1:].split(":")[0]

    facts = [(session(d), f) for d, t in turns.items() for f in t["facts"]]
    aliases = [(d["name"], d["same_as"]) for t in turns.values() for d in t.get("duplicates", [])]
    mentions = Counter(e["type"] for t in turns.values() for e in t["entities"])
    names = {e["name"] for t in turns.values() for e in t["entities"]}
    at_session = [f for s, f in facts if f["valid_at"] == gold["session_times_utc"][s]]
    return {
        "turns": len(turns),
        "turns_per_session": dict(Counter(session(d) for d in turns)),
        "kinds": {k: sum(t["kind"] == k for t in turns.values()) for k in KINDS},
        "entity_mentions": sum(mentions.values()),
        "entity_mentions_by_type": dict(mentions.most_common()),
        "distinct_names": len(names),
        "distinct_entities": len(names) - len(aliases),
        "aliases": aliases,
        "facts": len(facts),
        "facts_per_session": dict(Counter(s for s, _ in facts)),
        "restated": sum("duplicate_of" in f for _, f in facts),
        "distinct_facts": sum("duplicate_of" not in f for _, f in facts),
        "contradictions": {f["id"]: f["contradicts"] for _, f in facts if "contradicts" in f},
        "valid_at_null": sum(f["valid_at"] is None for _, f in facts),
        "both_dates_null": sum(f["valid_at"] is None and f["invalid_at"] is None for _, f in facts),
        "only_invalid_at": sum(f["valid_at"] is None and f["invalid_at"] is not None for _, f in facts),
        "invalid_at_set": sum(f["invalid_at"] is not None for _, f in facts),
        "valid_at_stated": sum(f["valid_at"] is not None for _, f in facts) - len(at_session),
        "valid_at_session_time": len(at_session),
    }


def format_counts(c: dict[str, Any]) -> str:
    per = ", ".join(f"session {s}: {n}" for s, n in c["turns_per_session"].items())
    kinds = " / ".join(str(c["kinds"][k]) for k in ("substantive", "minor", "greeting"))
    types = ", ".join(f"{t} {n}" for t, n in c["entity_mentions_by_type"].items())
    facts = ", ".join(f"session {s}: {n}" for s, n in c["facts_per_session"].items())
    lines = [
        f"turns: {c['turns']} ({per})",
        f"substantive / minor / greeting: {kinds}",
        f"entity mentions: {c['entity_mentions']} ({types})",
        f"distinct entity names: {c['distinct_names']}",
        f"distinct entities: {c['distinct_entities']} (after {len(c['aliases'])} aliases)",
        f"aliases: {len(c['aliases'])}: " + ", ".join(f"{a} -> {b}" for a, b in c["aliases"]),
        f"facts: {c['facts']} ({facts})",
        f"restated facts (duplicate_of): {c['restated']}, so {c['distinct_facts']} distinct facts",
        f"contradictions (contradicts): {len(c['contradictions'])}"
        + "".join(f"\n  {fid} -> {', '.join(ids)}" for fid, ids in c["contradictions"].items()),
        f"undated facts (valid_at null): {c['valid_at_null']} ({c['both_dates_null']} with both dates null, "
        f"{c['only_invalid_at']} with only invalid_at)",
        f"facts with invalid_at: {c['invalid_at_set']}",
        f"valid_at from a stated or implied time: {c['valid_at_stated']}",
        f"valid_at = session time: {c['valid_at_session_time']}",
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--conversation", type=Path, required=True, help="the LoCoMo conversation file")
    parser.add_argument("--gold", type=Path, required=True, help="the gold extraction set")
    parser.add_argument("--json", action="store_true", help="print the counts as JSON")
    args = parser.parse_args(argv)
    conversation = json.loads(args.conversation.read_text(encoding="utf-8"))
    gold = json.loads(args.gold.read_text(encoding="utf-8"))
    violations = check(conversation, gold)
    if violations:
        for v in violations:
            print(f"{args.gold.name}: {v}", file=sys.stderr)
        print(f"{len(violations)} violation(s)", file=sys.stderr)
        return 1
    c = counts(gold)
    print(json.dumps(c, indent=1) if args.json else f"{args.gold.name}: all checks pass\n{format_counts(c)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
