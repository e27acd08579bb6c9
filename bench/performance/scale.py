"""Scale bench: episodes per second of ``epigraph worker`` processes on one Kafka topic and Neo4j.

Scale bench: ``epigraph worker`` processes on one Kafka topic and one Neo4j, the LLM answering after a
fixed delay (so the run is LLM-bound as in real use): episodes per second with 1, 2 and 4 workers, the
speed-up over 1 worker, and one row where partitions, not workers, are the limit.

    python3 tools/neo4j/neo4jctl.py run -- python3 tools/kafka/kafkactl.py run -- \\
        python -m bench scale [--llm-delay 2] [--max-in-flight 1] [--groups 16]

Each configuration gets a fresh topic (``--partitions``) and fresh groups, chosen so that they spread
evenly over the partitions (``spread_groups``). Its workers are started on the
empty topic and timed only once every one of them holds partitions: then the episodes are published and
the clock runs until the last one is logged done (``episode.done`` lines of the workers' JSON logs). The
LLM is the scripted city world behind the local test server, every reply after ``--llm-delay`` seconds;
each worker may have ``--max-in-flight`` LLM calls open (``EPIGRAPH_LLM_MAX_IN_FLIGHT``): the part of an
endpoint's capacity one worker gets. On real machines a worker also brings its own CPU; on this one
all workers share 2 cores with Kafka and Neo4j, so the per-worker LLM share is kept small enough that the
machine is not the limit.

Writes ``bench/results/scale.json`` (keys in ../shared/DESIGN.md §9: ``workers.<n>.episodes_per_s``,
``speedup.4``, ``llm_delay_s``; plus ``speedup.2``, ``workers.<n>.seconds``, ``workers.<n>.llm_calls``,
``partitions_limited.workers``, ``.partitions``, ``.episodes_per_s``, and the setup).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

from aiokafka.partitioner import murmur2

from bench.shared.paths import RESULTS
from bench.shared.results import write_results
from bench.shared.scale_harness import (
    CityWorld,
    WorkerProcess,
    create_topic,
    episodes,
    publish,
    wait_for,
    worker_env,
)
from bench.shared.serve_harness import LLMThread


def _need(name: str) -> str:
    value = os.environ.get(name, "").strip()
    if not value:
        sys.exit(f"scale_bench: {name} is not set: run it under tools/neo4j/neo4jctl.py run -- "
                 "tools/kafka/kafkactl.py run -- ... (see the module docstring)")  # fmt: skip
    return value


def spread_groups(prefix: str, count: int, partitions: int) -> list[str]:
    """``count`` group ids that Kafka's partitioner (murmur2 of the key, as the producer uses) spreads
    evenly over ``partitions``: with few groups, hashing alone leaves some partitions (and so some
    workers) with twice the work of others, and the slowest worker sets the time. Many real groups
    spread about evenly by themselves."""
    by_partition: dict[int, list[str]] = {p: [] for p in range(partitions)}
    candidate = 0
    while sum(len(v) for v in by_partition.values()) < count:
        name = f"{prefix}-{candidate}"
        candidate += 1
        slot = (murmur2(name.encode()) & 0x7FFFFFFF) % partitions
        if len(by_partition[slot]) < -(-count // partitions):
            by_partition[slot].append(name)
    return [name for p in range(partitions) for name in by_partition[p]][:count]


def _stable(workers: list[WorkerProcess], partitions: int) -> bool:
    """Every worker started, holds partitions, and together they hold each partition once."""
    held: list[int] = []
    for worker in workers:
        assigned = worker.events("partitions.assigned")
        if not worker.events("worker.started") or not assigned:
            return False
        released = worker.events("partitions.released")
        if released and released[-1]["ts"] > assigned[-1]["ts"]:
            return False
        held += assigned[-1]["partitions"]
    holding = sum(1 for w in workers if w.events("partitions.assigned")[-1]["partitions"])
    return sorted(held) == list(range(partitions)) and holding == min(len(workers), partitions)


def run_config(
    args: argparse.Namespace, llm: LLMThread, n: int, partitions: int, log_dir: Path
) -> dict[str, float]:
    """One configuration: ``n`` workers on a fresh topic of ``partitions`` partitions; returns figures."""
    bootstrap, uri = _need("EPIGRAPH_KAFKA_BOOTSTRAP"), _need("EPIGRAPH_NEO4J_URI")
    run = uuid.uuid4().hex[:8]
    topic, members = f"scale-{run}", f"scale-{run}"
    items = episodes(spread_groups(f"s{run}", args.groups, partitions), args.per_group)
    asyncio.run(create_topic(bootstrap, topic, partitions))
    env = worker_env(llm.url, uri, EPIGRAPH_LLM_MAX_IN_FLIGHT=str(args.max_in_flight))
    workers = [WorkerProcess(env, log_dir / f"{run}-{i}.log", bootstrap, topic, members) for i in range(n)]
    calls_before = len(llm.server.chat_requests)
    try:
        for worker in workers:
            worker.start()
        wait_for(lambda: _stable(workers, partitions), 300, f"{n} workers to share {partitions} partitions")
        started = datetime.now(UTC)
        asyncio.run(publish(bootstrap, topic, items))
        wait_for(lambda: len({e["uuid"] for w in workers for e in w.events("episode.done")}) >= len(items),
                 1800, f"{len(items)} episodes done", poll_s=0.5)  # fmt: skip
        ended = max(datetime.fromisoformat(e["ts"]) for w in workers for e in w.events("episode.done"))
    finally:
        for worker in workers:
            worker.stop()
    seconds = (ended - started).total_seconds()
    calls = len(llm.server.chat_requests) - calls_before
    print(f"  {n} worker(s), {partitions} partitions: {len(items)} episodes in {seconds:.1f} s = "
          f"{len(items) / seconds:.2f} episodes/s ({calls} LLM calls)", flush=True)  # fmt: skip
    return {"episodes_per_s": len(items) / seconds, "seconds": seconds, "llm_calls": calls}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--workers", default="1,2,4", help="worker counts to run (default 1,2,4)")
    p.add_argument("--groups", type=int, default=16, help="groups (default 16)")
    p.add_argument("--per-group", type=int, default=2, help="episodes per group (default 2)")
    p.add_argument("--partitions", type=int, default=16, help="topic partitions (default 16)")
    p.add_argument("--llm-delay", type=float, default=2.0, help="seconds before every LLM reply (default 2)")
    p.add_argument("--max-in-flight", type=int, default=1, help="LLM calls open per worker (default 1)")
    p.add_argument("--no-partition-row", action="store_true", help="skip the 4-workers-on-2-partitions row")
    p.add_argument("--merge", action="store_true", help="keep the figures of worker counts not run now "
                   "(a re-run of some); speed-ups then use the file's 1-worker rate")  # fmt: skip
    p.add_argument("--results-dir", default=str(RESULTS))
    args = p.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # a stopped bench stops its workers too
    counts = [int(n) for n in args.workers.split(",")]
    metrics: dict[str, float] = {
        "llm_delay_s": args.llm_delay,
        "max_in_flight_per_worker": args.max_in_flight,
        "partitions": args.partitions,
        "episodes": args.groups * args.per_group,
    }
    t0 = time.monotonic()
    with (
        tempfile.TemporaryDirectory(prefix="scale-bench-") as tmp,
        LLMThread(CityWorld(delay_s=args.llm_delay)) as llm,
    ):
        for n in counts:
            for key, value in run_config(args, llm, n, args.partitions, Path(tmp)).items():
                metrics[f"workers.{n}.{key}"] = value
        if not args.no_partition_row:
            row = run_config(args, llm, 4, 2, Path(tmp))
            metrics.update({"partitions_limited.workers": 4, "partitions_limited.partitions": 2,
                            "partitions_limited.episodes_per_s": row["episodes_per_s"]})  # fmt: skip
    earlier = _earlier(Path(args.results_dir)) if args.merge else {}
    base = metrics.get("workers.1.episodes_per_s", earlier.get("workers.1.episodes_per_s"))
    for n in counts:
        if base and n != 1:
            metrics[f"speedup.{n}"] = metrics[f"workers.{n}.episodes_per_s"] / base
    _table({**earlier, **metrics}, counts)
    notes = [
        f"{args.groups} groups x {args.per_group} episodes (people moving between cities: 2 LLM calls an "
        f"episode, 3 when it retires an earlier move), LLM reply delay {args.llm_delay} s, "
        f"{args.max_in_flight} LLM call(s) open per worker, {args.partitions} partitions; Neo4j and Kafka "
        "on the same 2 cores",
        "timed from publishing (all workers already holding partitions) to the last episode.done",
        f"bench wall time {time.monotonic() - t0:.0f} s",
    ]
    write_results("scale", metrics, notes, results_dir=Path(args.results_dir), merge=args.merge)


def _earlier(results_dir: Path) -> dict[str, float]:
    """The metrics of the existing scale.json (for ``--merge``: a re-run of some worker counts)."""
    try:
        found: dict[str, float] = json.loads((results_dir / "scale.json").read_text())["metrics"]
        return found
    except (OSError, ValueError, KeyError):
        return {}


def _table(metrics: dict[str, float], counts: list[int]) -> None:
    print(f"\n{'workers':>8} {'episodes/s':>11} {'speed-up':>9} {'seconds':>8} {'LLM calls':>10}")
    for n in counts:
        rate, speed = metrics[f"workers.{n}.episodes_per_s"], metrics.get(f"speedup.{n}", 1.0)
        seconds, calls = metrics[f"workers.{n}.seconds"], metrics[f"workers.{n}.llm_calls"]
        print(f"{n:>8} {rate:>11.2f} {speed:>8.2f}x {seconds:>8.1f} {calls:>10.0f}")
    if "partitions_limited.episodes_per_s" in metrics:
        print(f"4 workers on 2 partitions: {metrics['partitions_limited.episodes_per_s']:.2f} episodes/s")


if __name__ == "__main__":
    main()
