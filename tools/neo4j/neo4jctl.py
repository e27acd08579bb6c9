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
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import jvm

HERE = Path(__file__).resolve().parent
POM = HERE / "pom.xml"
SOURCES = [POM, HERE / "src/main/java/Launcher.java"]
TARGET = HERE / "target"
LIB = TARGET / "lib"
CLASSES = TARGET / "classes"
STAMP = LIB / ".built"
RUN = HERE / "run"
URI_FILE, PID_FILE, LOG_FILE = RUN / "uri", RUN / "pid", RUN / "neo4j.out"

READY_TIMEOUT = 180.0
STOP_TIMEOUT = 60.0
BOLT_MAGIC = b"\x60\x60\xb0\x17"
# Four proposals: 5.8 down to 5.0, 4.4 down to 4.0, then two empty slots.
BOLT_VERSIONS = bytes([0, 8, 8, 5, 0, 4, 4, 4]) + bytes(8)


def log(msg: str) -> None:
    print(f"neo4jctl: {msg}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------- build
def build(force: bool = False) -> None:
    newest_source = max(p.stat().st_mtime for p in SOURCES)
    if (
        not force
        and STAMP.exists()
        and (CLASSES / "Launcher.class").exists()
        and STAMP.stat().st_mtime >= newest_source
    ):
        return
    if not STAMP.exists() or STAMP.stat().st_mtime < POM.stat().st_mtime:
        # copy-dependencies never deletes: drop old jars so a version change cannot leave two Neo4js on
        # the classpath. (Never rebuild under a running server: its classpath is target/lib.)
        shutil.rmtree(LIB, ignore_errors=True)
    cmd = [os.environ.get("MVN", "mvn"), "-q", "-B", "-f", str(POM), "package"]
    log("building: " + " ".join(cmd))
    t0 = time.monotonic()
    subprocess.run(cmd, check=True)
    STAMP.touch()
    log(f"built in {time.monotonic() - t0:.1f} s")


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
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def bolt_handshake(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
            s.sendall(BOLT_MAGIC + BOLT_VERSIONS)
            reply = s.recv(4)
            return len(reply) == 4 and reply != bytes(4)
    except OSError:
        return False


def tail(path: Path, lines: int = 40) -> str:
    try:
        text = path.read_text(errors="replace").splitlines()
    except OSError:
        return f"({path} not found)"
    return "\n".join(text[-lines:])


def is_launcher(pid: int) -> bool:
    """True if pid is alive and is one of our launchers (guards against pid reuse)."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    zombie = stat.rsplit(")", 1)[1].split()[0] == "Z"
    return not zombie and b"Launcher" in cmdline


def write_settings(home: Path, settings: list[str]) -> None:
    """DEFAULT_SETTINGS plus --setting KEY=VALUE pairs (which win) become HOME/neo4j.conf (the launcher
    loads it, strictly validated)."""
    merged = dict(DEFAULT_SETTINGS)
    for item in settings:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            sys.exit(f"neo4jctl: --setting needs KEY=VALUE, got {item!r}")
        merged[key.strip()] = value.strip()
    home.mkdir(parents=True, exist_ok=True)
    (home / "neo4j.conf").write_text("".join(f"{key}={value}\n" for key, value in merged.items()))


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
        port = free_port()
        cmd = [java.path, *flags, "-cp", classpath, "Launcher", str(home), str(port)]
        t0 = time.monotonic()
        with open(out, "wb") as f:
            proc = subprocess.Popen(
                cmd, stdin=stdin, stdout=f, stderr=subprocess.STDOUT, env=env, start_new_session=True
            )  # Ctrl-C in a terminal reaches us, not it
        uri = f"bolt://127.0.0.1:{port}"
        deadline = t0 + timeout
        while time.monotonic() < deadline and proc.poll() is None:
            if f"READY {uri}" in out.read_text(errors="replace") and bolt_handshake(port):
                log(f"neo4j ready at {uri} in {time.monotonic() - t0:.1f} s (pid {proc.pid}; {described})")
                return proc, uri, described
            time.sleep(0.25)
        if proc.poll() is None:
            log(f"neo4j not ready after {timeout:.0f} s")
            stop_pid(proc.pid, proc)
        elif "Address already in use" in out.read_text(errors="replace") and attempt < 2:
            log(f"port {port} was taken, retrying")
            continue
        log(f"startup failed (exit code {proc.returncode}); tail of {out}:\n{tail(out)}")
        log(f"tail of {home / 'logs/debug.log'}:\n{tail(home / 'logs/debug.log')}")
        sys.exit(1)
    raise AssertionError("unreachable")


def stop_pid(pid: int, proc: subprocess.Popen | None = None) -> None:
    """SIGTERM, wait up to STOP_TIMEOUT, then SIGKILL. proc (if ours) is reaped."""

    def alive() -> bool:
        return proc.poll() is None if proc is not None else is_launcher(pid)

    if not alive():
        return
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_TIMEOUT
    while alive() and time.monotonic() < deadline:
        time.sleep(0.2)
    if alive():
        log(f"pid {pid} ignored SIGTERM for {STOP_TIMEOUT:.0f} s; sending SIGKILL")
        os.kill(pid, signal.SIGKILL)
        if proc is not None:
            proc.wait()


def running_pid() -> int | None:
    try:
        pid = int(PID_FILE.read_text())
    except (OSError, ValueError):
        return None
    return pid if is_launcher(pid) else None


# ---------------------------------------------------------------- commands
def cmd_build(args: argparse.Namespace) -> int:
    build(force=args.force)
    return 0


def cmd_start(args: argparse.Namespace) -> int:
    if running_pid() is not None:
        print(URI_FILE.read_text().strip())
        log("already running")
        return 0
    build()
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
        LOG_FILE,
        stdin=stdin,
        heap=args.heap,
        pagecache=args.pagecache,
        password=args.password,
        timeout=args.timeout,
    )
    PID_FILE.write_text(f"{proc.pid}\n")
    URI_FILE.write_text(uri + "\n")
    print(uri, flush=True)
    return 0


def remove_run_files() -> None:
    for f in (URI_FILE, PID_FILE):
        f.unlink(missing_ok=True)


def cmd_stop(args: argparse.Namespace) -> int:
    pid = running_pid()
    if pid is not None:
        log(f"stopping pid {pid}")
        stop_pid(pid)
    remove_run_files()
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    if running_pid() is None:
        log("not running")
        return 1
    print(URI_FILE.read_text().strip())
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        log("run needs a command: neo4jctl.py run -- CMD ...")
        return 2
    build()
    # An own home and no uri/pid files, so a server from `start` is left alone.
    workdir = RUN / f"run-{os.getpid()}"
    shutil.rmtree(workdir, ignore_errors=True)
    workdir.mkdir(parents=True)
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
    code = 1
    try:
        env = {
            **os.environ,
            "EPIGRAPH_NEO4J_URI": uri,
            "EPIGRAPH_NEO4J_PID": str(proc.pid),
            "EPIGRAPH_NEO4J_JAVA": java,
            "EPIGRAPH_NEO4J_LOG": str(workdir / "neo4j.out"),
        }
        if args.password:
            env.update(EPIGRAPH_NEO4J_USER="neo4j", EPIGRAPH_NEO4J_PASSWORD=args.password)
        rc = subprocess.run(command, env=env).returncode
        code = 128 - rc if rc < 0 else rc  # killed by a signal: shell convention
    except KeyboardInterrupt:
        code = 130
    finally:
        stop_pid(proc.pid, proc)
        if code == 0:
            shutil.rmtree(workdir, ignore_errors=True)
        else:
            log(f"neo4j logs kept in {workdir}")
    return code


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build", help="compile the launcher and fetch the jars (mvn package)")
    b.add_argument("--force", action="store_true", help="build even if up to date")
    b.set_defaults(func=cmd_build)
    for name, func in (("start", cmd_start), ("run", cmd_run)):
        s = sub.add_parser(name)
        s.add_argument(
            "--password", help="enable auth with user neo4j and this password (>= 8 chars); default: auth off"
        )
        s.add_argument("--heap", default="1g", help="-Xmx (default 1g)")
        s.add_argument("--pagecache", default="256m", help="page cache size (default 256m)")
        s.add_argument(
            "--setting",
            action="append",
            default=[],
            metavar="KEY=VALUE",
            help="a neo4j.conf setting for this server (repeatable; written to HOME/neo4j.conf)",
        )
        s.add_argument("--timeout", type=float, default=READY_TIMEOUT, help="readiness deadline in seconds")
        s.set_defaults(func=func)
        if name == "start":
            s.add_argument("--home", help="DBMS home (kept as is); default: a fresh tools/neo4j/run/home")
            s.add_argument(
                "--tie-to-parent",
                action="store_true",
                help="the server inherits this command's stdin and exits when it reaches EOF: "
                "start it with a pipe its owner keeps open (never with </dev/null)",
            )
        else:
            s.add_argument("command", nargs=argparse.REMAINDER, help="-- CMD ...")
    sub.add_parser("stop").set_defaults(func=cmd_stop)
    sub.add_parser("status").set_defaults(func=cmd_status)
    args = p.parse_args(argv)
    if getattr(args, "password", None) is not None and len(args.password) < 8:
        p.error("--password needs at least 8 characters")
    # SIGTERM (e.g. a CI timeout) unwinds like Ctrl-C, so `finally` blocks stop the server.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        return args.func(args)
    except subprocess.CalledProcessError as e:
        log(f"command failed with exit code {e.returncode}: {' '.join(map(str, e.cmd))}")
        return 1


if __name__ == "__main__":
    sys.exit(main())
