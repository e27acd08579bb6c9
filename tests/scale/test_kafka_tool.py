"""tools/kafka/kafkactl.py: the server it configures and the readiness probe, against the suite's Kafka."""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from tests.support.kafka import NewTopic

_PATH = Path(__file__).parents[2] / "tools/kafka/kafkactl.py"
_SPEC = importlib.util.spec_from_file_location("epigraph_tools_kafkactl", _PATH)
assert _SPEC is not None and _SPEC.loader is not None
kafkactl = importlib.util.module_from_spec(_SPEC)
sys.modules[_SPEC.name] = kafkactl
_SPEC.loader.exec_module(kafkactl)


def test_a_cluster_id_never_starts_with_a_dash() -> None:
    """The storage tool reads an id starting with "-" as an option and does not start (one run in 64
    failed so); such a draw is drawn again."""
    draws = iter([b"\xf8" + bytes(15), b"\x04" + bytes(15)])  # base64 "-A...", then "BA..."
    assert kafkactl.new_cluster_id(lambda: next(draws)) == "BAAAAAAAAAAAAAAAAAAAAA"
    ids = {kafkactl.new_cluster_id() for _ in range(500)}
    assert len(ids) == 500 and not any(i.startswith("-") for i in ids)
    assert all(len(i) == 22 for i in ids)


def test_server_properties_single_node_with_overrides(tmp_path: Path) -> None:
    path = kafkactl.server_properties(tmp_path, 9001, 9002, ["num.partitions = 3", "log.retention.ms=1000"])
    props = dict(line.split("=", 1) for line in path.read_text().splitlines())
    assert props["listeners"] == "PLAINTEXT://127.0.0.1:9001,CONTROLLER://127.0.0.1:9002"
    assert props["advertised.listeners"] == "PLAINTEXT://127.0.0.1:9001"
    assert props["controller.quorum.voters"] == "1@127.0.0.1:9002"
    assert props["process.roles"] == "broker,controller"
    assert props["offsets.topic.replication.factor"] == "1"
    assert props["log.dirs"] == str(tmp_path / "data")
    assert props["num.partitions"] == "3"  # --setting wins over the default 8
    assert props["log.retention.ms"] == "1000"


def test_a_setting_without_a_value_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match=re.escape("--setting needs KEY=VALUE, got 'num.partitions'")):
        kafkactl.server_properties(tmp_path, 9001, 9002, ["num.partitions"])


def test_the_probe_counts_no_broker_where_nothing_listens() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # bound, not listening: the connection is refused
        assert kafkactl.broker_count(port) == 0


@pytest.mark.kafka
def test_the_probe_sees_the_one_broker(kafka_bootstrap: str) -> None:
    assert kafkactl.broker_count(int(kafka_bootstrap.rsplit(":", 1)[1])) == 1


@pytest.mark.kafka
async def test_a_topic_created_by_producing_has_the_default_partitions(kafka_bootstrap: str) -> None:
    from aiokafka import AIOKafkaProducer

    topic = f"auto-{uuid.uuid4().hex[:12]}"
    producer = AIOKafkaProducer(bootstrap_servers=kafka_bootstrap)
    await producer.start()
    try:
        await producer.send_and_wait(topic, b"{}", key=b"g")
        partitions = await producer.partitions_for(topic)
    finally:
        await producer.stop()
    assert len(partitions) == int(kafkactl.DEFAULT_SETTINGS["num.partitions"])


@pytest.mark.kafka
async def test_a_consumer_group_commits_offsets(kafka_bootstrap: str, new_topic: NewTopic) -> None:
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

    topic = await new_topic(partitions=2)
    producer = AIOKafkaProducer(bootstrap_servers=kafka_bootstrap)
    await producer.start()
    try:
        for i in range(4):
            await producer.send_and_wait(topic, str(i).encode(), partition=i % 2)
    finally:
        await producer.stop()
    consumer = AIOKafkaConsumer(
        topic,
        bootstrap_servers=kafka_bootstrap,
        group_id=f"cg-{uuid.uuid4().hex[:8]}",
        auto_offset_reset="earliest",
        enable_auto_commit=False,
    )
    await consumer.start()
    try:
        seen = []
        while len(seen) < 4:
            message = await asyncio.wait_for(consumer.getone(), 30)
            seen.append(int(message.value))
        await consumer.commit()
        committed = [await consumer.committed(TopicPartition(topic, p)) for p in (0, 1)]
    finally:
        await consumer.stop()
    assert sorted(seen) == [0, 1, 2, 3]
    assert committed == [2, 2]  # the next offset to read, per partition


@pytest.mark.kafka
def test_a_broker_of_run_exits_when_run_is_killed(kafka_bootstrap: str, tmp_path: Path) -> None:
    """``kafkactl.py run`` holds its broker's stdin: a SIGKILL of ``run`` (no ``finally``) still ends the
    broker. (``kafka_bootstrap``: only where the suite has Kafka, i.e. the jars are built.)"""
    pid_file = tmp_path / "pid"
    script = f'echo "$EPIGRAPH_KAFKA_PID" > {pid_file}; exec sleep 600'
    errors = tmp_path / "run.err"
    with errors.open("wb") as err:
        runner = subprocess.Popen(
            [sys.executable, str(_PATH), "run", "--", "sh", "-c", script],
            stdout=subprocess.DEVNULL, stderr=err, start_new_session=True,
        )  # fmt: skip
    try:
        deadline = time.monotonic() + 180
        while not pid_file.exists() or not pid_file.read_text().strip():
            assert runner.poll() is None and time.monotonic() < deadline, (
                f"kafkactl run started no broker (exit {runner.poll()}): {errors.read_text()[-2000:]}"
            )
            time.sleep(0.5)
        broker = int(pid_file.read_text())
        assert kafkactl.serverctl.is_launcher(kafkactl.TOOL, broker)
        runner.kill()
        runner.wait()
        deadline = time.monotonic() + 60
        while kafkactl.serverctl.is_launcher(kafkactl.TOOL, broker) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not kafkactl.serverctl.is_launcher(kafkactl.TOOL, broker), "the broker outlived its runner"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(runner.pid, signal.SIGKILL)  # the orphaned `sleep` (in the group started above)
        for kept in kafkactl.TOOL.run.glob(f"run-{runner.pid}"):
            shutil.rmtree(kept, ignore_errors=True)
