"""Import throughput: records/s of mapping + Episode creation (ingestion excluded) and peak memory.

Streams a JSONL file through the importer (read, map, build ``Episode`` objects) and counts; nothing is
ingested. Without a path, synthetic files are generated in a temporary folder: ``--records`` flat
message rows (``{id, speaker, text, timestamp}``: one episode per record, the headline number) and a
quarter as many OpenAI-style conversations of 4 messages (fan-out inside a record). RSS is sampled
every 10% of the records so that "flat memory" is a number (``rss_growth_mb``: RSS at the end minus RSS
after the first 10%), next to the process's peak RSS. Prints a table and writes
``bench/results/import.json`` (DESIGN.md section 9). Usage::

    python -m bench import                          # 100k synthetic records
    python -m bench import --records 1000000
    python -m bench import data.jsonl [--mapping m.json]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from bench.shared.results import write_results
from epigraph.importers import ConvertStats, iter_episodes, plan_without_llm

WORDS = (
    "the a memory graph time fact Oslo Bergen pottery dog adopted moved started class week yesterday".split()
)
SPEAKERS = ["Ana", "Ben", "Caroline", "Melanie", "Kim"]


@dataclass
class Run:
    label: str
    records: int
    episodes: int
    wall_s: float
    cpu_s: float
    rss_early_mb: float
    rss_end_mb: float
    file_mb: float

    @property
    def records_per_s(self) -> float:
        return self.records / self.wall_s

    @property
    def records_per_cpu_s(self) -> float:
        return self.records / self.cpu_s if self.cpu_s else 0.0


def current_rss_mb() -> float:
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
        return pages * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, IndexError):
        return peak_rss_mb()


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def sentence(rng: random.Random, i: int) -> str:
    return f"message {i}: " + " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 24)))


def write_flat(path: Path, n: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    with path.open("w", encoding="utf-8") as fp:
        for i in range(n):
            row = {
                "id": f"m{i}",
                "speaker": rng.choice(SPEAKERS),
                "text": sentence(rng, i),
                "timestamp": f"2024-{1 + i % 12:02d}-{1 + i % 28:02d}T{i % 24:02d}:{i % 60:02d}:00Z",
            }
            fp.write(json.dumps(row) + "\n")


def write_conversations(path: Path, n: int, seed: int = 11) -> None:
    rng = random.Random(seed)
    with path.open("w", encoding="utf-8") as fp:
        for i in range(n):
            messages = [{"role": ("user", "assistant")[k % 2], "content": sentence(rng, k)} for k in range(4)]
            fp.write(
                json.dumps(
                    {"id": f"c{i}", "created_at": f"2024-03-{1 + i % 28:02d}T10:00:00Z", "messages": messages}
                )
                + "\n"
            )


def measure(label: str, path: Path, mapping: str, expected_records: int | None) -> Run:
    plan = plan_without_llm(path, mapping, group_id="bench")
    stats = ConvertStats()
    checkpoint = max(1, (expected_records or 100_000) // 10)
    rss_early = 0.0
    episodes = 0
    cpu0, wall0 = time.process_time(), time.perf_counter()
    for _item in iter_episodes(plan, skip_invalid=True, stats=stats):
        episodes += 1
        if stats.records == checkpoint and not rss_early:
            rss_early = current_rss_mb()
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    return Run(
        label,
        stats.records,
        episodes,
        wall,
        cpu,
        rss_early or current_rss_mb(),
        current_rss_mb(),
        path.stat().st_size / 2**20,
    )


def print_table(runs: list[Run], peak: float) -> None:
    head = (
        f"{'input':<28}{'records':>10}{'episodes':>10}{'file MB':>9}{'wall s':>8}"
        f"{'rec/s':>10}{'rec/cpu-s':>11}{'RSS growth MB':>15}"
    )
    print(head)
    print("-" * len(head))
    for r in runs:
        print(
            f"{r.label:<28}{r.records:>10}{r.episodes:>10}{r.file_mb:>9.1f}{r.wall_s:>8.2f}"
            f"{r.records_per_s:>10.0f}{r.records_per_cpu_s:>11.0f}{r.rss_end_mb - r.rss_early_mb:>15.1f}"
        )
    print(f"peak RSS of the process: {peak:.0f} MB")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?", help="a dataset to import (default: generate synthetic JSONL)")
    parser.add_argument("--mapping", default="auto", help="mapping file for PATH (default: auto-detect)")
    parser.add_argument("--records", type=int, default=100_000, help="synthetic records (default 100000)")
    args = parser.parse_args(argv)
    runs: list[Run] = []
    with tempfile.TemporaryDirectory(prefix="epigraph-import-bench-") as tmp:
        if args.path:
            runs.append(measure(Path(args.path).name, Path(args.path), args.mapping, None))
        else:
            flat, chats = Path(tmp) / "flat.jsonl", Path(tmp) / "chats.jsonl"
            write_flat(flat, args.records)
            write_conversations(chats, args.records // 4)
            runs.append(measure(f"flat rows ({args.records // 1000}k)", flat, "auto", args.records))
            runs.append(
                measure(f"openai chats ({args.records // 4000}k x 4)", chats, "auto", args.records // 4)
            )
    peak = peak_rss_mb()
    print_table(runs, peak)
    head = runs[0]
    metrics: dict[str, float] = {
        "records_per_s": round(head.records_per_s),
        "peak_rss_mb": round(peak, 1),
        "records_per_cpu_s": round(head.records_per_cpu_s),
        "rss_growth_mb": round(head.rss_end_mb - head.rss_early_mb, 1),
        "records": head.records,
        "episodes": head.episodes,
    }
    if len(runs) > 1:
        chat = runs[1]
        metrics.update(
            {
                "openai.records_per_s": round(chat.records_per_s),
                "openai.episodes_per_s": round(chat.episodes / chat.wall_s),
                "openai.rss_growth_mb": round(chat.rss_end_mb - chat.rss_early_mb, 1),
            }
        )
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
    notes = [
        f"input: {args.path or f'synthetic JSONL, {args.records} flat message rows'}",
        "measured: read + JSON decode + mapping + Episode objects (uuid, hash, validation); no ingestion",
        "records_per_s is wall-clock; records_per_cpu_s excludes time lost to other processes",
        f"load average (1 min) at the end: {load:.2f} on {os.cpu_count()} cores",
        "rss_growth_mb = RSS after all records - RSS after the first 10% (flat memory: ~0)",
    ]
    print("wrote", write_results("import", metrics, notes))


if __name__ == "__main__":
    main()
