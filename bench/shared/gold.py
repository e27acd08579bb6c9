"""Gold extraction sets (LoCoMo turns annotated by hand): loading, a scripted LLM that answers from
them, what the pipeline showed that LLM, and the built graph compared with the gold graph.

Shared by ``ingest.py`` (scripted answers) and ``live.py`` (a real model).

A gold set (``bench/data/README.md``) lists per turn its entities, facts, entity aliases
(``duplicates``), restated facts (``duplicate_of``) and updated facts (``contradicts``). A restatement
is never stored as a fact of its own (it extends the first statement's provenance), so every gold fact
is compared through its *canonical* fact: the first statement of the information.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from epigraph.graph.model import Fact, normalize_name
from epigraph.graph.store import EVERYTHING, FactFilter, GraphStore
from epigraph.pipeline.dating import without_iso_dates
from epigraph.prompts.extraction import ExtractionInput
from epigraph.prompts.fact_lines import read_fact, time_words, write_fact
from epigraph.prompts.grammar import NONE
from epigraph.prompts.protocol import ChatRequest
from epigraph.prompts.resolve_episode import verdict_line
from epigraph.testing import ScriptedReply


@dataclass(frozen=True)
class Turn:
    dia_id: str
    speaker: str
    text: str
    reference_time: str


@dataclass(frozen=True)
class GoldSet:
    name: str
    """``set_name``: the prefix of the set's metrics and its group id."""
    gold: dict[str, Any]
    turns: list[Turn]


def load_turns(conversation: Path, gold: dict[str, Any]) -> list[Turn]:
    data = json.loads(conversation.read_text(encoding="utf-8"))
    turns = []
    for session in gold["sessions"]:
        when = gold["session_times_utc"][str(session)]
        for raw in data[f"session_{session}"]:
            expected = gold["turns"][raw["dia_id"]]["text_sha1"]
            if hashlib.sha1(raw["text"].encode("utf-8")).hexdigest()[:12] != expected:
                raise SystemExit(f"{raw['dia_id']}: text differs from the one the gold was written for")
            turns.append(Turn(raw["dia_id"], raw["speaker"], raw["text"], when))
    return turns


def load_sets(golds: Sequence[Path], conversations: Sequence[Path]) -> list[GoldSet]:
    """Pair each gold file with its conversation: given in the same order, or one folder holding
    ``<conversation>.json`` for every set."""
    if len(conversations) == 1 and conversations[0].is_dir():
        folder = conversations[0]
        pairs = []
        for path in golds:
            gold = json.loads(path.read_text(encoding="utf-8"))
            pairs.append((path, folder / f"{gold['conversation']}.json"))
    elif len(conversations) == len(golds):
        pairs = list(zip(golds, conversations, strict=True))
    else:
        raise SystemExit(
            f"{len(golds)} --gold file(s) but {len(conversations)} --conversation(s): give one conversation "
            "per gold set, in the same order, or one folder holding <conversation>.json"
        )
    sets = []
    for gold_path, conversation in pairs:
        gold = as_stored(json.loads(gold_path.read_text(encoding="utf-8")))
        sets.append(GoldSet(set_name(gold), gold, load_turns(conversation, gold)))
    return sets


def gold_line(fact: dict[str, Any]) -> str:
    """A gold fact as the extraction line that states it (the scripted models' answer)."""
    when = time_words(fact["valid_at"], fact["invalid_at"])
    return write_fact(fact["fact"], fact["source"], fact["target"], fact["relation"], when)


def as_stored(gold: dict[str, Any]) -> dict[str, Any]:
    """The gold set with each fact's sentence as the pipeline stores it from its line (the gold lines
    keep the sentence, but for a fact whose sentence does not name both ends: 1 of 129 in LoCoMo 26),
    so built and gold facts are compared by the text the graph holds."""
    for turn in gold["turns"].values():
        for fact in turn["facts"]:
            fact["fact"] = stored_sentence(fact)
    return gold


def stored_sentence(fact: dict[str, Any]) -> str:
    """The sentence the pipeline stores for a gold fact's line (the same for a set ``as_stored``)."""
    return without_iso_dates(read_fact(gold_line(fact)).sentence)


def set_name(gold: dict[str, Any]) -> str:
    """``locomo<conversation>`` for sessions 1-3 (DESIGN.md's keys), else with its sessions:
    ``locomo30_s1-6``."""
    sessions = [int(x) for x in gold["sessions"]]
    name = f"locomo{gold['conversation']}"
    return name if sessions == [1, 2, 3] else f"{name}_s{sessions[0]}-{sessions[-1]}"


