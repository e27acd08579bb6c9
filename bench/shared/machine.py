"""The machine a result was measured on: what it is (:func:`machine`, in every results file) and how fast
it is right now (:func:`calibrate`: two fixed workloads, timed before a store is measured).

The bars are judged on a shared machine whose speed drifts between days (one thread's pass over the
same vectors took twice as long one day as another: docs/decisions/2026-11-24-embedded-store.md), so
every results file carries, beside each store's figures, what the same machine did on these workloads
at that time:

- ``matvec_100k_ms``: one pass of ``einsum('ij,j->i')`` over 100,000 x 384 float32 on one thread, the
  embedded store's exact vector search floor (memory-bound: 154 MB per pass);
- ``python_ms``: a fixed pure-Python loop (interpreter speed, which the stores' client code depends on).

Each is the median of ``repeat`` runs, measured in a child process (so the 154 MB matrix never counts in
the peak RSS the store bench reports for the embedded store).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from bench.shared.paths import child_env, module_command

ROWS, DIM = 100_000, 384


def _median_ms(work: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        work()
        times.append((time.perf_counter() - started) * 1000)
    return round(statistics.median(times), 2)


def measure(repeat: int) -> dict[str, float]:
    """Both workloads, timed in this process."""
    rng = np.random.default_rng(0)
    matrix = rng.standard_normal((ROWS, DIM), dtype=np.float32)
    query = rng.standard_normal(DIM, dtype=np.float32)
    out = np.empty(ROWS, dtype=np.float32)
    matvec = _median_ms(lambda: np.einsum("ij,j->i", matrix, query, out=out), repeat)
    python = _median_ms(lambda: sum(i * i for i in range(300_000)), repeat)
    return {"matvec_100k_ms": matvec, "python_ms": python}


def calibrate(repeat: int = 15) -> dict[str, float]:
    """``{"matvec_100k_ms": ..., "python_ms": ...}`` measured now, in a child process."""
    child = subprocess.run(
        module_command("bench.shared.machine", str(repeat)),
        capture_output=True, text=True, check=True, timeout=300, env=child_env(),
    )  # fmt: skip
    result: dict[str, float] = json.loads(child.stdout)
    return result


def machine() -> str:
    """``"<cores> cores (<CPU model>, <widest SIMD>), <RAM> GiB"``: figures of two machines differ by 2x
    (the store bench's vector and index work is memory- and SIMD-bound), so results name the CPU."""
    cores = os.cpu_count() or 0
    cpu = cpu_description()
    described = f"{cores} cores ({cpu})" if cpu else f"{cores} cores"
    try:
        ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    except (ValueError, OSError, AttributeError):
        return described
    return f"{described}, {ram:.0f} GiB"


def cpu_description(cpuinfo: Path = Path("/proc/cpuinfo")) -> str:
    """``"<model name>, <AVX-512 | AVX2 | no AVX2>"`` from ``cpuinfo`` (Linux), or '' when unreadable."""
    try:
        text = cpuinfo.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    fields = dict(
        (key.strip(), value.strip())
        for key, _, value in (line.partition(":") for line in text.splitlines()[:40])
        if value
    )
    flags = set(fields.get("flags", "").split())
    simd = "AVX-512" if "avx512f" in flags else "AVX2" if "avx2" in flags else "no AVX2"
    model = fields.get("model name", "")
    return f"{model}, {simd}" if model else ""


if __name__ == "__main__":
    print(json.dumps(measure(int(sys.argv[1]) if len(sys.argv) > 1 else 15)))
