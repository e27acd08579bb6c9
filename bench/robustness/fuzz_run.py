"""One schemathesis run against a served ``epigraph serve``, shared by ``tests/serve/test_fuzz.py`` (the
fixed seed of ``make test``) and ``bench/robustness/fuzz.py`` (other seeds): the command and what its output
says (operations tested, cases generated and passed, the operations that failed).

Every check, every phase (coverage, fuzzing, stateful), the project's configuration
(``tests/serve/schemathesis.toml``), one worker, no example database (a run never replays another's
cases), so a seed gives the same cases every time; ``deterministic`` also derandomizes hypothesis (its
own fixed seed per operation: what ``make test`` runs)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from bench.shared.paths import ROOT

CONFIG = ROOT / "tests" / "serve" / "schemathesis.toml"
"""What JSON Schema cannot say about two request bodies (see the file)."""
KEY = "key-all"
"""The key every call carries (a key for every group: ``EPIGRAPH_API_KEYS=key-all=*;...``)."""


@dataclass(frozen=True)
class FuzzRun:
    seed: int
    deterministic: bool
    returncode: int
    selected: int
    total: int
    tested: int
    generated: int
    passed: int
    failed_operations: tuple[str, ...]
    output: str

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.failed_operations

    def summary(self) -> dict[str, object]:
        return {
            "seed": self.seed, "deterministic": self.deterministic, "ok": self.ok,
            "operations_tested": self.tested, "operations_selected": self.selected, "operations": self.total,
            "cases_generated": self.generated, "cases_passed": self.passed,
            "failures": len(self.failed_operations), "failed_operations": list(self.failed_operations),
        }  # fmt: skip


def command(url: str, seed: int, examples: int, deterministic: bool) -> list[str]:
    argv = [
        sys.executable, "-m", "schemathesis.cli", "--config-file", str(CONFIG), "run", f"{url}/openapi.json",
        "--checks", "all", "-H", f"Authorization: Bearer {KEY}", "--exclude-path-regex", "/events$",
        "--seed", str(seed), "--max-examples", str(examples), "--workers", "1", "--no-color",
        "--request-timeout", "60",
    ]  # fmt: skip
    # deterministic mode implies no example database (schemathesis refuses both options together)
    return [*argv, *(["--generation-deterministic"] if deterministic else ["--generation-database", "none"])]


def run(url: str, cwd: Path, *, seed: int, examples: int, deterministic: bool) -> FuzzRun:
    """Run schemathesis once (the event stream left out: it never ends by design) and read its report."""
    wide = {**os.environ, "COLUMNS": "240"}  # a failed operation's header line holds its whole label
    done = subprocess.run(
        command(url, seed, examples, deterministic), capture_output=True, text=True, timeout=1800, cwd=cwd,
        env=wide,
    )  # fmt: skip
    out = done.stdout + done.stderr
    selected = re.search(r"Selected: (\d+)/(\d+)", out)
    tested = re.search(r"Tested: (\d+)", out)
    cases = re.search(r"(\d+) generated, (\d+) passed", out)
    failed = tuple(dict.fromkeys(re.findall(r"^_{3,} (\S+ \S+) _{3,}$", out, re.MULTILINE)))
    return FuzzRun(
        seed=seed, deterministic=deterministic, returncode=done.returncode,
        selected=int(selected.group(1)) if selected else 0, total=int(selected.group(2)) if selected else 0,
        tested=int(tested.group(1)) if tested else 0,
        generated=int(cases.group(1)) if cases else 0, passed=int(cases.group(2)) if cases else 0,
        failed_operations=failed, output=out,
    )  # fmt: skip
