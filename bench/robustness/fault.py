"""Fault bench: crash consistency under kill -9, and the store's own faults, measured.

Crash consistency, measured (issue 47 item 6): the ingesting process is killed with SIGKILL at random
points of an episode's life (mid extraction, mid invalidation, mid summary, mid write) on the embedded
store and on Neo4j, restarted, left to resume, and its graph compared with an uninterrupted run of the
same episodes; then three faults of the store's side: the Neo4j server stopped and started again under
ingestion (``neo4j_restart``), the embedded store's file system full (``disk_full``), and its directory
read-only (``read_only``).

After every kill: the store's own check (``PRAGMA integrity_check`` and ``foreign_key_check`` on SQLite;
on Neo4j the queries of ``fault_harness.NEO4J_CHECKS``), then the graph: no record of an episode that is
not done, no done episode without its writes, no duplicate, and exactly the reference graph after as
many episodes as are done. At the end of each round (the child resumed until it finished): every episode
done, nothing of the reference missing (``lost``), nothing twice and no episode's model calls spent
again beyond the run a kill interrupted (``duplicated``). The model is the scripted world of
``fault_harness`` (replies take ``DELAY_S``), the embedder the hash embedder.

    python -m bench fault  # embedded only (+ disk_full, read_only as root)
    python tools/neo4j/neo4jctl.py run -- python -m bench fault  # both stores and every row
    python -m bench fault --kills 5 --stores embedded --rows none  # a quick look

Writes ``bench/results/faults.json`` (``embedded.kills``, ``embedded.lost``, ..., ``neo4j.*``,
``neo4j_restart.*``, ``disk_full.*``, ``read_only.*``).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import secrets
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from bench.robustness.fault_graph import neo4j_integrity, sqlite_integrity
from bench.robustness.fault_harness import DELAY_S, STAGES, KillLoop, Target, start_world
from bench.robustness.fault_rows import ROWS, RowContext
from bench.shared.results import write_results
from epigraph.config import Settings

BAR_KEYS = ("lost", "duplicated", "half_written", "integrity_failures")
STORES = ("embedded", "neo4j", "embedded_window", "neo4j_window")


def embedded_target(work: Path) -> Target:
    async def integrity(settings: Settings, group: str) -> list[str]:
        return sqlite_integrity(Path(settings.db_path))

    return Target(
        "embedded", lambda n: ({"EPIGRAPH_DB": str(work / f"embedded-{n}.db")}, "faults"), integrity
    )


def neo4j_target() -> Target:
    store = {k: v for k, v in os.environ.items() if k.startswith("EPIGRAPH_NEO4J_")}
    run = secrets.token_hex(3)
    return Target("neo4j", lambda n: (store, f"faults-{run}-{n}"), neo4j_integrity)


WINDOW = {"EPIGRAPH_IN_FLIGHT": "4"}
"""The ``*_window`` stores: the child ingests its episodes as one batch with four in flight at once."""


def windowed(target: Target) -> Target:
    """``target`` with the child's episodes in flight (``IngestOptions.in_flight`` 4, one batch)."""
    return replace(target, kind=f"{target.kind}_window", child=("--batch",), env=WINDOW)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=50, help="kills per store (default 50)")
    parser.add_argument("--episodes", type=int, default=12, help="episodes per round (default 12)")
    parser.add_argument("--kills-per-round", type=int, default=10, help="then the round runs to its end")
    parser.add_argument("--stores", default=",".join(STORES), help=f"of {', '.join(STORES)} (neo4j needs "
                        "EPIGRAPH_NEO4J_URI: run it under tools/neo4j/neo4jctl.py run; *_window: four "
                        "episodes in flight)")  # fmt: skip
    parser.add_argument("--merge", action="store_true", help="keep faults.json's other keys")
    parser.add_argument("--rows", default=",".join(ROWS), help=f"of {', '.join(ROWS)}, or none")
    parser.add_argument("--seed", type=int, default=47)
    parser.add_argument("--results-dir", type=Path, default=None)
    parser.add_argument("--work", type=Path, default=None, help="a directory for stores and logs")
    args = parser.parse_args(argv)
    work = args.work or Path(tempfile.mkdtemp(prefix="fault-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    stores = [s for s in args.stores.split(",") if s]
    rows = [r for r in args.rows.split(",") if r and r != "none"]
    metrics: dict[str, float] = {}
    notes: list[str] = []
    started = time.monotonic()
    world, llm = start_world()
    with llm:
        loop = KillLoop(world, llm.url, work, args.episodes, random.Random(args.seed))
        for kind in stores if args.kills > 0 else []:
            if kind.startswith("neo4j") and not os.environ.get("EPIGRAPH_NEO4J_URI"):
                notes.append(
                    f"{kind}: not measured (no EPIGRAPH_NEO4J_URI; run under tools/neo4j/neo4jctl.py run)"
                )
                continue
            target = embedded_target(work) if kind.startswith("embedded") else neo4j_target()
            target = windowed(target) if kind.endswith("_window") else target
            tally = loop.run(target, args.kills, args.kills_per_round)
            metrics.update(tally.metrics(kind))
            notes += tally.problems
        context = RowContext(world, llm.url, work, args.episodes)
        for name in rows:
            found, said = asyncio.run(ROWS[name](context))
            metrics.update({f"{name}.{k}": v for k, v in found.items()})
            notes += [f"{name}: {s}" for s in said]
            print(f"{name}: {found}", *said, sep="\n  ")
    metrics["wall_s"] = round(time.monotonic() - started, 1)
    notes += [
        f"kills: SIGKILL of the ingesting process (bench/robustness/fault_child.py) at a random moment "
        f"inside a stage picked at random among {', '.join(STAGES)}: a model call's stage is entered when "
        f"its request reaches the scripted server (each reply takes {DELAY_S} s), the write's when the child "
        "prints that its one atomic EpisodeWrite began (the kill comes within the write's median duration); "
        "write_kills_after_commit counts write-stage kills that came after the commit",
        "invalidation: the resolve_episode call that decides which facts an episode retires (the "
        "retirements themselves are applied in the episode's one write)",
        "duplicated: two copies of an entity or fact, or an episode whose model calls ran more times than "
        "1 + the kills that interrupted it (a kill interrupts every episode extracted and not done: the one "
        "committed and, on the *_window stores, those run ahead); llm_calls against reference_llm_calls "
        "is what the kills cost",
    ]
    path = write_results("faults", metrics, notes, results_dir=args.results_dir, merge=args.merge)
    for key in sorted(metrics):
        print(f"{key:44} {metrics[key]}")
    print(f"wrote {path}")
    return 0 if _bar_met(metrics, stores, rows) else 1


def _bar_met(metrics: dict[str, Any], stores: list[str], rows: list[str]) -> bool:
    bad = [k for k in metrics if k.split(".", 1)[-1] in BAR_KEYS and metrics[k] != 0]
    if bad:
        print(f"not met: {', '.join(sorted(bad))}")
    return not bad


if __name__ == "__main__":
    sys.exit(main())
