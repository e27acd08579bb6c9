"""``epigraph ingest|import --to-kafka``: the real command, publishing to the suite's real Kafka."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.kafka import NewTopic, epigraph, read_all, write_lines

pytestmark = pytest.mark.kafka

LOCOMO = Path(__file__).parents[1] / "importers/fixtures/locomo_mini.json"
LINES = [
    {
        "content": "I moved to Berlin.",
        "speaker": "Ann",
        "group": "ann",
        "reference_time": "2024-05-02T10:00:00Z",
    },
    {"content": "Bo got a dog.", "group": "bo", "reference_time": "2024-05-02T10:00:00Z", "id": "b-1"},
    {
        "content": "Actually Lisbon.",
        "speaker": "Ann",
        "group": "ann",
        "reference_time": "2024-05-02T10:00:00Z",
    },
    {"content": "The dog is called Rex.", "group": "bo", "reference_time": "2024-05-03T09:00:00Z"},
]


async def test_ingest_to_kafka_publishes_the_file_keyed_by_group(
    kafka_bootstrap: str, new_topic: NewTopic, tmp_path: Path
) -> None:
    topic = await new_topic(partitions=4)
    db = tmp_path / "graph.db"
    source = write_lines(tmp_path / "chat.jsonl", LINES)
    done = epigraph(
        "--db", str(db), "--json", "ingest", str(source), "--to-kafka", kafka_bootstrap, "--topic", topic
    )
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert (summary["published"], summary["topic"], summary["groups"]) == (4, topic, {"ann": 2, "bo": 2})
    messages = [m for _, _, _, m in sorted(await read_all(kafka_bootstrap, topic, 4))]
    for group in ("ann", "bo"):
        sent = [line["content"] for line in LINES if line["group"] == group]
        assert [m.episode.content for m in messages if m.group == group] == sent  # in the file's order
    assert {m.to_episode().content for m in messages} >= {"Ann: I moved to Berlin.", "Bo got a dog."}
    assert [m.episode.episode_id for m in messages if m.group == "bo"] == ["b-1", None]
    assert not db.exists()  # nothing ingested here: no store was opened


async def test_a_bad_line_publishes_nothing(
    kafka_bootstrap: str, new_topic: NewTopic, tmp_path: Path
) -> None:
    topic = await new_topic(partitions=2)
    source = write_lines(tmp_path / "chat.jsonl", LINES, extra='{"content": "no time", "group": "ann"}\n')
    done = epigraph("ingest", str(source), "--to-kafka", kafka_bootstrap, "--topic", topic)
    assert done.returncode == 2
    assert (
        "chat.jsonl:5: missing (ISO 8601, e.g. 2024-05-02T10:00:00Z) (field 'reference_time')" in done.stderr
    )
    assert await read_all(kafka_bootstrap, topic, 2) == []
    skipped = epigraph(
        "ingest", str(source), "--skip-invalid", "--to-kafka", kafka_bootstrap, "--topic", topic
    )
    assert skipped.returncode == 0, skipped.stderr
    assert "published 4 episodes" in skipped.stdout
    assert len(await read_all(kafka_bootstrap, topic, 2)) == 4


async def test_import_to_kafka_publishes_the_mapped_episodes(
    kafka_bootstrap: str, new_topic: NewTopic
) -> None:
    topic = await new_topic(partitions=2)
    argv = [
        "--group",
        "loco",
        "import",
        str(LOCOMO),
        "--limit",
        "5",
        "--to-kafka",
        kafka_bootstrap,
        "--topic",
        topic,
    ]
    done = epigraph(*argv)
    assert done.returncode == 0, done.stderr
    messages = await read_all(kafka_bootstrap, topic, 2)
    assert len(messages) == 5 and {m.group for _, _, _, m in messages} == {"loco"}
    assert len({partition for partition, _, _, _ in messages}) == 1  # one group, one partition


def test_an_unreachable_kafka_is_a_clear_error(tmp_path: Path) -> None:
    import socket

    source = write_lines(tmp_path / "chat.jsonl", LINES)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        bootstrap = f"127.0.0.1:{s.getsockname()[1]}"
        done = epigraph("ingest", str(source), "--to-kafka", bootstrap)
    assert done.returncode == 1
    assert f"epigraph: Kafka at {bootstrap}, topic 'epigraph.episodes': cannot connect" in done.stderr