def canonical_ids(gold: dict[str, Any]) -> dict[str, str]:
    """Fact id -> id of the first statement of the same information (itself when it restates nothing)."""
    facts = {f["id"]: f for t in gold["turns"].values() for f in t["facts"]}
    out: dict[str, str] = {}
    for fid, fact in facts.items():  # in conversation order: earlier facts are settled first
        earlier = [out.get(i, i) for i in fact.get("duplicate_of", [])]
        out[fid] = min(earlier, key=list(facts).index) if earlier else fid
    return out


@dataclass
class Shown:
    """What the pipeline offered the model: candidate names per entity name, candidate sentences per
    new fact sentence."""

    entities: dict[str, set[str]] = field(default_factory=dict)
    facts: dict[str, set[str]] = field(default_factory=dict)


class GoldScript:
    """Answers every prompt of the pipeline from the gold annotations of the turn being ingested, and
    records what it was shown (``shown``)."""

    def __init__(self, gold: dict[str, Any], turns: Sequence[Turn], latency: float, chunk_ms: float) -> None:
        self.turns = gold["turns"]
        self.by_content = {f"{t.speaker}: {t.text}": t.dia_id for t in turns}
        self.same_as = {
            normalize_name(d["name"]): d["same_as"]
            for t in self.turns.values()
            for d in t.get("duplicates", [])
        }
        self.facts = {f["id"]: f for t in self.turns.values() for f in t["facts"]}
        self.by_text = {stored_sentence(f): f for f in self.facts.values()}  # what resolve is asked about
        self.latency, self.chunk_s = latency, chunk_ms / 1000
        self.shown = Shown()

    def __call__(self, request: ChatRequest) -> ScriptedReply:
        answer = getattr(self, request.prompt_name)(request.variables)
        return ScriptedReply(answer, delay_s=self.latency, chunk_size=64, chunk_delay_s=self.chunk_s)

    def _turn(self, variables: Any) -> dict[str, Any]:
        content = ExtractionInput.model_validate(variables).content()
        return self.turns[self.by_content[content]]  # type: ignore[no-any-return]

    @staticmethod
    def _fact_lines(turn: dict[str, Any]) -> list[str]:
        return [
            write_fact(
                f["fact"], f["source"], f["target"], f["relation"], time_words(f["valid_at"], f["invalid_at"])
            )
            for f in turn["facts"]
        ]

    def extract_entities(self, v: Any) -> str:
        return "; ".join(e["name"] for e in self._turn(v)["entities"]) or NONE

    def extract_facts(self, v: Any) -> str:
        return "\n".join(self._fact_lines(self._turn(v))) or NONE

    def extract_combined(self, v: Any) -> str:
        """The gold facts' lines, then a bare ``[name]`` line for each gold entity no fact names."""
        turn = self._turn(v)
        named = {normalize_name(n) for f in turn["facts"] for n in (f["source"], f["target"])}
        alone = [f"[{e['name']}]" for e in turn["entities"] if normalize_name(e["name"]) not in named]
        return "\n".join(self._fact_lines(turn) + alone) or NONE

    def resolve_episode(self, v: Any) -> str:
        lines = [f"{q['id']} {self._entity(q) or 'new'}" for q in v["entities"]]
        return "\n".join(lines + self._facts(v["facts"]))

    def _entity(self, question: Any) -> str | None:
        name = question["name"]
        self.shown.entities.setdefault(normalize_name(name), set()).update(
            normalize_name(c["name"]) for c in question["candidates"]
        )
        wanted = self.same_as.get(normalize_name(name))
        return next(
            (
                c["id"]
                for c in question["candidates"]
                if wanted and normalize_name(c["name"]) == normalize_name(wanted)
            ),
            None,
        )

    def _facts(self, asked: Any) -> list[str]:
        lines = []
        for item in asked:
            self.shown.facts.setdefault(item["fact"], set()).update(c["fact"] for c in item["candidates"])
            gold = self.by_text[item["fact"]]
            texts = {
                k: {stored_sentence(self.facts[i]) for i in gold.get(k, [])}
                for k in ("duplicate_of", "contradicts")
            }
            picked = {k: [c["id"] for c in item["candidates"] if c["fact"] in t] for k, t in texts.items()}
            lines.append(verdict_line(item["id"], picked["duplicate_of"], picked["contradicts"]))
        return lines

    def date_fact(self, v: Any) -> str:
        return json.dumps(
            {"dates": [{"id": f["id"], "valid_at": None, "invalid_at": None} for f in v["facts"]]}
        )

    def summarize_entities(self, v: Any) -> str:
        out = [{"id": e["id"], "summary": " ".join(e["facts"][-2:])} for e in v["entities"]]
        return json.dumps({"summaries": out})


