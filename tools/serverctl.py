"""What tools/neo4j/neo4jctl.py and tools/kafka/kafkactl.py share: a dev server in a JVM, built by Maven,
started on free loopback ports, stopped for sure (see their README.md files). Standard library only.

A :class:`Tool` names the server's directory, its launcher's main class and how its address is written
(``run/uri`` for Neo4j, ``run/bootstrap`` for Kafka); the functions below build it, wait for it, stop it
and run a command beside it, the same way for both.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

STOP_TIMEOUT = 60.0


@dataclass(frozen=True)
class Tool:
    name: str  # "neo4j", "kafka": the log prefix is "<name>ctl"
    here: Path  # tools/<name>
    main_class: str  # the launcher's class, compiled to target/classes; also how its process is recognized
    address: str  # the file under run/ that holds the server's address: "uri", "bootstrap"

    @property
    def pom(self) -> Path:
        return self.here / "pom.xml"

    @property
    def sources(self) -> list[Path]:
        return [self.pom, self.here / f"src/main/java/{self.main_class}.java"]

    @property
    def lib(self) -> Path:
        return self.here / "target/lib"

    @property
    def classes(self) -> Path:
        return self.here / "target/classes"

    @property
    def run(self) -> Path:
        return self.here / "run"

    @property
    def address_file(self) -> Path:
        return self.run / self.address

    @property
    def pid_file(self) -> Path:
        return self.run / "pid"

    def log(self, msg: str) -> None:
        print(f"{self.name}ctl: {msg}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------- build
def build(tool: Tool, force: bool = False) -> None:
    """``mvn package`` unless target/ is newer than pom.xml and the launcher's source."""
    stamp = tool.lib / ".built"
    newest_source = max(p.stat().st_mtime for p in tool.sources)
    built = stamp.exists() and (tool.classes / f"{tool.main_class}.class").exists()
    if not force and built and stamp.stat().st_mtime >= newest_source:
        return
    if not stamp.exists() or stamp.stat().st_mtime < tool.pom.stat().st_mtime:
        # copy-dependencies never deletes: drop old jars so a version change cannot leave two versions on
        # the classpath. (Never rebuild under a running server: its classpath is target/lib.)
        shutil.rmtree(tool.lib, ignore_errors=True)
    cmd = [os.environ.get("MVN", "mvn"), "-q", "-B", "-f", str(tool.pom), "package"]
    tool.log("building: " + " ".join(cmd))
    t0 = time.monotonic()
    subprocess.run(cmd, check=True)
    stamp.touch()
    tool.log(f"built in {time.monotonic() - t0:.1f} s")


def settings_file(
    path: Path, defaults: dict[str, str], settings: list[str], option: str = "--setting"
) -> None:
    """``defaults`` plus KEY=VALUE pairs (which win), written to ``path`` as ``key=value`` lines."""
    merged = dict(defaults)
    for item in settings:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            sys.exit(f"{option} needs KEY=VALUE, got {item!r}")
        merged[key.strip()] = value.strip()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{key}={value}\n" for key, value in merged.items()))


# ---------------------------------------------------------------- processes
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def tail(path: Path, lines: int = 40) -> str:
    try:
        text = path.read_text(errors="replace").splitlines()
    except OSError:
        return f"({path} not found)"
    return "\n".join(text[-lines:])


def spawn(cmd: list[str], out: Path, stdin: int | None, env: dict[str, str]) -> subprocess.Popen[bytes]:
    """The server in its own session (Ctrl-C in a terminal reaches us, not it), output to ``out``."""
    with open(out, "wb") as f:
        return subprocess.Popen(
            cmd, stdin=stdin, stdout=f, stderr=subprocess.STDOUT, env=env, start_new_session=True
        )


def await_ready(
    tool: Tool, proc: subprocess.Popen[bytes], ready: Callable[[], object], timeout: float
) -> bool:
    """Poll ``ready`` until it holds (True) or the process exits or ``timeout`` passes (False; a server
    still running then is stopped)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        if ready():
            return True
        time.sleep(0.25)
    if proc.poll() is None:
        tool.log(f"{tool.name} not ready after {timeout:.0f} s")
        stop_pid(tool, proc.pid, proc)
    return False


def retry_or_exit(
    tool: Tool,
    proc: subprocess.Popen[bytes],
    out: Path,
    attempt: int,
    ports: str,
    logs: tuple[Path, ...] = (),
) -> None:
    """After a start that failed: return if a chosen free port was taken in between and ``attempt`` (0-2)
    leaves a retry; else print the tails of ``out`` and ``logs`` and exit 1."""
    if (
        proc.poll() is not None
        and "Address already in use" in out.read_text(errors="replace")
        and attempt < 2
    ):
        tool.log(f"port {ports} was taken, retrying")
        return
    tool.log(f"startup failed (exit code {proc.returncode}); tail of {out}:\n{tail(out)}")
    for path in logs:
        tool.log(f"tail of {path}:\n{tail(path)}")
    sys.exit(1)


def is_launcher(tool: Tool, pid: int) -> bool:
    """True if pid is alive and is one of our launchers (guards against pid reuse)."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    zombie = stat.rsplit(")", 1)[1].split()[0] == "Z"
    return not zombie and tool.main_class.encode() in cmdline


