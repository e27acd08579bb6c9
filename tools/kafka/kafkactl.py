#!/usr/bin/env python3
"""Build, start and stop a single-node Apache Kafka 3.9 (KRaft) for dev and CI (see README.md).

    kafkactl.py build                  # mvn package: target/classes + target/lib (skipped if up to date)
    kafkactl.py start                  # background server; prints 127.0.0.1:PORT (the bootstrap)
    kafkactl.py status                 # prints the bootstrap if running (exit 1 if not)
    kafkactl.py stop                   # SIGTERM, then SIGKILL after 60 s
    kafkactl.py run -- CMD ...         # own server for CMD, EPIGRAPH_KAFKA_BOOTSTRAP set; always stopped

Standard library only. One JVM (KafkaLauncher) formats a fresh data directory
(kafka.tools.StorageTool format) and runs kafka.Kafka on it as a combined broker + controller on two free
loopback ports. Ready means: a raw Kafka Metadata request lists the broker (it is unfenced, so topics
can be created). KAFKA_JAVA replaces `java`, MVN replaces `mvn`, KAFKA_JVM_FLAGS appends JVM flags.
"""

from __future__ import annotations

import argparse
import base64
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import time
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
POM = HERE / "pom.xml"
SOURCES = [POM, HERE / "src/main/java/KafkaLauncher.java"]
TARGET = HERE / "target"
LIB = TARGET / "lib"
CLASSES = TARGET / "classes"
STAMP = LIB / ".built"
RUN = HERE / "run"
BOOTSTRAP_FILE, PID_FILE, LOG_FILE = RUN / "bootstrap", RUN / "pid", RUN / "kafka.out"
MAIN_CLASS = "KafkaLauncher"

READY_TIMEOUT = 120.0
STOP_TIMEOUT = 60.0

# A single node: every internal topic has one replica; few partitions and threads, because the tests
# and the demo run on small machines; a consumer group starts at once (no 3 s initial rebalance delay).
DEFAULT_SETTINGS = {
    "process.roles": "broker,controller",
    "node.id": "1",
    "controller.listener.names": "CONTROLLER",
    "inter.broker.listener.name": "PLAINTEXT",
    "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
    "auto.create.topics.enable": "true",
    "num.partitions": "8",
    "default.replication.factor": "1",
    "min.insync.replicas": "1",
    "offsets.topic.replication.factor": "1",
    "offsets.topic.num.partitions": "8",
    "transaction.state.log.replication.factor": "1",
    "transaction.state.log.min.isr": "1",
    "transaction.state.log.num.partitions": "4",
    "group.initial.rebalance.delay.ms": "0",
    "num.network.threads": "2",
    "num.io.threads": "4",
    "background.threads": "4",
    "log.cleaner.dedupe.buffer.size": str(8 * 1024 * 1024),  # 128 MB by default, allocated at start
}


