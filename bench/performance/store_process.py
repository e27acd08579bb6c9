"""What the store bench reads of processes: this process's CPU time and peak RSS, the Neo4j JVM's pid
(``EPIGRAPH_NEO4J_PID``, which ``neo4jctl.py run`` sets, else ``tools/neo4j/run/pid``), CPU time and
RSS, when it is idle again after a load, and what its log says of Lucene's SIMD."""

from __future__ import annotations

import asyncio
import os
import resource
import time
from pathlib import Path

from bench.shared.paths import ROOT

SETTLE_LIMIT_S = 300.0


def process_cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def neo4j_pid() -> str:
    """The Neo4j JVM's pid when known (``neo4jctl.py run`` exports it; ``start`` writes run/pid), or ''."""
    pid_file = ROOT / "tools/neo4j/run/pid"
    return os.environ.get("EPIGRAPH_NEO4J_PID") or (pid_file.read_text().strip() if pid_file.exists() else "")


def cpu_seconds(pid: str) -> float | None:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def settle(store: str, limit_s: float = SETTLE_LIMIT_S) -> float:
    """Wait until the Neo4j server is idle (Lucene merges its index segments in the background after
    a bulk load, and a merge holds a core); returns the seconds waited. Immediate for the embedded store
    (no background work) or when the server's pid is unknown."""
    pid = neo4j_pid() if store == "neo4j" else ""
    t0 = time.perf_counter()
    while pid and time.perf_counter() - t0 < limit_s:
        before = cpu_seconds(pid)
        await asyncio.sleep(1.0)
        after = cpu_seconds(pid)
        if before is None or after is None or after - before < 0.05:
            break
    return time.perf_counter() - t0


def memory_mb(store: str) -> float:
    pid = neo4j_pid()
    if store == "neo4j" and pid:
        status = Path(f"/proc/{pid}/status")
        if status.exists():
            for line in status.read_text().splitlines():
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def simd_confirmation() -> str:
    """What the server log (``EPIGRAPH_NEO4J_LOG``, set by ``neo4jctl.py run``) says of Lucene's SIMD."""
    log = Path(os.environ.get("EPIGRAPH_NEO4J_LOG", "/nonexistent"))
    if not log.exists():
        return ""
    enabled = "Java vector incubator API enabled" in log.read_text(errors="replace")
    return "; the server log confirms it" if enabled else "; the server log does not confirm SIMD"
