"""Fixtures of the Kafka tests: the broker named by ``EPIGRAPH_KAFKA_BOOTSTRAP`` and fresh topics on it.

``make test`` starts a real single-node Kafka for the whole run (``tools/kafka/kafkactl.py run``); one
file alone: ``python3 tools/kafka/kafkactl.py run -- .venv/bin/python -m pytest -q tests/scale``. Without a
bootstrap the Kafka tests are skipped with that reason, except in CI (``CI=true``/``1``), where a missing
broker (or a missing ``kafka`` extra) is a failure: they must never pass there by silently skipping.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Awaitable, Callable

import pytest

KAFKA_SKIP = (
    "EPIGRAPH_KAFKA_BOOTSTRAP not set: run `make test`, or "
    "`python3 tools/kafka/kafkactl.py run -- .venv/bin/python -m pytest ...`, to start a real Kafka"
)


def _in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("true", "1")


def _skip_or_fail(reason: str) -> None:
    if _in_ci():
        pytest.fail(f"{reason} (CI must run the Kafka tests, not skip them)")
    pytest.skip(reason)


@pytest.fixture
def kafka_bootstrap() -> str:
    """The bootstrap (``127.0.0.1:PORT``) of the suite's Kafka; skip (fail in CI) without one."""
    bootstrap = os.environ.get("EPIGRAPH_KAFKA_BOOTSTRAP", "").strip()
    if not bootstrap:
        _skip_or_fail(KAFKA_SKIP)
    try:
        import aiokafka  # noqa: F401
    except ImportError:
        _skip_or_fail("the kafka extra is not installed: pip install -e '.[kafka]'")
    return bootstrap


NewTopic = Callable[..., Awaitable[str]]


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