def log(msg: str) -> None:
    print(f"kafkactl: {msg}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------- build
def build(force: bool = False) -> None:
    newest_source = max(p.stat().st_mtime for p in SOURCES)
    built = STAMP.exists() and (CLASSES / f"{MAIN_CLASS}.class").exists()
    if not force and built and STAMP.stat().st_mtime >= newest_source:
        return
    if not STAMP.exists() or STAMP.stat().st_mtime < POM.stat().st_mtime:
        # copy-dependencies never deletes: drop old jars so a version change cannot leave two Kafkas on
        # the classpath. (Never rebuild under a running server: its classpath is target/lib.)
        shutil.rmtree(LIB, ignore_errors=True)
    cmd = [os.environ.get("MVN", "mvn"), "-q", "-B", "-f", str(POM), "package"]
    log("building: " + " ".join(cmd))
    t0 = time.monotonic()
    subprocess.run(cmd, check=True)
    STAMP.touch()
    log(f"built in {time.monotonic() - t0:.1f} s")


def server_properties(home: Path, port: int, controller_port: int, settings: list[str]) -> Path:
    """DEFAULT_SETTINGS, the listeners on the two ports, then --setting KEY=VALUE pairs (which win),
    written to HOME/server.properties."""
    merged = dict(DEFAULT_SETTINGS)
    merged.update(
        {
            "listeners": f"PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{controller_port}",
            "advertised.listeners": f"PLAINTEXT://127.0.0.1:{port}",
            "controller.quorum.voters": f"1@127.0.0.1:{controller_port}",
            "log.dirs": str(home / "data"),
        }
    )
    for item in settings:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            sys.exit(f"kafkactl: --setting needs KEY=VALUE, got {item!r}")
        merged[key.strip()] = value.strip()
    home.mkdir(parents=True, exist_ok=True)
    path = home / "server.properties"
    path.write_text("".join(f"{key}={value}\n" for key, value in merged.items()))
    return path


def jvm_flags(heap: str) -> list[str]:
    flags = [
        "-Xms128m",
        f"-Xmx{heap}",
        "-XX:+UseSerialGC",  # a small heap on a small machine: no concurrent GC threads
        # C1 only: start 9 instead of 17-20 s on 2 busy cores (README.md); a test broker never needs C2.
        # KAFKA_JVM_FLAGS=-XX:TieredStopAtLevel=4 brings C2 back (the last flag wins).
        "-XX:TieredStopAtLevel=1",
        "-XX:+ExitOnOutOfMemoryError",
        "-Djava.awt.headless=true",
        "-Dorg.slf4j.simpleLogger.showDateTime=true",
        "-Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS",
        "-Dorg.slf4j.simpleLogger.log.org.apache.kafka.common.config=warn",  # the config dumps
        "-Dorg.slf4j.simpleLogger.log.kafka.server.KafkaConfig=warn",
    ]
    return flags + os.environ.get("KAFKA_JVM_FLAGS", "").split()


# ---------------------------------------------------------------- processes
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _recv_exactly(s: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = s.recv(n - len(data))
        if not chunk:
            raise OSError("connection closed")
        data += chunk
    return data


def broker_count(port: int) -> int:
    """How many live (unfenced) brokers a Metadata v4 request on 127.0.0.1:port lists; 0 on any error.

    Request header v1 (api key 3, version 4, correlation id, client id), body: topics null (all),
    allow_auto_topic_creation false. Response: correlation id, throttle time, brokers array, ...
    """
    client = b"kafkactl"
    body = struct.pack(">hhih", 3, 4, 7, len(client)) + client + struct.pack(">ib", -1, 0)
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
            s.sendall(struct.pack(">i", len(body)) + body)
            (size,) = struct.unpack(">i", _recv_exactly(s, 4))
            reply = _recv_exactly(s, size)
    except OSError:
        return 0
    correlation, _throttle, brokers = struct.unpack(">iii", reply[:12])
    return brokers if correlation == 7 else 0


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
    return not zombie and MAIN_CLASS.encode() in cmdline


def launch(
    home: Path, out: Path, *, stdin: int | None, heap: str, settings: list[str], timeout: float
) -> tuple[subprocess.Popen[bytes], str]:
    """Format HOME/data and start the server on fresh ports; return (process, bootstrap) once a Metadata
    request lists the broker. Exits on failure.

    stdin: DEVNULL (the server outlives us), PIPE (it dies with us) or None (it dies when the stdin we
    inherited reaches EOF). Both of the latter make the launcher watch its stdin.
    """
    java = os.environ.get("KAFKA_JAVA", "java")
    classpath = os.pathsep.join([str(CLASSES), f"{LIB}/*"])
    env = dict(os.environ)
    env.pop("KAFKA_EXIT_ON_STDIN_EOF", None)
    if stdin is not subprocess.DEVNULL:
        env["KAFKA_EXIT_ON_STDIN_EOF"] = "1"
    cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
    for attempt in range(3):  # retry only if someone grabbed a free port in between
        port, controller_port = free_port(), free_port()
        shutil.rmtree(home / "data", ignore_errors=True)  # a fresh data directory on every try
        props = server_properties(home, port, controller_port, settings)
        cmd = [java, *jvm_flags(heap), "-cp", classpath, MAIN_CLASS, str(props), cluster_id]
        t0 = time.monotonic()
        with open(out, "wb") as f:
            proc = subprocess.Popen(
                cmd, stdin=stdin, stdout=f, stderr=subprocess.STDOUT, env=env, start_new_session=True
            )  # Ctrl-C in a terminal reaches us, not it
        bootstrap = f"127.0.0.1:{port}"
        deadline = t0 + timeout
        while time.monotonic() < deadline and proc.poll() is None:
            if broker_count(port) > 0:
                log(f"kafka ready at {bootstrap} in {time.monotonic() - t0:.1f} s (pid {proc.pid})")
                return proc, bootstrap
            time.sleep(0.25)
        if proc.poll() is None:
            log(f"kafka not ready after {timeout:.0f} s")
            stop_pid(proc.pid, proc)
        elif "Address already in use" in out.read_text(errors="replace") and attempt < 2:
            log(f"port {port} or {controller_port} was taken, retrying")
            continue
        log(f"startup failed (exit code {proc.returncode}); tail of {out}:\n{tail(out)}")
        sys.exit(1)
    raise AssertionError("unreachable")


def stop_pid(pid: int, proc: subprocess.Popen[bytes] | None = None) -> None:
    """SIGTERM, wait up to STOP_TIMEOUT, then SIGKILL. proc (if ours) is reaped."""

    def alive() -> bool:
        return proc.poll() is None if proc is not None else is_launcher(pid)

    if not alive():
        return
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_TIMEOUT
    while alive() and time.monotonic() < deadline:
        time.sleep(0.1)
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
        print(BOOTSTRAP_FILE.read_text().strip())
        log("already running")
        return 0
    build()
    home = RUN / "home"
    shutil.rmtree(home, ignore_errors=True)  # a fresh, empty cluster on every start
    RUN.mkdir(exist_ok=True)
    stdin = None if args.tie_to_parent else subprocess.DEVNULL
    proc, bootstrap = launch(
        home, LOG_FILE, stdin=stdin, heap=args.heap, settings=args.setting, timeout=args.timeout
    )
    PID_FILE.write_text(f"{proc.pid}\n")
    BOOTSTRAP_FILE.write_text(bootstrap + "\n")
    print(bootstrap, flush=True)
    return 0


def cmd_stop(args: argparse.Namespace) -> int:
    pid = running_pid()
    if pid is not None:
        log(f"stopping pid {pid}")
        stop_pid(pid)
    for f in (BOOTSTRAP_FILE, PID_FILE):
        f.unlink(missing_ok=True)
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    if running_pid() is None:
        log("not running")
        return 1
    print(BOOTSTRAP_FILE.read_text().strip())
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        log("run needs a command: kafkactl.py run -- CMD ...")
        return 2
    build()
    # An own directory and no bootstrap/pid files, so a server from `start` is left alone.
    workdir = RUN / f"run-{os.getpid()}"
    shutil.rmtree(workdir, ignore_errors=True)
    workdir.mkdir(parents=True)
    # stdin=PIPE: should this process die without its `finally`, the server sees EOF and exits too.
    out = workdir / "kafka.out"
    proc, bootstrap = launch(
        workdir / "home", out, stdin=subprocess.PIPE, heap=args.heap, settings=args.setting,
        timeout=args.timeout,
    )
    code = 1
    try:
        env = {
            **os.environ,
            "EPIGRAPH_KAFKA_BOOTSTRAP": bootstrap,
            "EPIGRAPH_KAFKA_PID": str(proc.pid),
            "EPIGRAPH_KAFKA_LOG": str(out),
        }
        rc = subprocess.run(command, env=env).returncode
        code = 128 - rc if rc < 0 else rc  # killed by a signal: shell convention
    except KeyboardInterrupt:
        code = 130
    finally:
        stop_pid(proc.pid, proc)
        if code == 0:
            shutil.rmtree(workdir, ignore_errors=True)
        else:
            log(f"kafka logs kept in {workdir}")
    return code


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build", help="compile the launcher and fetch the jars (mvn package)")
    b.add_argument("--force", action="store_true", help="build even if up to date")
    b.set_defaults(func=cmd_build)
    for name, func in (("start", cmd_start), ("run", cmd_run)):
        s = sub.add_parser(name)
        s.add_argument("--heap", default="512m", help="-Xmx (default 512m)")
        s.add_argument(
            "--setting",
            action="append",
            default=[],
            metavar="KEY=VALUE",
            help="a server.properties setting (repeatable; wins over the defaults), e.g. num.partitions=16",
        )
        s.add_argument("--timeout", type=float, default=READY_TIMEOUT, help="readiness deadline in seconds")
        s.set_defaults(func=func)
        if name == "start":
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
    # SIGTERM (e.g. a CI timeout) unwinds like Ctrl-C, so `finally` blocks stop the server.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        return int(args.func(args))
    except subprocess.CalledProcessError as e:
        log(f"command failed with exit code {e.returncode}: {' '.join(map(str, e.cmd))}")
        return 1


if __name__ == "__main__":
    sys.exit(main())
