"""Publishing episodes (epigraph.publish.producer, KnowledgeGraph.enqueue) against the suite's real Kafka."""

from __future__ import annotations

import socket
from datetime import UTC, datetime, timedelta

import pytest

from epigraph.client import KnowledgeGraph
from epigraph.config import Settings
from epigraph.episodes.inputs import EpisodeInput
from epigraph.errors import InputError, QueueError
from epigraph.graph.model import EpisodeStatus
from epigraph.publish.producer import EpisodeProducer, ensure_topic
from epigraph.testing import HashEmbedder, ScriptedLLM
from tests.support.kafka import NewTopic, read_all

WHEN = datetime(2024, 5, 2, 10, 0, tzinfo=UTC)

pytestmark = pytest.mark.kafka


def _episodes(groups: int, each: int) -> list[EpisodeInput]:
    """Groups interleaved; a group's episode i says "step i" (pairs share a reference time)."""
    return [
        EpisodeInput(f"g{g} step {i}", WHEN + timedelta(minutes=i // 2), f"g{g}")
        for i in range(each)
        for g in range(groups)
    ]


async def test_episodes_are_keyed_by_group_and_each_group_keeps_its_order(
    kafka_bootstrap: str, new_topic: NewTopic
) -> None:
    topic = await new_topic(partitions=4)
    sent = _episodes(groups=6, each=5)
    async with EpisodeProducer(kafka_bootstrap, topic) as producer:
        published = await producer.publish(sent)
    assert [p.uuid for p in published] == [item.to_episode().uuid for item in sent]
    messages = await read_all(kafka_bootstrap, topic, 4)
    assert len(messages) == len(sent)
    assert {(p.partition, p.offset) for p in published} == {(m[0], m[1]) for m in messages}
    partitions_of: dict[str, set[int]] = {}
    for partition, _, key, message in messages:
        assert key == message.group.encode()
        partitions_of.setdefault(message.group, set()).add(partition)
    assert all(len(parts) == 1 for parts in partitions_of.values())  # a group stays on one partition
    assert len(set().union(*partitions_of.values())) > 1  # and the groups are spread
    for group in partitions_of:
        in_log = [m for _, _, _, m in sorted(messages) if m.group == group]  # by (partition, offset)
        assert [m.to_input() for m in in_log] == [item for item in sent if item.group_id == group]
        created = [m.created_at for m in in_log]
        assert created == sorted(created) and len(set(created)) == len(created)  # ties keep their order


async def test_a_malformed_episode_refuses_the_whole_batch(kafka_bootstrap: str, new_topic: NewTopic) -> None:
    topic = await new_topic(partitions=2)
    batch: list[EpisodeInput | dict[str, object]] = [
        *_episodes(groups=2, each=2),
        {"content": "fine", "reference_time": "2024-05-02T10:00:00Z", "group": "g0"},
        {"content": "no time", "group": "g1"},
    ]
    async with EpisodeProducer(kafka_bootstrap, topic) as producer:
        with pytest.raises(InputError, match="episode 5: invalid episode") as raised:
            await producer.publish(batch)
        assert "reference_time" in str(raised.value)
        bad_group = EpisodeInput("x", WHEN, group_id="has space")
        with pytest.raises(InputError, match=r"episode 1: invalid episode: .*group_id") as raised:
            await producer.publish([*_episodes(1, 1), bad_group])
        with pytest.raises(InputError, match=r"^12: at most 20000 characters") as raised:  # the one limit
            EpisodeInput("x" * 1_100_000, WHEN, "g0", line=12)
        assert raised.value.field == "content"
        huge = {"content": "x" * 1_100_000, "reference_time": "2024-05-02T10:00:00Z", "group": "g0"}
        with pytest.raises(InputError, match=r"episode 1: at most 20000 characters"):
            await producer.publish([*_episodes(1, 1), huge])
    assert await read_all(kafka_bootstrap, topic, 2) == []  # nothing of any refused batch


async def test_an_unreachable_kafka_is_a_queue_error_naming_it() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        bootstrap = f"127.0.0.1:{s.getsockname()[1]}"  # bound, never listening
        producer = EpisodeProducer(bootstrap, "nowhere", timeout=5)
        with pytest.raises(QueueError, match=f"Kafka at {bootstrap}, topic 'nowhere': cannot connect"):
            await producer.publish(_episodes(1, 1))


async def test_ensure_topic_creates_it_once_with_its_partitions(kafka_bootstrap: str) -> None:
    topic = f"made-{datetime.now(UTC).strftime('%H%M%S%f')}"
    assert await ensure_topic(kafka_bootstrap, topic, 3) == 3
    assert await ensure_topic(kafka_bootstrap, topic, 5) == 3  # exists: left as it is


async def test_enqueue_publishes_when_kafka_is_configured(kafka_bootstrap: str, new_topic: NewTopic) -> None:
    topic = await new_topic(partitions=2)
    settings = Settings(db_path=":memory:", kafka_bootstrap=kafka_bootstrap, kafka_topic=topic)
    llm = ScriptedLLM({"*": ""})  # never called: publishing ingests nothing
    async with KnowledgeGraph(settings, llm=llm, embedder=HashEmbedder(16), group_id="team") as kg:
        items = [{"content": "Ann: hi", "reference_time": WHEN}, {"content": "Bo: yo", "reference_time": WHEN,
                 "group": "bo"}, *_episodes(1, 2)]  # fmt: skip
        published = await kg.enqueue(items)
        assert await kg.group("team").episodes() == []
    assert llm.calls == []
    messages = await read_all(kafka_bootstrap, topic, 2)
    assert sorted((m.group, m.uuid) for _, _, _, m in messages) == sorted(
        (p.group_id, p.uuid) for p in published
    )
    assert [p.group_id for p in published] == ["team", "bo", "g0", "g0"]  # a mapping's own "group" is kept
    assert all(p.topic == topic and p.offset is not None and p.result is None for p in published)


async def test_enqueue_without_kafka_ingests_here() -> None:
    settings = Settings(db_path=":memory:")
    async with KnowledgeGraph(settings, llm=ScriptedLLM({"*": ""}), embedder=HashEmbedder(16)) as kg:
        [published, other] = await kg.enqueue(
            [
                {"content": "Ann: hi", "reference_time": WHEN},
                {"content": "Bo: yo", "reference_time": WHEN, "group": "bo"},
            ]
        )
        assert published.partition is None and published.result is not None
        assert published.result.episode.status == EpisodeStatus.DONE
        [stored] = await kg.group("default").episodes()
        assert stored.uuid == published.uuid
        assert [e.uuid for e in await kg.group("bo").episodes()] == [other.uuid]
