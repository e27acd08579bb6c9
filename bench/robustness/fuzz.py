"""Fuzz bench: schemathesis against ``epigraph serve`` with seeds other than the one ``make test`` runs.

``tests/serve/test_fuzz.py`` runs one fixed, derandomized seed on every ``make test`` (the same cases
every time); this bench runs the same configuration (``fuzz_run``: every check, every phase, the project's
``tests/serve/schemathesis.toml``) with other seeds, randomized by each seed, to find what that one does
not. Per seed it reports the operations tested, the cases generated and passed and the failures (the
operations that failed, named in the notes), and writes ``bench/results/fuzz.json``.

    python -m bench fuzz                                # seed 2, 30 examples per operation and phase
    python -m bench fuzz --seeds 2,3,4 --examples 50
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from bench.robustness import fuzz_run
from bench.shared.results import write_results
from bench.shared.serve_harness import LLMThread, ServerProcess, World, server_env

MAKE_TEST_SEED = 1
"""The seed ``tests/serve/test_fuzz.py`` runs (derandomized) in ``make test``."""


def fuzz_seed(seed: int, examples: int, tmp: Path, llm_url: str) -> fuzz_run.FuzzRun:
    """One fresh server and graph, one schemathesis run of ``seed``."""
    keys = f"{fuzz_run.KEY}=*;key-alpha=alpha"
    server = ServerProcess(
        server_env(tmp / f"graph-{seed}.db", llm_url, EPIGRAPH_API_KEYS=keys), tmp / "serve.log"
    )
    server.start()
    try:
        return fuzz_run.run(server.url, tmp, seed=seed, examples=examples, deterministic=False)
    finally:
        server.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seeds", default="2", help="comma-separated seeds (default 2)")
    parser.add_argument("--examples", type=int, default=30, help="per operation and phase (default 30)")
    parser.add_argument("--results-dir", type=Path, help="where fuzz.json goes (default bench/results)")
    args = parser.parse_args(argv)
    seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
    metrics: dict[str, float] = {"make_test.seed": MAKE_TEST_SEED, "examples": args.examples}
    notes = [
        f"make test: tests/serve/test_fuzz.py, seed {MAKE_TEST_SEED}, derandomized; these seeds: randomized "
        "by the seed, the same configuration (bench/robustness/fuzz_run.py)"
    ]
    with LLMThread(World()) as llm, tempfile.TemporaryDirectory(prefix="epigraph-fuzz-") as tmp:
        for seed in seeds:
            found = fuzz_seed(seed, args.examples, Path(tmp), llm.url)
            summary = found.summary()
            print(f"seed {seed}: {summary}")
            for key in ("operations_tested", "cases_generated", "cases_passed", "failures"):
                metrics[f"seed_{seed}.{key}"] = float(summary[key])  # type: ignore[arg-type]
            metrics[f"seed_{seed}.exit_code"] = found.returncode
            failed = ", ".join(found.failed_operations) or "none"
            notes.append(f"seed {seed}: failed operations: {failed}")
            if not found.ok:
                print(found.output[-10_000:])
    print(write_results("fuzz", metrics, notes, results_dir=args.results_dir))
    return 0 if all(metrics[f"seed_{s}.failures"] == 0 for s in seeds) else 1


if __name__ == "__main__":
    raise SystemExit(main())