async def graph_metrics(store: GraphStore, group: str, gold: dict[str, Any]) -> dict[str, float]:
    """The built graph against the gold graph."""
    turns = gold["turns"].values()
    aliases = [d for t in turns for d in t.get("duplicates", [])]
    names = {normalize_name(e["name"]) for t in turns for e in t["entities"]}
    facts = [f for t in turns for f in t["facts"]]
    stats = await store.stats(group)
    merged = len(await merged_aliases(store, group, gold))
    every = await store.facts_around(
        group, await _entity_ids(store, group, list(names)), FactFilter(time=EVERYTHING), limit=100_000
    )
    by_text = {f.text: f for f in every}
    expected = contradiction_pairs(gold)
    canonical = canonical_ids(gold)
    ids = {f["id"]: f for f in facts}

    def stored(fid: str) -> Fact | None:
        return by_text.get(ids[canonical[fid]]["fact"])

    applied = sum(
        1
        for new, old in expected
        if (was := stored(old)) is not None
        and (now := stored(new)) is not None
        and was.invalidated_by is not None
        and was.invalidated_by.fact_uuid == now.uuid
    )
    retired = sum(1 for f in every if f.invalidated_by is not None)
    return {
        "entities_expected": len(names) - len(aliases),
        "entities_built": stats.entities,
        "aliases_expected": len(aliases),
        "aliases_merged": merged,
        "facts_expected": len(facts) - sum(1 for f in facts if f.get("duplicate_of")),
        "facts_built": stats.facts,
        "contradictions_expected": len(expected),
        "contradictions_applied": applied,
        "invalidations_spurious": retired - applied,
    }


def contradiction_pairs(gold: dict[str, Any]) -> list[tuple[str, str]]:
    """(new fact id, earlier fact id) for every ``contradicts`` link, once per pair of canonical facts
    (a restatement is stored as its first statement, so two links to restatements of one fact count
    once)."""
    canonical = canonical_ids(gold)
    pairs: dict[tuple[str, str], tuple[str, str]] = {}
    for turn in gold["turns"].values():
        for fact in turn["facts"]:
            for old in fact.get("contradicts", []):
                pairs.setdefault((canonical[fact["id"]], canonical[old]), (fact["id"], old))
    return list(pairs.values())


def candidate_recall(gold: dict[str, Any], shown: Shown, merged_names: Iterable[str]) -> dict[str, float]:
    """For every gold contradiction, restatement and alias: was the right earlier fact or entity among
    the candidates shown to the model (an alias merged without a model counts as found)?"""
    facts = {f["id"]: f for t in gold["turns"].values() for f in t["facts"]}
    canonical = canonical_ids(gold)

    def seen(new_id: str, old_id: str) -> bool:
        offered = shown.facts.get(facts[new_id]["fact"], set())
        return facts[canonical[old_id]]["fact"] in offered

    contradictions = contradiction_pairs(gold)
    restated = [(f["id"], canonical[f["id"]]) for f in facts.values() if f.get("duplicate_of")]
    aliases = [d for t in gold["turns"].values() for d in t.get("duplicates", [])]
    merged = set(merged_names)
    alias_hits = sum(
        1
        for d in aliases
        if d["name"] in merged
        or normalize_name(d["same_as"]) in shown.entities.get(normalize_name(d["name"]), set())
    )
    return {
        "contradiction_candidate_recall": _share(
            sum(seen(n, o) for n, o in contradictions), len(contradictions)
        ),
        "duplicate_candidate_recall": _share(sum(seen(n, o) for n, o in restated), len(restated)),
        "alias_candidate_recall": _share(alias_hits, len(aliases)),
    }


async def merged_aliases(store: GraphStore, group: str, gold: dict[str, Any]) -> list[str]:
    aliases = [d for t in gold["turns"].values() for d in t.get("duplicates", [])]
    found = await store.entities_by_names(
        group, [d["name"] for d in aliases] + [d["same_as"] for d in aliases]
    )
    return [
        d["name"]
        for d in aliases
        if found[d["name"]]
        and found[d["same_as"]]
        and found[d["name"]][0].uuid == found[d["same_as"]][0].uuid
    ]


def _share(hits: int, total: int) -> float:
    return round(hits / total, 4) if total else 1.0


async def _entity_ids(store: GraphStore, group: str, names: list[str]) -> list[str]:
    found = await store.entities_by_names(group, names)
    return sorted({e.uuid for matches in found.values() for e in matches})
