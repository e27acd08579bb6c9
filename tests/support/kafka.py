"""What the Kafka worker and producer tests share beside the bench's harness
(``bench/shared/scale_harness.py``): groups spread over the partitions, the Neo4j the workers need
(skipped without one, a failure in CI), episodes as Kafka records and a topic read back."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Awaitable, Callable, Sequence
from datetime import timedelta
from pathlib import Path

from aiokafka.partitioner import murmur2

from bench.shared.scale_harness import START
from epigraph.episodes.inputs import EpisodeInput
from epigraph.publish.envelope import Envelope, decode
from epigraph.scale.worker import KafkaWorker
from epigraph.scale.worker_config import Counts
from tests.support.ci import skip_or_fail
from tests.support.stores import NEO4J_SKIP

NewTopic = Callable[..., Awaitable[str]]


Message = tuple[int, int, bytes | None, Envelope]


async def read_all(bootstrap: str, topic: str, partitions: int) -> list[Message]:
    """Every message of ``topic`` as (partition, offset, key, envelope), from the start of each partition."""
    from aiokafka import AIOKafkaConsumer, TopicPartition

    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    await consumer.start()
    try:
        assigned = [TopicPartition(topic, p) for p in range(partitions)]
        consumer.assign(assigned)
        await consumer.seek_to_beginning(*assigned)
        end = await consumer.end_offsets(assigned)
        out: list[Message] = []
        while len(out) < sum(end.values()):
            batch = await asyncio.wait_for(consumer.getmany(timeout_ms=1000), 30)
            out += [(m.partition, m.offset, m.key, decode(m.value)) for ms in batch.values() for m in ms]
        return out
    finally:
        await consumer.stop()


def one_group_a_partition(prefix: str, partitions: int) -> list[str]:
    """Group names ``prefix-N``, one on each of ``partitions`` partitions under the producer's partitioner
    (aiokafka's default: murmur2 of the group's name, as Kafka's Java client). With random names, all the
    groups sometimes hashed onto the partitions one worker holds, and the other had nothing to do."""
    chosen: dict[int, str] = {}
    n = 0
    while len(chosen) < partitions:
        name = f"{prefix}-{n}"
        chosen.setdefault((murmur2(name.encode("utf-8")) & 0x7FFFFFFF) % partitions, name)
        n += 1
    return [chosen[p] for p in range(partitions)]


def neo4j_uri() -> str:
    """The suite's Neo4j; skip (fail in CI) without one."""
    uri = os.environ.get("EPIGRAPH_NEO4J_URI", "").strip()
    if not uri:
        skip_or_fail(NEO4J_SKIP, "the worker tests")
    return uri


def moves(group: str, texts: Sequence[str]) -> list[EpisodeInput]:
    """One episode per text, one minute apart, with caller ids ``m-<i>``."""
    return [
        EpisodeInput(text, START + timedelta(minutes=i), group_id=group, episode_id=f"m-{i}")
        for i, text in enumerate(texts)
    ]


def epigraph(*argv: str) -> subprocess.CompletedProcess[str]:
    """``python -m epigraph ARGV`` with no LLM configured (publishing needs none) and the hash embedder."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("EPIGRAPH_LLM")}
    env.update(EPIGRAPH_EMBEDDER="hash", HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    cmd = [sys.executable, "-m", "epigraph", *argv]
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)


def write_lines(path: Path, lines: list[dict[str, str]], extra: str = "") -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines) + extra)
    return path


async def consume(worker: KafkaWorker, records: int) -> Counts:
    """Run ``worker`` until it has counted ``records`` records (done, skipped or failed) or stopped by
    itself, then stop it: its counts."""
    stop = asyncio.Event()
    running = asyncio.create_task(worker.run(stop))
    for _ in range(1800):  # up to 180 s: a fresh broker creates its offsets topic first
        counts = worker.counts
        if counts.done + counts.skipped + counts.failed >= records or running.done():
            break
        await asyncio.sleep(0.1)
    stop.set()
    return await running
