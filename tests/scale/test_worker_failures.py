"""The Kafka worker in this process, on a real Kafka and a real Neo4j: a re-delivered done episode is a
no-op (no LLM call, no write: the later fact it would have retired stays current), a bad payload and an
episode the LLM refuses go to the dead-letter topic with their reason, the failing one is saved
``failed``, and the group moves past both (every offset committed); a lane's batch is folded into its
conversation's summary once, not per episode."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

from bench.shared.scale_harness import CityWorld, create_topic, current_episode, publish
from bench.shared.serve_harness import LLM_KEY, LLMThread
from epigraph.client import KnowledgeGraph
from epigraph.config import Settings
from epigraph.graph.model import EpisodeStatus
from epigraph.scale.worker import KafkaWorker
from epigraph.scale.worker_config import WorkerConfig
from epigraph.testing.reading import prompt_of
from tests.support.kafka import consume, moves, neo4j_uri

pytestmark = pytest.mark.neo4j


@pytest.fixture(scope="module")
def llm() -> Iterator[LLMThread]:
    with LLMThread(CityWorld()) as thread:
        yield thread


async def _publish_raw(bootstrap: str, topic: str, key: str, value: bytes) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all")
    await producer.start()
    try:
        await producer.send_and_wait(topic, value, key=key.encode())
    finally:
        await producer.stop()


async def _dead_letters(bootstrap: str, topic: str, expected: int) -> list[dict[str, object]]:
    consumer = AIOKafkaConsumer(f"{topic}.dead", bootstrap_servers=bootstrap, auto_offset_reset="earliest")
    await consumer.start()
    letters: list[dict[str, object]] = []
    try:
        for _ in range(40):
            for records in (await consumer.getmany(timeout_ms=250)).values():
                letters += [json.loads(r.value) for r in records]
            if len(letters) >= expected:
                break
    finally:
        await consumer.stop()
    return letters


async def _committed(bootstrap: str, topic: str, group_id: str) -> int | None:
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, group_id=group_id, enable_auto_commit=False)
    await consumer.start()
    try:
        committed: int | None = await consumer.committed(TopicPartition(topic, 0))
        return committed
    finally:
        await consumer.stop()


async def _one_partition(bootstrap: str) -> tuple[str, str, str]:
    """A new topic of one partition, with its group and the workers' consumer group."""
    run = uuid.uuid4().hex[:8]
    topic, group, members = f"t-{run}", f"w-{run}", f"workers-{run}"
    await create_topic(bootstrap, topic, 1)
    return topic, group, members


def _settings(llm: LLMThread, neo4j: str, **more: Any) -> Settings:
    """A worker's settings: Neo4j, the test model, the hash embedder."""
    return Settings(neo4j_uri=neo4j, llm_base_url=llm.url, llm_api_key=LLM_KEY, llm_model="fake-model",  # type: ignore[arg-type]
                    embedder="hash", **more)  # fmt: skip


async def test_redelivery_is_a_no_op_and_failures_go_to_the_dead_letter_topic(
    llm: LLMThread, kafka_bootstrap: str
) -> None:
    bootstrap, neo4j = kafka_bootstrap, neo4j_uri()
    topic, group, members = await _one_partition(bootstrap)
    texts = ["Alice moved to Paris.", "Alice moved to Lisbon.", "Unanswerable Bob moved to Rome.",
             "Bob moved to Oslo."]  # fmt: skip
    paris, lisbon, refused, oslo = moves(group, texts)
    await publish(bootstrap, topic, [paris, lisbon])
    await _publish_raw(bootstrap, topic, group, b'{"v": 1, "episode": "not one"}')
    await publish(bootstrap, topic, [refused, paris, oslo])  # paris again: a re-delivery
    records = 6

    settings = _settings(llm, neo4j, llm_max_attempts=1)
    async with KnowledgeGraph(settings) as kg:
        worker = KafkaWorker(kg, WorkerConfig(bootstrap=bootstrap, topic=topic, group_id=members))
        counts = await consume(worker, records)
        assert (counts.done, counts.skipped, counts.failed, counts.dead) == (3, 1, 2, 2)

        stored = {e.content: e for e in await kg.store.episodes(group, limit=100)}
        assert stored["Alice moved to Paris."].status == EpisodeStatus.DONE
        failed = stored["Unanswerable Bob moved to Rome."]
        assert failed.status == EpisodeStatus.FAILED and "cannot be answered" in (failed.error or "")
        current = await kg.group(group).search("Alice lives in", limit=10)
        assert [f.fact.text for f in current.facts if f.fact.text.startswith("Alice")] == [
            "Alice lives in Lisbon."
        ]

    extractions = [r for r in llm.server.chat_requests if prompt_of(r.body) == "extract_entities"]
    assert [current_episode(r.body) for r in extractions].count("Alice moved to Paris.") == 1
    letters = await _dead_letters(bootstrap, topic, 2)
    by_offset = {letter["offset"]: str(letter["reason"]) for letter in letters}
    assert sorted(by_offset) == [2, 3] and len(letters) == 2
    assert by_offset[2].startswith("bad payload") and "cannot be answered" in by_offset[3]
    assert await _committed(bootstrap, topic, members) == records