def stop_pid(tool: Tool, pid: int, proc: subprocess.Popen[bytes] | None = None) -> None:
    """SIGTERM, wait up to STOP_TIMEOUT, then SIGKILL. proc (if ours) is reaped."""

    def alive() -> bool:
        return proc.poll() is None if proc is not None else is_launcher(tool, pid)

    if not alive():
        return
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_TIMEOUT
    while alive() and time.monotonic() < deadline:
        time.sleep(0.1)
    if alive():
        tool.log(f"pid {pid} ignored SIGTERM for {STOP_TIMEOUT:.0f} s; sending SIGKILL")
        os.kill(pid, signal.SIGKILL)
        if proc is not None:
            proc.wait()


def running_pid(tool: Tool) -> int | None:
    try:
        pid = int(tool.pid_file.read_text())
    except (OSError, ValueError):
        return None
    return pid if is_launcher(tool, pid) else None


# ---------------------------------------------------------------- commands
def already_running(tool: Tool) -> bool:
    """For ``start``: print the running server's address (and say so) if there is one."""
    if running_pid(tool) is None:
        return False
    print(tool.address_file.read_text().strip())
    tool.log("already running")
    return True


def started(tool: Tool, proc: subprocess.Popen[bytes], address: str) -> int:
    """For ``start``: record the server's pid and address, print the address."""
    tool.pid_file.write_text(f"{proc.pid}\n")
    tool.address_file.write_text(address + "\n")
    print(address, flush=True)
    return 0


def stop(tool: Tool) -> int:
    pid = running_pid(tool)
    if pid is not None:
        tool.log(f"stopping pid {pid}")
        stop_pid(tool, pid)
    for f in (tool.address_file, tool.pid_file):
        f.unlink(missing_ok=True)
    return 0


def status(tool: Tool) -> int:
    if running_pid(tool) is None:
        tool.log("not running")
        return 1
    print(tool.address_file.read_text().strip())
    return 0


def run_workdir(tool: Tool, command: list[str]) -> Path | None:
    """For ``run``: build, then a fresh ``run/run-<pid>/`` (never the files of ``start``, so a server it
    started is left alone); None (after saying why) when there is no command."""
    if not command:
        tool.log(f"run needs a command: {tool.name}ctl.py run -- CMD ...")
        return None
    build(tool)
    workdir = tool.run / f"run-{os.getpid()}"
    shutil.rmtree(workdir, ignore_errors=True)
    workdir.mkdir(parents=True)
    return workdir


def run_beside(
    tool: Tool, command: list[str], env: dict[str, str], proc: subprocess.Popen[bytes], workdir: Path
) -> int:
    """Run ``command`` with ``env`` added, then always stop the server; CMD's exit code (128+N for a
    signal). The work directory goes after success and stays, with its logs, otherwise."""
    code = 1
    try:
        rc = subprocess.run(command, env={**os.environ, **env}).returncode
        code = 128 - rc if rc < 0 else rc  # killed by a signal: shell convention
    except KeyboardInterrupt:
        code = 130
    finally:
        stop_pid(tool, proc.pid, proc)
        if code == 0:
            shutil.rmtree(workdir, ignore_errors=True)
        else:
            tool.log(f"{tool.name} logs kept in {workdir}")
    return code


def command_of(args: argparse.Namespace) -> list[str]:
    command: list[str] = args.command
    return command[1:] if command[:1] == ["--"] else command


def parser(
    doc: str | None, *, heap: str, setting_help: str, timeout: float
) -> tuple[argparse.ArgumentParser, argparse.ArgumentParser, argparse.ArgumentParser]:
    """The command line: ``build [--force]``, ``stop``, ``status``, and ``start`` and ``run`` with
    ``--heap``, ``--setting``, ``--timeout`` (``start``: ``--tie-to-parent``; ``run``: ``-- CMD``).
    Returns the parser and the ``start`` and ``run`` parsers, for the server's own options."""
    p = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build", help="compile the launcher and fetch the jars (mvn package)")
    b.add_argument("--force", action="store_true", help="build even if up to date")
    start = sub.add_parser("start", help="a background server; prints its address")
    run = sub.add_parser("run", help="an own server for -- CMD ..., always stopped; CMD's exit code")
    sub.add_parser("stop", help="stop the server of `start` (SIGTERM, SIGKILL after 60 s)")
    sub.add_parser("status", help="print the address of the server of `start` (exit 1 if not running)")
    for s in (start, run):
        s.add_argument("--heap", default=heap, help=f"-Xmx (default {heap})")
        s.add_argument("--setting", action="append", default=[], metavar="KEY=VALUE", help=setting_help)
        s.add_argument("--timeout", type=float, default=timeout, help="readiness deadline in seconds")
    start.add_argument(
        "--tie-to-parent",
        action="store_true",
        help="the server inherits this command's stdin and exits when it reaches EOF: "
        "start it with a pipe its owner keeps open (never with </dev/null)",
    )
    run.add_argument("command", nargs=argparse.REMAINDER, help="-- CMD ...")
    return p, start, run


def dispatch(
    tool: Tool, args: argparse.Namespace, commands: dict[str, Callable[[argparse.Namespace], int]]
) -> int:
    """Run the chosen command (``build``, ``stop`` and ``status`` are built in)."""

    def cmd_build(a: argparse.Namespace) -> int:
        build(tool, force=a.force)
        return 0

    builtins: dict[str, Callable[[argparse.Namespace], int]] = {
        "build": cmd_build,
        "stop": lambda _: stop(tool),
        "status": lambda _: status(tool),
    }
    # SIGTERM (e.g. a CI timeout) unwinds like Ctrl-C, so `finally` blocks stop the server.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        return {**builtins, **commands}[args.cmd](args)
    except subprocess.CalledProcessError as e:
        tool.log(f"command failed with exit code {e.returncode}: {' '.join(map(str, e.cmd))}")
        return 1
