"""What the QA bench (``locomo_qa.py``) builds before it asks: the graph of each conversation (ingested
once, resumed, its cost summed from the stored reports), the graphs of the gold extraction sets, and
Mem0's store (its own ``add`` over the first sessions)."""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from bench.quality.qa_locomo import GROUP, Conversation
from bench.quality.qa_mem0 import Mem0Memory, Mem0Settings, Turn, adding_record
from bench.quality.qa_rows import Question
from bench.shared.gold import GoldScript, load_turns, set_name
from bench.shared.paths import DATA
from epigraph import KnowledgeGraph
from epigraph.ask.observations import day
from epigraph.config import Settings
from epigraph.ingestion.ingestor import Ingestor
from epigraph.local_model import API_KEY as LOCAL_API_KEY
from epigraph.pipeline.options import IngestOptions
from epigraph.prompts.protocol import LLM
from epigraph.testing import ScriptedLLM


def mem0_of(args: argparse.Namespace, llm: LLM, settings: Settings) -> Mem0Memory | None:
    """The mem0 row's memory (``--mem0-dir``), on the graph's model server unless told otherwise (its
    key: the graph's, the local model's, or none)."""
    if not args.mem0_dir:
        return None
    key = settings.llm_api_key.get_secret_value() if settings.llm_api_key else None
    if settings.llm_local and not args.scripted:
        key = LOCAL_API_KEY
    base_url = args.mem0_base_url or getattr(llm, "base_url", None)
    model = args.mem0_model or getattr(llm, "model", None)
    if not base_url or not model:
        raise SystemExit(
            "--mem0-dir: the graph's model has no base URL; give --mem0-base-url and --mem0-model"
        )
    chosen = Mem0Settings(
        args.mem0_dir, str(base_url), str(model), max_tokens=args.mem0_max_tokens, top_k=args.mem0_top_k,
        api_key=key or "none",
    )  # fmt: skip
    return Mem0Memory(chosen)


def mem0_turn_names(conversation: Conversation, sessions: int) -> set[str]:
    """The turns (``D3:12``) of the first ``sessions`` sessions: what Mem0 is given."""
    return {str(t.name) for t in conversation.turns if int(str(t.name)[1:].split(":")[0]) <= sessions}


async def add_to_mem0(
    mem0: Mem0Memory, conversations: Sequence[Conversation], sessions: int
) -> dict[str, float]:
    """Mem0's own ``add`` over the turns of the first ``sessions`` sessions (those not added yet)."""
    turns = [
        Turn(str(t.episode_id), c.group, t.speaker or "someone", t.content, day(t.reference_time))
        for c in conversations
        for t in c.turns
        if t.name in mem0_turn_names(c, sessions)
    ]
    started = time.perf_counter()
    fresh = await asyncio.to_thread(mem0.add, turns)
    record = adding_record(mem0.added(), {t.key for t in turns})
    return {
        **record,
        "mem0.add.this_run": fresh,
        "mem0.add.this_run_s": round(time.perf_counter() - started, 2),
    }


# -- building ----------------------------------------------------------------------------------------


async def ingest(kg: KnowledgeGraph, conversation: Conversation) -> dict[str, float]:
    """Ingest the turns the store does not hold yet (done ones are skipped by the queue: their ids are
    deterministic, so an interrupted run continues where it stopped and nothing is wiped)."""
    stored = await kg.group(conversation.group).episodes(limit=len(conversation.turns) + 1000)
    done = {e.name for e in stored if e.status.value == "done"}
    if all(t.name in done for t in conversation.turns):
        return {"ingested_episodes": 0}
    started = time.perf_counter()
    results = await kg.add_episodes(conversation.turns)
    fresh = [r for r in results if not r.skipped]
    return {
        "ingested_episodes": len(fresh),
        "ingest_failed": sum(not r.ok for r in fresh),
        "ingest_s": round(time.perf_counter() - started, 2),
    }


