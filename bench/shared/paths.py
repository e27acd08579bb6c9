"""Where the benches read and write, from the repository's root: one place that knows the layout.

- ``results/``: each bench's summary, ``<name>.json`` (``results.write_results``);
- ``recorded/``: what a run recorded to be read again, apart from the summaries: the live bench's model
  replies (``live.replies.<set>.<mode>.jsonl``, answered again by ``--replay``) and the QA bench's
  answers and journals (``qa.answers.jsonl``);
- ``data/``: the hand-made gold extraction sets;
- ``DATASETS``: the LoCoMo conversations, outside the repository (``../shared/datasets/locomo``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"
RESULTS = BENCH / "results"
RECORDED = BENCH / "recorded"
DATA = BENCH / "data"
DATASETS = ROOT.parent / "shared" / "datasets" / "locomo"


def module_command(module: str, *args: str) -> list[str]:
    """The command that runs ``module`` (``bench.performance.serve``) in a child Python with ``args``;
    run it with :func:`child_env` so that the child imports ``bench`` from wherever it starts."""
    return [sys.executable, "-m", module, *args]


def child_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """``env`` (default: this process's environment) with the repository's root first on PYTHONPATH."""
    out = dict(os.environ if env is None else env)
    out["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), out.get("PYTHONPATH", "")) if p)
    return out
