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
import functools
import os
import shutil
import socket
import struct
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import serverctl

TOOL = serverctl.Tool("kafka", Path(__file__).resolve().parent, "KafkaLauncher", "bootstrap")
READY_TIMEOUT = 120.0

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


def server_properties(home: Path, port: int, controller_port: int, settings: list[str]) -> Path:
    """DEFAULT_SETTINGS, the listeners on the two ports, then --setting KEY=VALUE pairs (which win),
    written to HOME/server.properties."""
    defaults = {
        **DEFAULT_SETTINGS,
        "listeners": f"PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{controller_port}",
        "advertised.listeners": f"PLAINTEXT://127.0.0.1:{port}",
        "controller.quorum.voters": f"1@127.0.0.1:{controller_port}",
        "log.dirs": str(home / "data"),
    }
    path = home / "server.properties"
    serverctl.settings_file(path, defaults, settings, option="kafkactl: --setting")
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


def launch(
    home: Path, out: Path, *, stdin: int | None, heap: str, settings: list[str], timeout: float
) -> tuple[subprocess.Popen[bytes], str]:
    """Format HOME/data and start the server on fresh ports; return (process, bootstrap) once a Metadata
    request lists the broker. Exits on failure.

    stdin: DEVNULL (the server outlives us), PIPE (it dies with us) or None (it dies when the stdin we
    inherited reaches EOF). Both of the latter make the launcher watch its stdin.
    """
    java = os.environ.get("KAFKA_JAVA", "java")
    classpath = os.pathsep.join([str(TOOL.classes), f"{TOOL.lib}/*"])
    env = dict(os.environ)
    env.pop("KAFKA_EXIT_ON_STDIN_EOF", None)
    if stdin is not subprocess.DEVNULL:
        env["KAFKA_EXIT_ON_STDIN_EOF"] = "1"
    cluster_id = new_cluster_id()
    for attempt in range(3):  # retry only if someone grabbed a free port in between
        port, controller_port = serverctl.free_port(), serverctl.free_port()
        shutil.rmtree(home / "data", ignore_errors=True)  # a fresh data directory on every try
        props = server_properties(home, port, controller_port, settings)
        cmd = [java, *jvm_flags(heap), "-cp", classpath, TOOL.main_class, str(props), cluster_id]
        t0 = time.monotonic()
        proc = serverctl.spawn(cmd, out, stdin, env)
        if serverctl.await_ready(TOOL, proc, functools.partial(broker_count, port), timeout):
            bootstrap = f"127.0.0.1:{port}"
            TOOL.log(f"kafka ready at {bootstrap} in {time.monotonic() - t0:.1f} s (pid {proc.pid})")
            return proc, bootstrap
        serverctl.retry_or_exit(TOOL, proc, out, attempt, f"{port} or {controller_port}")
    raise AssertionError("unreachable")


def new_cluster_id(random_bytes: Callable[[], bytes] = lambda: uuid.uuid4().bytes) -> str:
    """A KRaft cluster id: 16 random bytes in URL-safe base64, drawn again when it starts with "-"
    (the storage tool would read it as an option and fail to start, one run in 64; Kafka's own
    ``Uuid.randomUuid`` redraws the same way)."""
    while True:
        cluster_id = base64.urlsafe_b64encode(random_bytes()).decode().rstrip("=")
        if not cluster_id.startswith("-"):
            return cluster_id


# ---------------------------------------------------------------- commands
def cmd_start(args: argparse.Namespace) -> int:
    if serverctl.already_running(TOOL):
        return 0
    serverctl.build(TOOL)
    home = TOOL.run / "home"
    shutil.rmtree(home, ignore_errors=True)  # a fresh, empty cluster on every start
    stdin = None if args.tie_to_parent else subprocess.DEVNULL
    proc, bootstrap = launch(
        home, TOOL.run / "kafka.out", stdin=stdin, heap=args.heap, settings=args.setting, timeout=args.timeout
    )
    return serverctl.started(TOOL, proc, bootstrap)


def cmd_run(args: argparse.Namespace) -> int:
    command = serverctl.command_of(args)
    workdir = serverctl.run_workdir(TOOL, command)
    if workdir is None:
        return 2
    out = workdir / "kafka.out"
    # stdin=PIPE: should this process die without its `finally`, the server sees EOF and exits too.
    proc, bootstrap = launch(
        workdir / "home",
        out,
        stdin=subprocess.PIPE,
        heap=args.heap,
        settings=args.setting,
        timeout=args.timeout,
    )
    env = {
        "EPIGRAPH_KAFKA_BOOTSTRAP": bootstrap,
        "EPIGRAPH_KAFKA_PID": str(proc.pid),
        "EPIGRAPH_KAFKA_LOG": str(out),
    }
    return serverctl.run_beside(TOOL, command, env, proc, workdir)


def main(argv: list[str] | None = None) -> int:
    p, _, _ = serverctl.parser(
        __doc__,
        heap="512m",
        setting_help="a server.properties setting (repeatable; wins over the defaults): num.partitions=4",
        timeout=READY_TIMEOUT,
    )
    return serverctl.dispatch(TOOL, p.parse_args(argv), {"start": cmd_start, "run": cmd_run})


if __name__ == "__main__":
    sys.exit(main())