async def ingestion_record(kg: KnowledgeGraph, conversations: Sequence[Conversation]) -> dict[str, float]:
    """What the graph's ingestion cost in all, summed over every run that wrote to the store (resumed
    runs included), from the reports the store keeps with each episode: ``graph.ingest.*``."""
    turns = sum(len(c.turns) for c in conversations)
    episodes = []
    for c in conversations:
        read = {t.name for t in c.turns}  # the sessions this run reads, not a later run's
        stored = await kg.group(c.group).episodes(limit=len(c.turns) + 1000)
        episodes += [e for e in stored if e.name in read]
    done = [e for e in episodes if e.status.value == "done"]
    seconds = sum(sum(e.report.stage_ms.values()) for e in done) / 1000
    per = max(len(done), 1)
    return {
        "graph.ingest.turns": turns,
        "graph.ingest.episodes_done": len(done),
        "graph.ingest.episodes_failed": sum(e.status.value == "failed" for e in episodes),
        "graph.ingest.seconds_total": round(seconds, 3),
        "graph.ingest.seconds_per_turn": round(seconds / per, 3),
        "graph.ingest.calls_per_turn": round(sum(e.report.llm_calls for e in done) / per, 2),
        "graph.ingest.input_tokens_per_turn": round(sum(e.report.input_tokens for e in done) / per, 1),
        "graph.ingest.output_tokens_per_turn": round(sum(e.report.output_tokens for e in done) / per, 1),
    }


@dataclass
class GoldGraph:
    name: str
    conversation: Conversation
    group: str
    questions: list[Question]
    turns: int


async def gold_graph(
    kg: KnowledgeGraph,
    gold_set: tuple[Path, dict[str, Any]],
    conversation: Conversation,
    asked: list[Question],
) -> GoldGraph | None:
    """The graph of a gold extraction set, built (once per store) by answering every ingestion prompt
    from the set; None when the set is not about ``conversation`` or covers sessions it does not ask."""
    path, gold = gold_set
    if str(gold["conversation"]) != conversation.name:
        return None
    sessions = {int(s) for s in gold["sessions"]}
    covered = {t.name for t in conversation.turns if int(str(t.name)[1:].split(":")[0]) in sessions}
    if len(covered) != len(gold["turns"]):
        return None  # the bench did not read every session the set covers
    name = set_name(gold)
    group = f"{GROUP}-gold-{name}"
    turns = [
        replace(t, group_id=group, episode_id=f"gold:{t.episode_id}")
        for t in conversation.turns
        if t.name in covered
    ]
    stored = await kg.group(group).episodes(limit=len(turns) + 1000)
    if len({e.name for e in stored if e.status.value == "done"}) < len(turns):
        script = GoldScript(gold, load_turns(conversation.path, gold), latency=0.0, chunk_ms=0.0)
        ingestor = Ingestor(kg.store, ScriptedLLM(script), kg.embedder, IngestOptions())
        results = await ingestor.add_episodes(turns)
        if failed := [r for r in results if not r.ok]:
            raise SystemExit(f"{path.name}: {len(failed)} gold turns failed to ingest: {failed[0].error}")
    questions = [q for q in asked if q.conversation == conversation.name and set(q.evidence) <= covered]
    return GoldGraph(name, conversation, group, questions, len(turns))


def gold_sets(
    args: argparse.Namespace, conversations: list[Conversation]
) -> list[tuple[Path, dict[str, Any]]]:
    """``--gold`` as given; by default, for each conversation, the set of ``bench/data`` that covers
    the most of the sessions read."""
    if args.no_gold:
        return []
    if args.gold:
        return [(p, json.loads(p.read_text(encoding="utf-8"))) for p in args.gold]
    out = []
    for c in conversations:
        sets = [
            (p, json.loads(p.read_text(encoding="utf-8")))
            for p in sorted(DATA.glob(f"locomo{c.name}_*.json"))
        ]
        usable = [(len(g["turns"]), str(p), (p, g)) for p, g in sets if len(g["turns"]) <= len(c.turns)]
        if usable:
            out.append(max(usable)[2])
    return out
