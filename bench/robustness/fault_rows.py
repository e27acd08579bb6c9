"""The fault bench's rows of faults on the store's side, each: a clear error (or a retry), nothing
half-written, and ingestion resumed once the cause is gone, with nothing lost against the reference.

- ``neo4j_restart``: the Neo4j server that ``tools/neo4j/neo4jctl.py run`` started is stopped (SIGTERM)
  while the child ingests, started again on the same home and port a few seconds later; the child either
  rides it out or fails episodes with an error, and a second run resumes.
- ``disk_full``: the embedded store's file on a 2 MB tmpfs, the rest of which a filler file takes but a
  little; the child ingests until the file system is full; the filler goes and a second run resumes.
- ``read_only``: the tmpfs holding the store remounted read-only; a run must fail with a clear error at
  open or write; remounted read-write, a second run resumes.

The tmpfs rows need root (``mount``); without it they are skipped with a note.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.robustness.fault_graph import (
    Snapshot,
    missing,
    neo4j_integrity,
    reference,
    snapshot,
    sqlite_integrity,
    with_store,
)
from bench.robustness.fault_harness import (
    DELAY_S,
    Child,
    FaultWorld,
    child_env,
    drain,
    settings_of,
    write_episodes,
)

Found = tuple[dict[str, float], list[str]]


@dataclass
class RowContext:
    world: FaultWorld
    llm_url: str
    work: Path
    episodes: int


def _last_error(child: Child, log: Path, since: int) -> str:
    """What the child said went wrong: its episodes' errors, else the exception it ended with (the last
    line of its stderr naming an ``epigraph.errors`` exception), else its last line of stderr."""
    errors = sorted(set(child.failures()))
    if errors:
        return "; ".join(e[:300] for e in errors[:3])
    lines = log.read_bytes()[since:].decode(errors="replace").strip().splitlines()
    raised = [line for line in lines if line.startswith("epigraph.errors.")]
    return (raised or lines or ["(nothing)"])[-1][:400]


def _count(log: Path, since: int, words: str) -> int:
    return log.read_bytes()[since:].decode(errors="replace").count(words)


def _judge(snap: Snapshot, ref: list[Any], problems: list[str]) -> tuple[int, int, list[str]]:
    """(half_written, integrity_failures, what) of a state a fault left."""
    half = 1 if snap.half_written or snap.duplicates() or snap.graph() != ref[len(snap.done)] else 0
    what = snap.half_written + snap.duplicates() + problems
    if half and not what:
        what = [f"the graph is not the reference after {len(snap.done)} episodes"]
    return half, 1 if problems or snap.dangling else 0, what


async def _resume(ctx: RowContext, file: Path, env: dict[str, str], log: Path) -> tuple[int, Child]:
    child = Child(file, env, ctx.world.events, log)
    return await asyncio.to_thread(child.wait, 300), child


def _lost(final: Snapshot, ref: list[Any], labels: list[str]) -> int:
    return sum(1 for label in labels if label not in final.done) + len(missing(ref[-1], final.graph()))


# --- neo4j_restart -------------------------------------------------------------------------------------
class Neo4jServer:
    """The server of ``neo4jctl.py run`` (``EPIGRAPH_NEO4J_PID``, its log ``EPIGRAPH_NEO4J_LOG`` beside
    its home), stopped and started again on the same home and port with the launcher of that checkout's
    ``tools/neo4j`` (its stdin a pipe of ours: it exits with this process at the latest)."""

    def __init__(self) -> None:
        self.pid = int(os.environ["EPIGRAPH_NEO4J_PID"])
        log = Path(os.environ["EPIGRAPH_NEO4J_LOG"])
        self.home, self.tools = log.parent / "home", log.parents[2]
        match = re.search(r":(\d+)$", os.environ["EPIGRAPH_NEO4J_URI"])
        assert match, os.environ["EPIGRAPH_NEO4J_URI"]
        self.port = int(match[1])
        self.proc: subprocess.Popen[bytes] | None = None

    @staticmethod
    def available() -> bool:
        return all(
            os.environ.get(k) for k in ("EPIGRAPH_NEO4J_PID", "EPIGRAPH_NEO4J_LOG", "EPIGRAPH_NEO4J_URI")
        )

    def stop(self) -> None:
        pid = self.proc.pid if self.proc is not None else self.pid
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 60
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        if self.proc is not None:
            self.proc.wait(10)

    def start(self) -> None:
        sys.path[:0] = [str(self.tools), str(self.tools.parent)]
        import jvm  # tools/neo4j/jvm.py
        import neo4jctl  # tools/neo4j/neo4jctl.py
        import serverctl  # tools/serverctl.py

        java = jvm.choose()
        simd_flags, first, _ = jvm.simd_setup(java, neo4jctl.LIB, neo4jctl.TARGET)
        flags = neo4jctl.jvm_flags(java.major, "1g") + simd_flags + ["-Dneo4j.pagecache=256m"]
        classpath = os.pathsep.join([*first, str(neo4jctl.CLASSES), f"{neo4jctl.LIB}/*"])
        env = {**os.environ, "NEO4J_EXIT_ON_STDIN_EOF": "1"}
        env.pop("NEO4J_PASSWORD", None)
        out = self.home.parent / "neo4j.restarted.out"
        cmd = [java.path, *flags, "-cp", classpath, neo4jctl.TOOL.main_class, str(self.home), str(self.port)]
        self.proc = serverctl.spawn(cmd, out, subprocess.PIPE, env)
        ready = f"READY bolt://127.0.0.1:{self.port}"
        if not serverctl.await_ready(neo4jctl.TOOL, self.proc,
                                     lambda: ready in out.read_text(errors="replace")
                                     and neo4jctl.bolt_handshake(self.port), 180):  # fmt: skip
            raise SystemExit(f"neo4j did not start again; see {out}")

    def close(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.stop()


def _until_written(child: Child, writes: int) -> None:
    while sum(1 for x in child.lines if x.get("event") == "wrote") < writes and child.alive():
        time.sleep(0.05)


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


async def neo4j_restart(ctx: RowContext) -> Found:
    if not Neo4jServer.available():
        return {}, ["not measured (needs the server of tools/neo4j/neo4jctl.py run)"]
    store = {k: v for k, v in os.environ.items() if k.startswith("EPIGRAPH_NEO4J_")}
    env = child_env(ctx.llm_url, store)
    run = os.urandom(3).hex()
    ref_file = ctx.work / "restart-ref.jsonl"
    write_episodes(ref_file, f"restart-ref-{run}", ctx.episodes)
    ctx.world.delay_s = 0.0
    ref = await reference(settings_of(env), ref_file, f"restart-ref-{run}")
    group, file, log = f"restart-{run}", ctx.work / "restart.jsonl", ctx.work / "restart.log"
    labels = write_episodes(file, group, ctx.episodes)
    ctx.world.delay_s = DELAY_S
    drain(ctx.world.events)
    server = Neo4jServer()
    try:
        since = log.stat().st_size if log.exists() else 0
        child = Child(file, env, ctx.world.events, log)
        await asyncio.to_thread(_until_written, child, 3 * 2)  # three episodes: an accept and a done each
        await asyncio.to_thread(server.stop)
        await asyncio.sleep(3)
        await asyncio.to_thread(server.start)
        code = first_exit = await asyncio.to_thread(child.wait, 300)
        said = [f"first run: exit {code}, {len(child.failures())} episodes failed: "
                f"{_last_error(child, log, since)}"]  # fmt: skip
        settings = settings_of(env)
        problems = await neo4j_integrity(settings, group)
        snap = await with_store(settings, lambda s: snapshot(s, group))
        half, integrity, what = _judge(snap, ref, problems)
        resumed = 0
        while len(snap.done) < len(labels) and resumed < 3:
            resumed += 1
            code, _ = await _resume(ctx, file, env, log)
            snap = await with_store(settings, lambda s: snapshot(s, group))
            said.append(f"resumed run {resumed}: exit {code}, {len(snap.done)}/{len(labels)} done")
        lost = _lost(snap, ref, labels)
    finally:
        ctx.world.delay_s = 0.0
        server.close()
    found = {"lost": lost, "half_written": half, "integrity_failures": integrity,
             "first_run_exit": first_exit, "first_run_failed_episodes": len(child.failures()),
             "first_run_driver_retries": _count(log, since, "will be retried"),
             "resumed_runs": resumed}  # fmt: skip
    return found, said + what[:5]


# --- the tmpfs rows ------------------------------------------------------------------------------------
def _mount(path: Path, size: str) -> bool:
    path.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)], capture_output=True
    )
    return done.returncode == 0


def _remount(path: Path, mode: str) -> None:
    subprocess.run(["mount", "-o", f"remount,{mode}", str(path)], check=True, capture_output=True)


def _umount(path: Path) -> None:
    subprocess.run(["umount", str(path)], capture_output=True)


async def _on_tmpfs(
    ctx: RowContext, name: str, fault: Callable[[Path], None], undo: Callable[[Path], None]
) -> Found:
    """The embedded store on a fresh tmpfs: the first episodes ingested, then ``fault`` (given the mount),
    then a run of all of them that must fail clearly or leave nothing half-written, then ``undo`` and a
    resumed run."""
    mount = ctx.work / f"{name}-mnt"
    if not _mount(mount, "2m"):
        return {}, ["not measured (mounting a tmpfs needs root)"]
    try:
        return await _tmpfs_row(ctx, name, mount, fault, undo)
    finally:
        _umount(mount)


async def _tmpfs_row(
    ctx: RowContext, name: str, mount: Path, fault: Callable[[Path], None], undo: Callable[[Path], None]
) -> Found:
    db = mount / "graph.db"
    env = child_env(ctx.llm_url, {"EPIGRAPH_DB": str(db)})
    ref_env = child_env(ctx.llm_url, {"EPIGRAPH_DB": str(ctx.work / f"{name}-ref.db")})
    file, log = ctx.work / f"{name}.jsonl", ctx.work / f"{name}.log"
    labels = write_episodes(file, name, ctx.episodes)
    ctx.world.delay_s = 0.0
    ref = await reference(settings_of(ref_env), file, name)
    first = ctx.work / f"{name}-first.jsonl"
    first.write_text("".join(file.read_text().splitlines(keepends=True)[:2]))
    code, _ = await _resume(ctx, first, env, log)
    if code != 0:
        raise SystemExit(f"{name}: the first episodes failed before the fault; see {log}")
    fault(mount)
    since = log.stat().st_size
    fault_code, child = await _resume(ctx, file, env, log)
    said = [f"run under the fault: exit {fault_code}, {len(child.failures())} episodes failed: "
            f"{_last_error(child, log, since)}"]  # fmt: skip
    undo(mount)  # changes nothing in the store's files: the checks see the state the fault left
    problems = sqlite_integrity(db)
    settings = settings_of(env)
    snap = await with_store(settings, lambda s: snapshot(s, name))
    half, integrity, what = _judge(snap, ref, problems)
    done_under_fault = len(snap.done) - 2
    code, _ = await _resume(ctx, file, env, log)
    final = await with_store(settings, lambda s: snapshot(s, name))
    said.append(f"resumed once the cause was gone: exit {code}, {len(final.done)}/{len(labels)} done")
    found = {"lost": _lost(final, ref, labels), "half_written": half, "integrity_failures": integrity,
             "done_under_fault": done_under_fault, "failed_under_fault": len(child.failures()),
             "exit_under_fault": fault_code}  # fmt: skip
    return found, said + what[:5]


FILLER = "filler"
MARGIN = 384 * 1024
"""Bytes left free on the tmpfs for the run under ``disk_full``: a few episodes fit, then it is full."""


def _fill(mount: Path) -> None:
    free = os.statvfs(mount).f_bavail * os.statvfs(mount).f_frsize
    with (mount / FILLER).open("wb") as f:
        f.write(b"\0" * max(0, free - MARGIN))


def _unfill(mount: Path) -> None:
    (mount / FILLER).unlink()


async def disk_full(ctx: RowContext) -> Found:
    return await _on_tmpfs(ctx, "disk_full", _fill, _unfill)


async def read_only(ctx: RowContext) -> Found:
    return await _on_tmpfs(ctx, "read_only", lambda m: _remount(m, "ro"), lambda m: _remount(m, "rw"))


ROWS: dict[str, Callable[[RowContext], Awaitable[Found]]] = {
    "neo4j_restart": neo4j_restart,
    "disk_full": disk_full,
    "read_only": read_only,
}
