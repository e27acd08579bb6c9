#!/usr/bin/env python3
"""Build, start and stop an embedded Neo4j 5.26 Community server for dev and CI (see README.md).

    neo4jctl.py build                  # mvn package: target/classes + target/lib (skipped if up to date)
    neo4jctl.py start [--home DIR]     # background server; prints bolt://127.0.0.1:PORT
    neo4jctl.py status                 # prints the URI if running (exit 1 if not)
    neo4jctl.py stop                   # SIGTERM, then SIGKILL after 60 s
    neo4jctl.py run -- CMD ...         # own server for CMD, EPIGRAPH_NEO4J_URI set; always stopped

Standard library only. The Java is chosen by jvm.py (a JDK on which Lucene's vector code runs SIMD if
there is one, else `java` on PATH; NEO4J_JAVA overrides it); `mvn` is on PATH (MVN overrides it).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import jvm

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import serverctl  # tools/serverctl.py: what this shares with tools/kafka/kafkactl.py

TOOL = serverctl.Tool("neo4j", Path(__file__).resolve().parent, "Launcher", "uri")
TARGET, LIB, CLASSES, RUN = TOOL.here / "target", TOOL.lib, TOOL.classes, TOOL.run

READY_TIMEOUT = 180.0
BOLT_MAGIC = b"\x60\x60\xb0\x17"
# Four proposals: 5.8 down to 5.0, 4.4 down to 4.0, then two empty slots.
BOLT_VERSIONS = bytes([0, 8, 8, 5, 0, 4, 4, 4]) + bytes(8)


# Lucene tuning for the vector indexes (measured in README.md "Performance"):
# - Segments small enough for Neo4j's NRT cache live in on-heap buffers, where a 384-float vector that
#   straddles two buffers is read byte by byte through a BufferUnderflowException per read; with the
#   default 50 MB cache HNSW searches ran 2x slower. 2 MB keeps the cheap in-memory flush of small
#   (episode-sized) commits and puts everything bigger in memory-mapped files. A JVM system property.
# - A vector index merges its segments only 50 at a time by default, and a search walks every segment's
#   HNSW graph: merging 20 at a time keeps searches fast; 10 made bulk writes ~20% slower (every merge
#   re-inserts the vectors into a new graph). A neo4j.conf setting (--setting overrides it).
FEATURE_TOGGLES = {"org.neo4j.kernel.api.impl.index.storage.DirectoryFactory.max_cached_mb": 2}
DEFAULT_SETTINGS = {"internal.dbms.index.vector.standard_merge_factor": "20"}


def jvm_flags(major: int, heap: str) -> list[str]:
    flags = [
        "-Xms512m",
        f"-Xmx{heap}",
        "-XX:+UseG1GC",
        "-XX:+ExitOnOutOfMemoryError",
        # Without these 5.26 still starts on Java 17, but the page cache falls back to a slower mode
        # (java.nio) and the transaction-log fadvise calls fail with warnings (sun.nio.ch, java.io).
        "--add-opens=java.base/java.nio=ALL-UNNAMED",
        "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
        "--add-opens=java.base/java.io=ALL-UNNAMED",
        "--enable-native-access=ALL-UNNAMED",
    ]
    flags += [f"-D{key}={value}" for key, value in FEATURE_TOGGLES.items()]
    if major >= 24:  # JDK 17 rejects this flag
        flags.append("--sun-misc-unsafe-memory-access=allow")
    extra = os.environ.get("NEO4J_JVM_FLAGS", "").split()  # e.g. profiling flags, see README.md
    if any(re.fullmatch(r"-XX:\+Use\w+GC", flag) for flag in extra):  # another collector replaces G1
        flags.remove("-XX:+UseG1GC")
    return flags + extra


# ---------------------------------------------------------------- processes
def bolt_handshake(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
            s.sendall(BOLT_MAGIC + BOLT_VERSIONS)
            reply = s.recv(4)
            return len(reply) == 4 and reply != bytes(4)
    except OSError:
        return False


def write_settings(home: Path, settings: list[str]) -> None:
    """DEFAULT_SETTINGS plus --setting KEY=VALUE pairs (which win) become HOME/neo4j.conf (the launcher
    loads it, strictly validated)."""
    serverctl.settings_file(home / "neo4j.conf", DEFAULT_SETTINGS, settings, option="neo4jctl: --setting")


def launch(
    home: Path, out: Path, *, stdin, heap: str, pagecache: str, password: str | None, timeout: float
) -> tuple[subprocess.Popen, str, str]:
    """Start a launcher on a fresh port; return (process, uri, Java description) once Bolt answers.
    Exits on failure.

    stdin: DEVNULL (the server outlives us), PIPE (it dies with us) or None (it dies when the stdin
    we inherited reaches EOF). Both of the latter make the launcher watch its stdin.
    """
    java = jvm.choose()
    simd_flags, first_on_classpath, described = jvm.simd_setup(java, LIB, TARGET)
    flags = jvm_flags(java.major, heap) + simd_flags + [f"-Dneo4j.pagecache={pagecache}"]
    classpath = os.pathsep.join([*first_on_classpath, str(CLASSES), f"{LIB}/*"])
    env = dict(os.environ)
    env.pop("NEO4J_PASSWORD", None)
    if password:
        env["NEO4J_PASSWORD"] = password
    if stdin is not subprocess.DEVNULL:
        env["NEO4J_EXIT_ON_STDIN_EOF"] = "1"
    home.mkdir(parents=True, exist_ok=True)
    for attempt in range(3):  # retry only if someone grabbed the free port in between
        port = serverctl.free_port()
        cmd = [java.path, *flags, "-cp", classpath, TOOL.main_class, str(home), str(port)]
        t0 = time.monotonic()
        proc = serverctl.spawn(cmd, out, stdin, env)
        uri = f"bolt://127.0.0.1:{port}"

        def ready(uri: str = uri, port: int = port) -> bool:
            return f"READY {uri}" in out.read_text(errors="replace") and bolt_handshake(port)

        if serverctl.await_ready(TOOL, proc, ready, timeout):
            TOOL.log(f"neo4j ready at {uri} in {time.monotonic() - t0:.1f} s (pid {proc.pid}; {described})")
            return proc, uri, described
        serverctl.retry_or_exit(TOOL, proc, out, attempt, str(port), logs=(home / "logs/debug.log",))
    raise AssertionError("unreachable")


# ---------------------------------------------------------------- commands
def cmd_start(args: argparse.Namespace) -> int:
    if serverctl.already_running(TOOL):
        return 0
    serverctl.build(TOOL)
    RUN.mkdir(exist_ok=True)
    if args.home:
        home = Path(args.home).resolve()
    else:
        home = RUN / "home"
        shutil.rmtree(home, ignore_errors=True)  # a fresh, empty DBMS on every start
    if args.setting or not (home / "neo4j.conf").exists():  # an existing --home keeps its own conf
        write_settings(home, args.setting)
    stdin = None if args.tie_to_parent else subprocess.DEVNULL
    proc, uri, _ = launch(
        home,
        RUN / "neo4j.out",
        stdin=stdin,
        heap=args.heap,
        pagecache=args.pagecache,
        password=args.password,
        timeout=args.timeout,
    )
    return serverctl.started(TOOL, proc, uri)


def cmd_run(args: argparse.Namespace) -> int:
    command = serverctl.command_of(args)
    workdir = serverctl.run_workdir(TOOL, command)  # an own home, so a server from `start` is left alone
    if workdir is None:
        return 2
    write_settings(workdir / "home", args.setting)
    # stdin=PIPE: should this process die without its `finally`, the server sees EOF and exits too.
    proc, uri, java = launch(
        workdir / "home",
        workdir / "neo4j.out",
        stdin=subprocess.PIPE,
        heap=args.heap,
        pagecache=args.pagecache,
        password=args.password,
        timeout=args.timeout,
    )
    env = {
        "EPIGRAPH_NEO4J_URI": uri,
        "EPIGRAPH_NEO4J_PID": str(proc.pid),
        "EPIGRAPH_NEO4J_JAVA": java,
        "EPIGRAPH_NEO4J_LOG": str(workdir / "neo4j.out"),
    }
    if args.password:
        env.update(EPIGRAPH_NEO4J_USER="neo4j", EPIGRAPH_NEO4J_PASSWORD=args.password)
    return serverctl.run_beside(TOOL, command, env, proc, workdir)


def main(argv: list[str] | None = None) -> int:
    p, start, run = serverctl.parser(
        __doc__,
        heap="1g",
        setting_help="a neo4j.conf setting for this server (repeatable; written to HOME/neo4j.conf)",
        timeout=READY_TIMEOUT,
    )
    for s in (start, run):
        s.add_argument(
            "--password", help="enable auth with user neo4j and this password (>= 8 chars); default: auth off"
        )
        s.add_argument("--pagecache", default="256m", help="page cache size (default 256m)")
    start.add_argument("--home", help="DBMS home (kept as is); default: a fresh tools/neo4j/run/home")
    args = p.parse_args(argv)
    if getattr(args, "password", None) is not None and len(args.password) < 8:
        p.error("--password needs at least 8 characters")
    return serverctl.dispatch(TOOL, args, {"start": cmd_start, "run": cmd_run})


if __name__ == "__main__":
    sys.exit(main())
