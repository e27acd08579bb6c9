"""Question answering on LoCoMo: KnowledgeGraph.ask against two baselines, graded by an LLM judge.

Ingests a LoCoMo conversation (or reuses a stored graph: ``--db PATH`` ingests into the file once, and
later runs find its episodes there), asks every question of categories 1-4 three ways, and grades each
answer with the generous CORRECT/WRONG "J" judge of the Mem0 and Zep papers (``qa_judge`` prompt):

- ``graph``: ``kg.ask`` (the bounded agent: fact search, entity views, episodes, cited answer);
- ``full_context``: the whole (ingested) conversation in the answering prompt;
- ``episodes``: the top 10 episodes of a hybrid episode search, and nothing else.

All three answer with the same ``ask_answer`` prompt. Per mode it reports J overall and per category,
answer tokens (of the answer text) and context tokens (what the answering call was shown) per question,
and latency p50/p95; prints a table and writes ``bench/results/qa.json`` (DESIGN.md section 9)::

    EPIGRAPH_LLM_BASE_URL=... EPIGRAPH_LLM_MODEL=... python bench/locomo_qa.py \\
        --conversation ../shared/datasets/locomo/26.json --sessions 3 [--questions 50] [--db qa26.db]
    python bench/locomo_qa.py --conversation ... --sessions 2 --scripted   # offline, no model: plumbing

``--scripted`` answers every prompt with the deterministic script of ``_qa_script.py`` and the hash
embedder: it tests the harness, and its J figures say nothing about a model.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _qa_script import scripted_llm
from _results import write_results

from epigraph import KnowledgeGraph
from epigraph.ask import CitationFilter, answer_request
from epigraph.client import llm_from_settings
from epigraph.config import Settings
from epigraph.graph.model import to_utc
from epigraph.graph.search import EPISODES_HYBRID
from epigraph.pipeline import EpisodeInput, IngestOptions
from epigraph.prompts import ask_answer, qa_judge
from epigraph.prompts.protocol import LLM
from epigraph.prompts.runtime import build_request, run
from epigraph.testing import HashEmbedder
from epigraph.tokens import count_text_tokens

CATEGORIES = (1, 2, 3, 4)
MODES = ("graph", "full_context", "episodes")
TOP_EPISODES = 10
GROUP = "locomo-qa"


@dataclass(frozen=True)
class Question:
    text: str
    gold: str
    category: int
    evidence: tuple[str, ...]


@dataclass
class Row:
    """One question answered one way."""

    mode: str
    category: int
    correct: bool
    answer_tokens: int
    context_tokens: int
    latency_ms: float
    answer: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


def load(path: Path, sessions: int | None) -> tuple[list[EpisodeInput], list[Question]]:
    """The turns of the first ``sessions`` sessions as episodes, and the questions of categories 1-4
    whose evidence lies in them."""
    data = json.loads(path.read_text(encoding="utf-8"))
    turns: list[EpisodeInput] = []
    n = 1
    while f"session_{n}" in data and (sessions is None or n <= sessions):
        when = to_utc(datetime.strptime(data[f"session_{n}_date_time"], "%I:%M %p on %d %B, %Y"))
        for i, turn in enumerate(data[f"session_{n}"]):
            turns.append(
                EpisodeInput(
                    content=turn["text"],
                    speaker=turn["speaker"],
                    reference_time=when + timedelta(seconds=i),
                    group_id=GROUP,
                    episode_id=f"locomo:{path.stem}:{turn['dia_id']}",
                    name=turn["dia_id"],
                )
            )
        n += 1
    ingested = {t.name for t in turns}
    questions = [
        Question(str(q["question"]), str(q["answer"]), int(q["category"]), tuple(q.get("evidence") or ()))
        for q in data.get("qa", [])
        if q.get("category") in CATEGORIES and "answer" in q
    ]
    return turns, [q for q in questions if q.evidence and set(q.evidence) <= ingested]


async def answer_with(llm: LLM, question: str, now: str, lines: list[str]) -> tuple[str, int]:
    """A baseline: the answering prompt with ``lines`` (``E1 [DATE]: ...``) as its only context, held
    to the same citing grammar as ``ask`` where the endpoint takes one; (answer, context tokens)."""
    episodes = "\n".join(lines) or "(none)"
    data = ask_answer.AskAnswerInput(question=question, now=now, facts="(none)", episodes=episodes)
    labels = [f"E{i}" for i in range(1, len(lines) + 1)]
    request = answer_request(data, labels) if labels else build_request(ask_answer.PROMPT, data)
    completion = await llm.complete(request)
    cited = CitationFilter(lambda label: label in labels)
    return (cited.feed(completion.text) + cited.finish()).strip(), count_text_tokens(episodes)


async def judge(llm: LLM, q: Question, answer: str) -> bool:
    data = qa_judge.QaJudgeInput(
        question=q.text, gold_answer=q.gold, generated_answer=answer or "(no answer)"
    )
    result = await run(llm, qa_judge.PROMPT, data)
    return bool(result.value.label == "CORRECT")


async def ask_graph(kg: KnowledgeGraph, q: Question, now: str) -> Row:
    started = time.perf_counter()
    answer = await kg.ask(q.text, as_of=now, streaming=False)
    latency = (time.perf_counter() - started) * 1000
    extra = {"calls": answer.usage.calls, "input_tokens": answer.usage.input_tokens, "error": answer.error}
    return Row(
        "graph",
        q.category,
        False,
        count_text_tokens(answer.text),
        answer.usage.context_tokens,
        latency,
        answer.text,
        extra,
    )


async def ask_baseline(
    kg: KnowledgeGraph, llm: LLM, mode: str, q: Question, turns: list[EpisodeInput], now: str
) -> Row:
    started = time.perf_counter()
    if mode == "full_context":
        lines = [
            f"E{i} [{t.reference_time:%Y-%m-%d}]: {t.speaker}: {t.content}" for i, t in enumerate(turns, 1)
        ]
    else:
        found = await kg.search(q.text, config=EPISODES_HYBRID, limit=TOP_EPISODES)
        lines = [
            f"E{i} [{r.episode.reference_time:%Y-%m-%d}]: {r.content}"
            for i, r in enumerate(found.episodes, 1)
        ]
    text, context = await answer_with(llm, q.text, now, lines)
    latency = (time.perf_counter() - started) * 1000
    return Row(mode, q.category, False, count_text_tokens(text), context, latency, text)


async def ingest(kg: KnowledgeGraph, turns: list[EpisodeInput]) -> dict[str, float]:
    stored = await kg.episodes(limit=len(turns) + 1)
    if len(stored) >= len(turns):
        return {"ingested_episodes": 0}
    started = time.perf_counter()
    results = await kg.add_episodes(turns)
    return {
        "ingested_episodes": len(results),
        "ingest_failed": sum(not r.ok for r in results),
        "ingest_s": round(time.perf_counter() - started, 2),
    }


def percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def metrics_of(rows: list[Row]) -> dict[str, float]:
    out: dict[str, float] = {}
    for mode in MODES:
        mine = [r for r in rows if r.mode == mode]
        if not mine:
            continue
        out[f"{mode}.j"] = round(sum(r.correct for r in mine) / len(mine), 4)
        for c in CATEGORIES:
            of_c = [r for r in mine if r.category == c]
            if of_c:
                out[f"{mode}.j.category{c}"] = round(sum(r.correct for r in of_c) / len(of_c), 4)
        out[f"{mode}.answer_tokens_mean"] = round(statistics.mean(r.answer_tokens for r in mine), 1)
        out[f"{mode}.context_tokens_mean"] = round(statistics.mean(r.context_tokens for r in mine), 1)
        out[f"{mode}.latency_p50_ms"] = round(percentile([r.latency_ms for r in mine], 0.5), 1)
        out[f"{mode}.latency_p95_ms"] = round(percentile([r.latency_ms for r in mine], 0.95), 1)
    graph = [r for r in rows if r.mode == "graph"]
    if graph:
        out["graph.calls_mean"] = round(statistics.mean(r.extra["calls"] for r in graph), 2)
        out["graph.input_tokens_mean"] = round(statistics.mean(r.extra["input_tokens"] for r in graph), 1)
        out["graph.errors"] = sum(1 for r in graph if r.extra["error"])
    return out


def print_table(metrics: dict[str, float]) -> None:
    keys = [
        "j",
        *(f"j.category{c}" for c in CATEGORIES),
        "answer_tokens_mean",
        "context_tokens_mean",
        "latency_p50_ms",
        "latency_p95_ms",
    ]
    print(f"{'':22}" + "".join(f"{m:>14}" for m in MODES))
    for key in keys:
        print(f"{key:22}" + "".join(f"{metrics.get(f'{m}.{key}', ''):>14}" for m in MODES))


async def run_bench(args: argparse.Namespace) -> tuple[dict[str, float], list[str], list[Row]]:
    turns, questions = load(args.conversation, args.sessions)
    questions = questions[: args.questions] if args.questions else questions
    if not turns or not questions:
        raise SystemExit(
            f"{args.conversation}: no turns or no questions of categories 1-4 in the sessions read"
        )
    # The graph is always the embedded store (a file with --db, else in memory), even where the
    # environment names a Neo4j server: a reused graph must be the one this harness wrote.
    settings = Settings.from_env(db_path=str(args.db) if args.db else ":memory:", group_id=GROUP)
    settings = settings.model_copy(update={"neo4j_uri": None})
    local = settings.llm_local and not args.scripted  # EPIGRAPH_LLM=local: the graph starts or reuses it
    llm = scripted_llm() if args.scripted else None if local else llm_from_settings(settings)
    if llm is None and not local:
        raise SystemExit(
            "set EPIGRAPH_LLM_MODEL and EPIGRAPH_LLM_BASE_URL, or EPIGRAPH_LLM=local "
            "(or --scripted for an offline run)"
        )
    embedder = HashEmbedder() if args.scripted or args.embedder == "hash" else None
    now = f"{max(t.reference_time for t in turns) + timedelta(days=1):%Y-%m-%d}"
    rows: list[Row] = []
    options = IngestOptions(mode=args.mode) if args.mode else None
    async with KnowledgeGraph(settings, llm=llm, embedder=embedder, options=options, group_id=GROUP) as kg:
        llm = kg.llm
        assert llm is not None, "the graph has a model once entered"
        ingested = await ingest(kg, turns)
        for q in questions:
            for row in [
                await ask_graph(kg, q, now),
                *[await ask_baseline(kg, llm, mode, q, turns, now) for mode in MODES[1:]],
            ]:
                row.correct = await judge(llm, q, row.answer)
                rows.append(row)
    metrics = {"questions": len(questions), "episodes": len(turns), **ingested, **metrics_of(rows)}
    model = "scripted (offline plumbing run, _qa_script.py)" if args.scripted else getattr(llm, "model", "?")
    notes = [
        *(
            ["scripted run: no model was asked; J comes from a word-overlap judge and measures the harness"]
            if args.scripted
            else []
        ),
        f"run: {args.conversation.name}, sessions 1-{args.sessions or 'all'}, {len(questions)} questions of "
        f"categories 1-4 whose evidence is in them, {len(turns)} episodes"
        + (f", ingested in {args.mode} mode" if args.mode else ""),
        f"model: {model}; judge: the same model with the qa_judge prompt (generous CORRECT/WRONG, as in "
        "the Mem0 and Zep papers)",
        "modes: graph = KnowledgeGraph.ask (non-streaming; as_of the day after the last session); "
        f"full_context = the whole ingested conversation in the prompt; episodes = top {TOP_EPISODES} "
        "episodes of EPISODES_HYBRID; all answer with the ask_answer prompt",
    ]
    return metrics, notes, rows


def main(argv: Sequence[str] | None = None) -> Path:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversation", type=Path, required=True, help="a LoCoMo conversation (26.json)")
    parser.add_argument("--sessions", type=int, help="only the first N sessions (and their questions)")
    parser.add_argument("--questions", type=int, help="at most N questions")
    parser.add_argument("--db", type=Path, help="ingest into / reuse this embedded store file")
    parser.add_argument("--embedder", choices=("minilm", "hash"), default="minilm")
    parser.add_argument("--mode", choices=("separate", "combined"), help="extraction mode of the ingestion")
    parser.add_argument("--scripted", action="store_true", help="offline: scripted model, hash embedder")
    parser.add_argument("--results-dir", type=Path, help="where qa.json goes (default bench/results)")
    parser.add_argument("--details", type=Path, help="also write every answer as JSON lines here")
    args = parser.parse_args(argv)
    metrics, notes, rows = asyncio.run(run_bench(args))
    print_table(metrics)
    if args.details:
        with args.details.open("w", encoding="utf-8") as out:
            for r in rows:
                out.write(json.dumps({k: v for k, v in r.__dict__.items()}, default=str) + "\n")
    return write_results("qa", metrics, notes, results_dir=args.results_dir)


if __name__ == "__main__":
    print(main())
