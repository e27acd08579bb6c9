"""The shared results writer of every benchmark (DESIGN.md section 9).

``write_results("store", {"embedded.100k.fulltext_p50_ms": 0.8}, ["notes"])`` writes
``bench/results/store.json`` (``paths.RESULTS``)::

    {"bench": "store", "when": "<ISO time, UTC>", "commit": "<git sha or ''>",
     "machine": "<N cores, X GiB>", "metrics": {"<dotted.key>": <number>, ...}, "notes": ["..."]}

and returns its path. Metric keys are flat dotted strings and values numbers, so results stay easy to
compare across commits; anything else is rejected before a half-valid file is written.

``merge=True`` keeps the metrics of an existing file that this run did not measure (a run of one store
must not erase the other's figures): measured keys are replaced, the others kept, and a note says which
run they come from. The previous notes are kept too, except those about what a new note is about (the text
before its first ':'), so a reworded note replaces its old wording instead of standing beside it.
"""

from __future__ import annotations

import json
import math
import subprocess
from datetime import UTC, datetime
from pathlib import Path

from bench.shared.machine import machine
from bench.shared.paths import RESULTS, ROOT

KEPT_NOTE = "kept from the previous results file"


def write_results(
    bench: str,
    metrics: dict[str, float],
    notes: list[str],
    *,
    results_dir: Path | None = None,
    merge: bool = False,
) -> Path:
    """Validate and write ``<results_dir>/<bench>.json``; returns the path."""
    clean = _check_metrics(metrics)
    out_dir = results_dir or RESULTS
    path = out_dir / f"{bench}.json"
    if merge:
        clean, notes = _merged(path, clean, notes)
    payload = {
        "bench": bench,
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "commit": git_commit(),
        "machine": machine(),
        "metrics": clean,
        "notes": [str(n) for n in notes],
    }
    out_dir.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(payload, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    tmp.replace(path)  # never leave a half-written results file
    return path


def _merged(path: Path, metrics: dict[str, float], notes: list[str]) -> tuple[dict[str, float], list[str]]:
    """The previous file's metrics updated with ``metrics``, and the notes to write with them."""
    try:
        old = json.loads(path.read_text(encoding="utf-8"))
        kept = {k: v for k, v in _check_metrics(old["metrics"]).items() if k not in metrics}
    except (OSError, ValueError, KeyError, TypeError):
        return metrics, notes  # nothing (valid) to keep
    if not kept:
        return metrics, notes
    stores = sorted({key.split(".", 1)[0] for key in kept})
    origin = f"{len(kept)} metrics ({', '.join(stores)}) not measured by this run: {KEPT_NOTE}"
    origin += f" ({old.get('when', '?')}, commit {old.get('commit') or '?'})"
    labels = {_label(n) for n in notes}
    old_notes = [
        n
        for n in old.get("notes", [])
        if isinstance(n, str) and KEPT_NOTE not in n and _label(n) not in labels
    ]
    merged_notes = list(dict.fromkeys([*notes, *old_notes, origin]))
    return {**kept, **metrics}, merged_notes


def _label(note: str) -> str:
    """What a note is about: its text before the first ':' (a new note replaces an old one on the same)."""
    return note.split(":", 1)[0].strip()


def _check_metrics(metrics: dict[str, float]) -> dict[str, float]:
    clean: dict[str, float] = {}
    for key, value in metrics.items():
        if not isinstance(key, str) or not key or any(c.isspace() for c in key):
            raise ValueError(f"metric keys are dotted strings without spaces, got {key!r}")
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError(f"metric {key!r} must be a number, got {type(value).__name__}")
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"metric {key!r} is not finite: {value}")
        clean[key] = value
    return clean


def git_commit() -> str:
    """The current commit's sha ('' outside a repository or before the first commit). Read-only."""
    try:
        done = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""
