"""Personal data kept out of the Kafka topic (issue 62 part 2): with the redaction policy on,
``KnowledgeGraph.enqueue`` and ``epigraph --redact ingest --to-kafka`` publish each episode already
redacted, its placeholders numbered through the producer's store (envelope v2, naming that vault), so the
topic never carries an original; a worker over the same store ingests them under the ids of what was
given, with the numbers its own door would give; a worker over another store refuses them (dead letter,
nothing stored). The real Kafka of the suite, SQLite files, the real ``openai`` SDK to the test server."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path

import pytest

from epigraph.publish.envelope import REDACTED
from epigraph.scale.worker import KafkaWorker
from epigraph.scale.worker_config import WorkerConfig
from tests.support.kafka import NewTopic, consume, epigraph, read_all, write_lines
from tests.support.privacy_scene import (
    EMAIL,
    MESSAGES,
    PHONE,
    Setup,
    inputs,
    originals_in,
    scene_at,
    stored_at,
)

pytestmark = pytest.mark.kafka


@pytest.fixture
async def setup(tmp_path: Path) -> AsyncIterator[Setup]:
    """The redaction tests' scene (``tests/privacy``) over a fresh file."""
    async with scene_at(tmp_path / "graph.db") as scene:
        yield scene


async def raw_values(bootstrap: str, topic: str) -> list[bytes]:
    from aiokafka import AIOKafkaConsumer, TopicPartition

    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    await consumer.start()
    try:
        assigned = [TopicPartition(topic, 0)]
        consumer.assign(assigned)
        await consumer.seek_to_beginning(*assigned)
        end = sum((await consumer.end_offsets(assigned)).values())
        values: list[bytes] = []
        while len(values) < end:
            batch = await asyncio.wait_for(consumer.getmany(timeout_ms=1000), 30)
            values += [m.value for ms in batch.values() for m in ms]
        return values
    finally:
        await consumer.stop()


async def test_the_topic_carries_placeholders_and_the_worker_stores_the_doors_episodes(
    setup: Setup, kafka_bootstrap: str, new_topic: NewTopic
) -> None:
    topic = await new_topic(partitions=1)
    given = [*inputs(), replace(inputs()[0], content="nothing personal here")]
    async with setup.graph(settings={"kafka_bootstrap": kafka_bootstrap, "kafka_topic": topic}) as kg:
        published = await kg.enqueue(given)
    values = await raw_values(kafka_bootstrap, topic)
    assert len(values) == 5 and originals_in(b"\n".join(values)) == []
    versions = [json.loads(v)["v"] for v in values]
    assert versions == [REDACTED] * 4 + [1]  # the last one had nothing to redact
    assert [p.uuid for p in published] == [
        item.to_episode().uuid for item in given
    ]  # the ids of what was given

    async with setup.graph() as kg:  # a worker over the same store
        config = WorkerConfig(bootstrap=kafka_bootstrap, topic=topic, group_id=f"w-{topic}")
        counts = await consume(KafkaWorker(kg, config), 5)
        stored = {e.uuid: e.content for e in await kg.episodes(limit=None)}
    assert (counts.done, counts.failed) == (5, 0)
    assert set(stored) == {p.uuid for p in published}
    assert stored[published[0].uuid] == "Dana: my new number is <PHONE_1>, and mail goes to <EMAIL_1>."
    assert stored[published[3].uuid] == "Lee: so Dana's phone is <PHONE_1>?"
    assert originals_in(setup.sent()) == [] and originals_in(setup.stored()) == []


async def test_a_worker_over_another_store_refuses_what_was_redacted_elsewhere(
    setup: Setup, kafka_bootstrap: str, new_topic: NewTopic, tmp_path: Path
) -> None:
    topic = await new_topic(partitions=1)
    async with setup.graph(settings={"kafka_bootstrap": kafka_bootstrap, "kafka_topic": topic}) as kg:
        await kg.enqueue(inputs()[:2])
    elsewhere = Setup(setup.server, tmp_path / "other.db")
    async with elsewhere.graph() as kg:
        config = WorkerConfig(bootstrap=kafka_bootstrap, topic=topic, group_id=f"w-{topic}")
        counts = await consume(KafkaWorker(kg, config), 2)
        assert await kg.episodes(limit=None) == []
    assert (counts.done, counts.failed, counts.dead) == (0, 2, 2)
    letters = [json.loads(v) for v in await raw_values(kafka_bootstrap, f"{topic}.dead")]
    assert all("redacted against redaction vault" in str(letter["reason"]) for letter in letters)
    assert originals_in(json.dumps(letters)) == []


async def test_the_command_line_redacts_before_publishing(
    kafka_bootstrap: str, new_topic: NewTopic, tmp_path: Path
) -> None:
    topic = await new_topic(partitions=1)
    db = tmp_path / "graph.db"
    lines = [{"content": m.split(": ", 1)[1], "speaker": m.split(":", 1)[0],
              "reference_time": f"2024-05-02T10:0{i}:00Z"} for i, m in enumerate(MESSAGES)]  # fmt: skip
    source = write_lines(tmp_path / "chat.jsonl", lines)
    done = epigraph("--db", str(db), "--redact", "ingest", str(source), "--to-kafka", kafka_bootstrap,
                    "--topic", topic)  # fmt: skip
    assert done.returncode == 0, done.stderr
    messages = [m for _, _, _, m in sorted(await read_all(kafka_bootstrap, topic, 1))]
    assert [m.vault for m in messages] == [messages[0].vault] * 4 and messages[0].vault
    assert messages[0].episode.content == "Dana: my new number is <PHONE_1>, and mail goes to <EMAIL_1>."
    assert PHONE not in done.stdout + done.stderr and EMAIL not in done.stdout + done.stderr
    assert originals_in(stored_at(db)) == []
