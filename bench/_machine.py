"""How fast this machine is right now: two fixed workloads, timed before a store is measured.

The bars are judged on a shared machine whose speed drifts between days (session 9 found one thread's
pass over 100k x 384 float32 at 18-28 ms, where an earlier session had measured 10-11 ms: see
``epigraph/graph/embedded/vectors.py``), so every results file carries, beside each store's figures, what
the same machine did on these workloads at that time:

- ``matvec_100k_ms``: one pass of ``einsum('ij,j->i')`` over 100,000 x 384 float32 on one thread, the
  embedded store's exact vector search floor (memory-bound: 154 MB per pass);
- ``python_ms``: a fixed pure-Python loop (interpreter speed, which the stores' client code depends on).

Each is the median of ``repeat`` runs, measured in a child process (so the 154 MB matrix never counts in
the peak RSS the store bench reports for the embedded store).
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from collections.abc import Callable

import numpy as np

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
        [sys.executable, __file__, str(repeat)], capture_output=True, text=True, check=True, timeout=300
    )
    result: dict[str, float] = json.loads(child.stdout)
    return result


if __name__ == "__main__":
    print(json.dumps(measure(int(sys.argv[1]) if len(sys.argv) > 1 else 15)))
