"""``epigraph serve --to-kafka``: the add routes publish to the suite's real Kafka instead of ingesting."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from epigraph.cli.app import build_parser
from epigraph.cli.to_kafka import settings as kafka_settings
from epigraph.client import KnowledgeGraph
from epigraph.config import Settings
from epigraph.serve import Keys, create_app
from epigraph.testing import HashEmbedder, ScriptedLLM
from tests.support.kafka import NewTopic, read_all

pytestmark = pytest.mark.kafka
KEY = {"Authorization": "Bearer k"}


async def test_the_add_routes_publish_and_refuse_bad_episodes(
    kafka_bootstrap: str, new_topic: NewTopic, tmp_path: Path
) -> None:
    topic = await new_topic(partitions=2)
    args = build_parser().parse_args(["serve", "--to-kafka", kafka_bootstrap, "--topic", topic])
    settings = kafka_settings(Settings(db_path=str(tmp_path / "graph.db")), args)
    assert (settings.kafka_bootstrap, settings.kafka_topic) == (kafka_bootstrap, topic)
    llm = ScriptedLLM({"*": ""})
    kg = KnowledgeGraph(settings, llm=llm, embedder=HashEmbedder(16))
    app = create_app(kg, keys=Keys({"k": frozenset({"*"})}), publish=True)
    transport = httpx.ASGITransport(app=app)
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(transport=transport, base_url="http://t") as http,
    ):
        one = await http.post(
            "/v1/groups/ann/episodes",
            headers=KEY,
            json={"content": "I moved to Berlin.", "reference_time": "2024-05-02T10:00:00Z"},
        )
        batch = await http.post("/v1/groups/ann/episodes/batch", headers=KEY, json={"episodes": [
            {"content": "Actually Lisbon.", "reference_time": "2024-05-03T10:00:00Z"},
            {"content": "And a cat.", "reference_time": "2024-05-03T10:00:00Z"},
        ]})  # fmt: skip
        bad = await http.post("/v1/groups/ann/episodes/batch", headers=KEY, json={"episodes": [
            {"content": "fine", "reference_time": "2024-05-04T10:00:00Z"}, {"content": "no time"},
        ]})  # fmt: skip
        stored = await kg.group("ann").episodes()
    assert one.status_code == batch.status_code == 202
    accepted = one.json()["episodes"] + batch.json()["episodes"]
    assert [e["status"] for e in accepted] == ["queued"] * 3
    assert bad.status_code == 422 and "reference_time" in bad.text
    messages = [m for _, _, _, m in sorted(await read_all(kafka_bootstrap, topic, 2))]
    assert [m.uuid for m in messages] == [e["uuid"] for e in accepted]  # in order; nothing of the bad batch
    assert [m.episode.content for m in messages] == ["I moved to Berlin.", "Actually Lisbon.", "And a cat."]
    assert stored == [] and llm.calls == []  # nothing ingested by the server itself
