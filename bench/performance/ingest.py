"""Ingestion benchmark: cost, round trips, candidate recall and graph correctness on gold sets.

Gold sets are hand-made extraction answers for LoCoMo turns (``bench/data/``: conversation 26 and 30,
sessions 1-3). Every prompt is answered by a ScriptedLLM from the gold annotations (entities, dated facts,
entity aliases, restated facts, contradictions), with a fixed latency per call, so calls, tokens,
embedding requests and sequential round trips are measured on a known workload, with the real
all-MiniLM-L6-v2 embedder by default (``--embedder hash`` for the old figures). Both extraction modes
(separate prompts and one combined prompt) ingest each set's turns through ``Ingestor.add_episodes``
(one group, in order; batch summaries). Per episode it measures LLM calls, input/output tokens,
embedding requests, round trips on the critical path (from the recorded call start/finish times) and
wall time, checks that each report's token counts equal the sum over the recorded calls, compares the
resulting graph with the gold graph, and measures candidate recall: for every gold contradiction,
restatement and alias, was the right earlier fact or entity among the candidates shown to the model
(apart from whether it was then applied). Prints a table and writes ``bench/results/ingest.json``
(keys prefixed by the set, ``locomo26.`` / ``locomo30.``; the unprefixed keys are conversation 26's).
The decision records (``decisions.*``, separate mode): their bytes per episode as stored (``stats``), the
time building one takes (the report's ``decision_record`` stage), and the wall time per episode with
records kept and with them off (``RecordOptions.keep``), the two runs interleaved ``--repeats`` times and
the fastest of each kept, so what they add (``added_share``) includes their write::

    python -m bench ingest --conversation ../shared/datasets/locomo \
        --gold bench/data/locomo26_s1-3.json --gold bench/data/locomo30_s1-3.json [--embedder hash]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the model ships in a package: never a hub download
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from bench.quality.live_metrics import stored_readable
from bench.shared.gold import (  # noqa: F401  (load_turns, Turn, GoldScript, graph_metrics: used by live_bench)
    GoldScript,
    GoldSet,
    Turn,
    candidate_recall,
    graph_metrics,
    load_sets,
    load_turns,
    merged_aliases,
)
from bench.shared.results import write_results
from epigraph.embed import Embedder, SentenceTransformerEmbedder
from epigraph.episodes.events import EpisodeResult
from epigraph.episodes.inputs import EpisodeInput
from epigraph.graph.embedded import EmbeddedStore
from epigraph.graph.model import to_utc
from epigraph.ingestion.ingestor import Ingestor
from epigraph.pipeline.metering import round_trips
from epigraph.pipeline.options import FactOptions, IngestOptions, RecordOptions
from epigraph.testing import HashEmbedder, RecordedCall, ScriptedLLM

DEFAULT_SET = "locomo26"
"""The set whose metrics are also written without a prefix (the first wave's keys)."""
INCUMBENT = (
    "Graphiti 0.31 with identical scripted answers on 57 turns: 3.89 calls, 7,626 input and 205 output "
    "tokens, 3.1 round trips, 3 embedding requests per episode; 0 of 3 contradictions applied; "
    "3 duplicate entities left by its bulk path"
)


@dataclass
class ModeRun:
    mode: str
    results: list[EpisodeResult]
    calls: list[RecordedCall]
    wall_s: float
    graph: dict[str, float]
    decision_bytes: int = 0
    write_s: float = 0.0
    """Time in the store's ``write_episode`` (the episodes' writes), all episodes."""
    in_flight: int = 1


class TimedWrites:
    """The store, with the time its ``write_episode`` calls take summed (``write_s``)."""

    def __init__(self, store: EmbeddedStore) -> None:
        self._store, self.write_s = store, 0.0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    async def write_episode(self, write: Any) -> bool:
        started = time.perf_counter()
        try:
            return await self._store.write_episode(write)
        finally:
            self.write_s += time.perf_counter() - started


IN_FLIGHT = IngestOptions().in_flight
"""Episodes of the group in flight at once (``--in-flight``; the quality keys must not depend on it)."""

VARIANTS = {
    "one_fact_per_call": ({"facts": FactOptions(batch=1)}, "batch"),
    "summaries_per_episode": ({}, "episode"),
}
"""Settings the defaults are compared with (run without latency): the issue's literal one-fact-per-call
resolve_fact, and a summarize call per episode instead of one per group at the end of the batch."""


async def run_mode(
    mode: str,
    gold_set: GoldSet,
    embedder: Embedder,
    latency: float,
    chunk_ms: float,
    variant: tuple[dict[str, Any], str] = ({}, "batch"),
    in_flight: int | None = None,
) -> ModeRun:
    """``in_flight``: IngestOptions.in_flight (None: ``--in-flight``'s, ``IN_FLIGHT``)."""
    in_flight = IN_FLIGHT if in_flight is None else in_flight
    script = GoldScript(gold_set.gold, gold_set.turns, latency, chunk_ms)
    llm = ScriptedLLM(script)
    overrides, summary_mode = variant
    group = gold_set.name
    async with EmbeddedStore(":memory:") as store:
        await store.setup(embedder.dim)
        options = IngestOptions(mode=mode, in_flight=in_flight, **overrides)  # type: ignore[arg-type]
        timed = TimedWrites(store)
        ingestor = Ingestor(timed, llm, embedder, options)  # type: ignore[arg-type]
        items = [
            EpisodeInput(
                content=t.text, speaker=t.speaker, reference_time=to_utc(t.reference_time), group_id=group
            )
            for t in gold_set.turns
        ]
        started = time.perf_counter()
        results = await ingestor.add_episodes(items, summary_mode=summary_mode)  # type: ignore[arg-type]
        wall = time.perf_counter() - started
        graph = await graph_metrics(store, group, gold_set.gold)
        graph.update(await stored_readable(store, group, results, gold_set.gold["speakers"]))
        merged = await merged_aliases(store, group, gold_set.gold)
        decision_bytes = (await store.stats(group)).decision_bytes
    graph.update(candidate_recall(gold_set.gold, script.shown, merged))
    return ModeRun(mode, results, list(llm.calls), wall, graph, decision_bytes, timed.write_s, in_flight)


def per_episode(run: ModeRun) -> dict[str, list[float]]:
    """Per-episode series. One at a time (``in_flight`` 1) the calls are attributed in order (episodes
    never interleave) and each report's tokens checked against its calls; with episodes in flight their
    calls interleave, so the totals are checked and each report's round trips are its own."""
    series: dict[str, list[float]] = {k: [] for k in ("calls", "in", "out", "emb", "rt", "wall")}
    position = 0
    for result in run.results:
        report = result.report
        calls = run.calls[position : position + report.llm_calls]
        position += report.llm_calls
        recorded_in = sum(c.completion.usage.input_tokens for c in calls if c.completion)
        recorded_out = sum(c.completion.usage.output_tokens for c in calls if c.completion)
        if run.in_flight == 1 and (recorded_in, recorded_out) != (report.input_tokens, report.output_tokens):
            raise SystemExit(
                f"{run.mode}: report tokens differ from the recorded calls for {result.episode.name}"
            )
        series["calls"].append(report.llm_calls)
        series["in"].append(report.input_tokens)
        series["out"].append(report.output_tokens)
        series["emb"].append(report.embedding_requests)
        series["rt"].append(round_trips(calls) if run.in_flight == 1 else report.round_trips)
        series["wall"].append(sum(report.stage_ms.values()) / 1000)
    if position != len(run.calls):
        raise SystemExit(f"{run.mode}: {len(run.calls) - position} recorded calls are in no report")
    recorded = [sum(getattr(c.completion.usage, k) for c in run.calls if c.completion) for k in TOKENS]
    if recorded != [sum(series[s]) for s in ("in", "out")]:
        raise SystemExit(f"{run.mode}: the reports' tokens differ from the recorded calls'")
    return series


TOKENS = ("input_tokens", "output_tokens")


def mode_metrics(run: ModeRun) -> dict[str, float]:
    s = per_episode(run)
    failed = sum(1 for r in run.results if not r.ok)
    return {
        "calls_mean": round(statistics.mean(s["calls"]), 3),
        "calls_max": max(s["calls"]),
        "input_tokens_mean": round(statistics.mean(s["in"]), 1),
        "output_tokens_mean": round(statistics.mean(s["out"]), 1),
        "embedding_requests_max": max(s["emb"]),
        "embedding_requests_mean": round(statistics.mean(s["emb"]), 3),
        "round_trips_median": statistics.median(s["rt"]),
        "round_trips_max": max(s["rt"]),
        "greeting_calls": s["calls"][0],
        "wall_s_per_episode": round(run.wall_s / len(run.results), 4),
        "episodes": len(run.results),
        "failed": failed,
        "warnings": sum(len(r.report.warnings) for r in run.results),
    }


def print_table(metrics: dict[str, float], prefix: str) -> None:
    keys = sorted(
        {
            k[len(prefix) :].split(".", 1)[1]
            for k in metrics
            if k.startswith((f"{prefix}separate.", f"{prefix}combined."))
        }
    )
    print(f"{prefix + 'per episode':34} {'separate':>10} {'combined':>10}")
    for key in keys:
        row = [metrics.get(f"{prefix}{m}.{key}", "") for m in ("separate", "combined")]
        print(f"{key:34} {row[0]:>10} {row[1]:>10}")
    print()
    for key in sorted(
        k for k in metrics if k.startswith((f"{prefix}gold.", f"{prefix}variants.", f"{prefix}decisions."))
    ):
        print(f"{key:50} {metrics[key]:>8}")
    print()


async def decision_costs(
    gold_set: GoldSet, embedder: Embedder, latency: float, chunk_ms: float, repeats: int
) -> dict[str, float]:
    """What the decision records cost (module docstring), separate mode: records kept and off, run
    alternately ``repeats`` times after one warm-up run, the fastest run of each; the time they add is
    building them (the ``decision_record`` stage) and writing them (the episodes' writes with records
    less those without)."""
    await run_mode("separate", gold_set, embedder, latency, chunk_ms)  # warm-up: not counted
    walls: dict[bool, list[float]] = {True: [], False: []}
    writes: dict[bool, list[float]] = {True: [], False: []}
    kept: ModeRun | None = None
    for _ in range(repeats):
        for keep in (False, True):
            variant = ({"record": RecordOptions(keep=keep)}, "batch")
            run = await run_mode("separate", gold_set, embedder, latency, chunk_ms, variant)
            walls[keep].append(run.wall_s / len(run.results))
            writes[keep].append(run.write_s / len(run.results))
            kept = run if keep else kept
    assert kept is not None
    on, off = min(walls[True]), min(walls[False])
    build_ms = [r.report.stage_ms.get("decision_record", 0.0) for r in kept.results]
    episodes = len(kept.results)
    write_added = min(writes[True]) - min(writes[False])
    added = statistics.mean(build_ms) / 1000 + write_added
    return {
        "decisions.bytes_per_episode": round(kept.decision_bytes / episodes, 1),
        "decisions.build_ms_per_episode": round(statistics.mean(build_ms), 3),
        "decisions.build_ms_max": round(max(build_ms), 3),
        "decisions.wall_s_per_episode_kept": round(on, 4),
        "decisions.wall_s_per_episode_off": round(off, 4),
        "decisions.write_ms_per_episode_kept": round(min(writes[True]) * 1000, 3),
        "decisions.write_ms_per_episode_off": round(min(writes[False]) * 1000, 3),
        "decisions.added_ms_per_episode": round(added * 1000, 3),
        "decisions.added_share": round(added / on, 5),
        "decisions.wall_difference_share": round((on - off) / on, 4),
    }


async def measure(gold_set: GoldSet, embedder: Embedder, latency: float, chunk_ms: float) -> dict[str, float]:
    """Both modes and the variants on one gold set; keys as in the first wave (``separate.calls_mean``,
    ``gold.facts_built``, ``gold.combined.facts_built``, ``variants...``), not yet prefixed."""
    metrics: dict[str, float] = {}
    for mode in ("separate", "combined"):
        run = await run_mode(mode, gold_set, embedder, latency, chunk_ms)
        metrics.update({f"{mode}.{k}": v for k, v in mode_metrics(run).items()})
        metrics.update(
            {f"gold.{k}" if mode == "separate" else f"gold.combined.{k}": v for k, v in run.graph.items()}
        )
        for name, variant in VARIANTS.items():
            other = await run_mode(mode, gold_set, embedder, 0.0, 0.0, variant)
            kept = {k: v for k, v in mode_metrics(other).items() if k in ("calls_mean", "input_tokens_mean")}
            metrics.update({f"variants.{name}.{mode}.{k}": v for k, v in kept.items()})
    return metrics


def make_embedder(kind: str) -> Embedder:
    return HashEmbedder() if kind == "hash" else SentenceTransformerEmbedder()


async def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--conversation",
        type=Path,
        action="append",
        required=True,
        help="LoCoMo conversation file per --gold (same order), or one folder holding <conversation>.json",
    )
    parser.add_argument("--gold", type=Path, action="append", required=True, help="a gold set (repeatable)")
    parser.add_argument("--embedder", choices=("minilm", "hash"), default="minilm")
    parser.add_argument("--latency", type=float, default=0.05, help="seconds to first token per call")
    parser.add_argument("--chunk-ms", type=float, default=1.0, help="milliseconds per 64-character chunk")
    parser.add_argument("--results-dir", type=Path, default=None, help="where ingest.json goes")
    parser.add_argument(
        "--repeats", type=int, default=3, help="runs with decision records kept and off, each"
    )
    parser.add_argument(
        "--in-flight", type=int, default=IngestOptions().in_flight,
        help="IngestOptions.in_flight: episodes of the group in flight at once (1: one at a time)",
    )  # fmt: skip
    args = parser.parse_args(argv)
    global IN_FLIGHT
    IN_FLIGHT = args.in_flight
    sets = load_sets(args.gold, args.conversation)
    embedder = make_embedder(args.embedder)
    metrics: dict[str, float] = {}
    for gold_set in sets:
        measured = await measure(gold_set, embedder, args.latency, args.chunk_ms)
        measured.update(await decision_costs(gold_set, embedder, args.latency, args.chunk_ms, args.repeats))
        metrics.update({f"{gold_set.name}.{k}": v for k, v in measured.items()})
        if gold_set.name == DEFAULT_SET:
            metrics.update(measured)
        print_table(metrics, f"{gold_set.name}.")
    embedder_name = "all-MiniLM-L6-v2" if args.embedder == "minilm" else "HashEmbedder"
    notes = [
        "sets: "
        + "; ".join(f"{s.name}: {len(s.turns)} turns of sessions {s.gold['sessions']}" for s in sets)
        + f"; one group per set, add_episodes (batch summaries); ScriptedLLM answering from the gold "
        f"annotations, {args.latency * 1000:.0f} ms per call; embedder {embedder_name}; "
        f"in_flight {IN_FLIGHT}",
        "unprefixed keys: conversation 26 (locomo26), as in the first wave",
        "round trips: longest chain of recorded calls each starting after the previous finished",
        f"decisions: separate mode; bytes as stored (stats.decision_bytes) per episode; build time: the "
        f"report's decision_record stage; kept / off: fastest of {args.repeats} interleaved runs each, after "
        "a warm-up; added = build + (write kept - write off) per episode (the store's write_episode timed); "
        "added_share = added / wall kept; wall_difference_share = (wall kept - wall off) / wall kept, whole "
        "runs on a shared machine (noise of the same order)",
        "candidate recall: share of gold contradictions / restatements / aliases whose earlier fact or "
        "entity was among the candidates shown to the model (an alias merged without a model counts)",
        f"incumbent: {INCUMBENT}",
    ]
    print(f"wrote {write_results('ingest', metrics, notes, results_dir=args.results_dir)}")


if __name__ == "__main__":
    asyncio.run(main())