async def test_an_id_reused_with_other_content_is_dead_lettered_not_dropped(
    llm: LLMThread, kafka_bootstrap: str
) -> None:
    bootstrap, neo4j = kafka_bootstrap, neo4j_uri()
    topic, group, members = await _one_partition(bootstrap)
    paris, oslo = moves(group, ["Alice moved to Paris.", "Bob moved to Oslo."])
    rome = replace(paris, content="Alice moved to Rome.")  # the same id m-0, other content
    await publish(bootstrap, topic, [paris, rome, paris, oslo])  # paris again: a duplicate
    settings = _settings(llm, neo4j, llm_max_attempts=1)
    async with KnowledgeGraph(settings) as kg:
        worker = KafkaWorker(kg, WorkerConfig(bootstrap=bootstrap, topic=topic, group_id=members))
        counts = await consume(worker, 4)
        assert (counts.done, counts.skipped, counts.failed, counts.dead) == (2, 1, 1, 1)
        stored = await kg.store.episodes(group, limit=100)
        assert sorted(e.content for e in stored) == ["Alice moved to Paris.", "Bob moved to Oslo."]
    (letter,) = await _dead_letters(bootstrap, topic, 1)
    assert letter["offset"] == 1 and "Alice moved to Rome." in str(letter["payload"])
    assert "already taken by the stored episode" in str(letter["reason"])
    assert await _committed(bootstrap, topic, members) == 4


async def test_a_lane_folds_its_batch_into_the_conversation_not_each_episode(
    llm: LLMThread, kafka_bootstrap: str
) -> None:
    """Published before the worker starts, the episodes of one conversation reach a lane together: after
    running them it folds them into the conversation's summary in fewer calls than episodes (one per
    batch the lane fetched), through the queue's after-batch step."""
    bootstrap, neo4j = kafka_bootstrap, neo4j_uri()
    run = uuid.uuid4().hex[:8]
    topic, group, members, chat = f"t-{run}", f"w-{run}", f"workers-{run}", f"chat-{run}"
    await create_topic(bootstrap, topic, 1)
    texts = ["Alice moved to Paris.", "Bob moved to Rome.", "Alice moved to Lisbon.", "Bob moved to Oslo."]
    talk = [replace(m, source_description=chat) for m in moves(group, texts)]
    await publish(bootstrap, topic, talk)

    def summary_calls() -> int:
        return sum(r.body["messages"][0]["content"].startswith("You keep the running summary")
                   for r in llm.server.chat_requests)  # fmt: skip

    before = summary_calls()
    settings = _settings(llm, neo4j)
    async with KnowledgeGraph(settings) as kg:
        worker = KafkaWorker(kg, WorkerConfig(bootstrap=bootstrap, topic=topic, group_id=members))
        stop = asyncio.Event()
        running = asyncio.create_task(worker.run(stop))
        folded = 0
        for _ in range(1800):  # up to 180 s: a fresh broker creates its offsets topic first
            views = await kg.group(group).overview.conversations()
            summary = views[0].summary if views else None
            folded = summary.episodes if summary is not None else 0
            if folded == len(texts) or running.done():
                break
            await asyncio.sleep(0.1)
        stop.set()
        counts = await running
        assert counts.done == len(texts) and folded == len(texts)
        assert 1 <= summary_calls() - before < len(texts)
