"""Fixtures of the Kafka tests: the broker named by ``EPIGRAPH_KAFKA_BOOTSTRAP`` and fresh topics on it.

``make test`` starts a real single-node Kafka for the whole run (``tools/kafka/kafkactl.py run``); one
file alone: ``python3 tools/kafka/kafkactl.py run -- .venv/bin/python -m pytest -q tests/scale``. Without a
bootstrap the Kafka tests are skipped with that reason, except in CI (``CI=true``/``1``), where a missing
broker (or a missing ``kafka`` extra) is a failure: they must never pass there by silently skipping.
"""

from __future__ import annotations

import os
import uuid

import pytest

from tests.support.ci import skip_or_fail
from tests.support.kafka import NewTopic

KAFKA_SKIP = (
    "EPIGRAPH_KAFKA_BOOTSTRAP not set: run `make test`, or "
    "`python3 tools/kafka/kafkactl.py run -- .venv/bin/python -m pytest ...`, to start a real Kafka"
)


@pytest.fixture
def kafka_bootstrap() -> str:
    """The bootstrap (``127.0.0.1:PORT``) of the suite's Kafka; skip (fail in CI) without one."""
    bootstrap = os.environ.get("EPIGRAPH_KAFKA_BOOTSTRAP", "").strip()
    if not bootstrap:
        skip_or_fail(KAFKA_SKIP, "the Kafka tests")
    try:
        import aiokafka  # noqa: F401
    except ImportError:
        skip_or_fail("the kafka extra is not installed: pip install -e '.[kafka]'", "the Kafka tests")
    return bootstrap


@pytest.fixture
def new_topic(kafka_bootstrap: str) -> NewTopic:
    """``await new_topic(partitions=4)``: create a topic no other test uses and return its name."""
    from aiokafka.admin import AIOKafkaAdminClient
    from aiokafka.admin import NewTopic as Topic

    async def create(partitions: int = 4, prefix: str = "t") -> str:
        name = f"{prefix}-{uuid.uuid4().hex[:12]}"
        admin = AIOKafkaAdminClient(bootstrap_servers=kafka_bootstrap)
        await admin.start()
        try:
            await admin.create_topics([Topic(name, num_partitions=partitions, replication_factor=1)])
        finally:
            await admin.close()
        return name

    return create
