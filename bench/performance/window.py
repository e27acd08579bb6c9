"""Episodes in flight bench: one group's history at a hosted model's latency, one episode at a time vs
``IngestOptions.in_flight`` N, with the graph compared.

The ingest bench's gold sets and scripted answers (``bench.shared.gold.GoldScript``, through
``bench.performance.ingest.run_mode``: ``Ingestor.add_episodes``, one group, batch summaries, separate
mode), each reply delayed like a gpt-4o-mini-class hosted model: ``--first-token-s`` (0.40 s) before its
first 64-character chunk and ``--chunk-ms`` (267 ms: 16 tokens at 60 tokens/s) for each chunk, the figures
the hosted bench's simulated provider states (Artificial Analysis' time to first token, a community
measurement of gpt-4o-mini's output speed). No rate limit is simulated here (the hosted bench does
that): these are the figures of the algorithm's critical path, not of a provider's limits.

Per set and per ``in_flight`` (``--in-flight``, 1 first): messages per minute, the speedup over 1, model
calls and input / output tokens per message (calls ahead a commit did not use included), the share of
calls ahead used, and ``quality_mismatches``: how many of the ingest bench's quality keys (the graph
against the gold graph: ``gold.*``) differ from the one-at-a-time run's (0 is the bar). Writes
``bench/results/window.json``::

    python -m bench window --conversation ../shared/datasets/locomo \\
        --gold bench/data/locomo26_s1-3.json --gold bench/data/locomo30_s1-3.json
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Sequence
from pathlib import Path

from bench.performance.ingest import make_embedder, run_mode
from bench.shared.gold import GoldSet, load_sets
from bench.shared.results import write_results
from epigraph.embed import Embedder


async def measure(
    gold_set: GoldSet, embedder: Embedder, in_flights: Sequence[int], first_token_s: float, chunk_ms: float
) -> dict[str, float]:
    metrics: dict[str, float] = {}
    baseline: dict[str, float] | None = None
    sequential_rate = 0.0
    for n in in_flights:
        run = await run_mode("separate", gold_set, embedder, first_token_s, chunk_ms, in_flight=n)
        reports = [r.report for r in run.results]
        messages = len(run.results)
        rate = messages / run.wall_s * 60
        sequential_rate = sequential_rate or rate
        ahead = sum(r.calls_ahead for r in reports)
        unused = sum(r.calls_ahead_unused for r in reports)
        quality = dict(run.graph)
        baseline = baseline if baseline is not None else quality
        row = {
            "messages_per_min": round(rate, 2),
            "speedup": round(rate / sequential_rate, 2),
            "calls_per_message": round(sum(r.llm_calls for r in reports) / messages, 3),
            "input_tokens_per_message": round(sum(r.input_tokens for r in reports) / messages, 1),
            "output_tokens_per_message": round(sum(r.output_tokens for r in reports) / messages, 1),
            "calls_ahead_used_share": round(ahead / (ahead + unused), 3) if ahead + unused else 0.0,
            "calls_ahead_unused_per_message": round(unused / messages, 3),
            "failed": sum(1 for r in run.results if not r.ok),
            "quality_mismatches": sum(1 for k, v in quality.items() if baseline.get(k) != v),
            "candidate_recall_mismatches": sum(
                1 for k, v in quality.items() if "recall" in k and baseline.get(k) != v
            ),
            "messages": messages,
        }
        print(
            f"{gold_set.name} in_flight {n:>2}: " + ", ".join(f"{k} {v}" for k, v in row.items()), flush=True
        )
        metrics.update({f"{gold_set.name}.in_flight{n}.{k}": v for k, v in row.items()})
        metrics.update({f"{gold_set.name}.in_flight{n}.gold.{k}": v for k, v in quality.items()})
    return metrics


async def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversation", type=Path, action="append", required=True)
    parser.add_argument("--gold", type=Path, action="append", required=True, help="a gold set (repeatable)")
    parser.add_argument("--embedder", choices=("minilm", "hash"), default="minilm")
    parser.add_argument("--in-flight", type=int, action="append", help="repeatable; default 1 2 4 8 16")
    parser.add_argument("--first-token-s", type=float, default=0.40)
    parser.add_argument("--chunk-ms", type=float, default=267.0, help="per 64-character chunk")
    parser.add_argument("--results-dir", type=Path, default=None)
    args = parser.parse_args(argv)
    in_flights = [1, *sorted(set(args.in_flight or [2, 4, 8, 16]) - {1})]
    embedder = make_embedder(args.embedder)
    metrics: dict[str, float] = {}
    for gold_set in load_sets(args.gold, args.conversation):
        metrics.update(await measure(gold_set, embedder, in_flights, args.first_token_s, args.chunk_ms))
    notes = [
        "one group per gold set, Ingestor.add_episodes (separate mode, batch summaries), the ingest bench's "
        f"scripted gold answers delayed {args.first_token_s:.2f} s to the first token and "
        f"{args.chunk_ms:.0f} ms per 64-character chunk (a gpt-4o-mini-class hosted model, no rate limit)",
        f"in_flight: {in_flights}; quality_mismatches: gold.* keys differing from in_flight 1's",
        "calls per message include the calls ahead a commit did not use (its report charges them)",
    ]
    print(f"wrote {write_results('window', metrics, notes, results_dir=args.results_dir)}")


if __name__ == "__main__":
    asyncio.run(main())
