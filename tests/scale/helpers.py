"""What the worker tests share: the bench harness (``bench/shared/scale_harness.py``) on the path, the Neo4j
they need (skipped without one, a failure in CI), and episodes as Kafka records."""

from __future__ import annotations

import os
from collections.abc import Sequence
from datetime import timedelta

from aiokafka.partitioner import murmur2

from bench.shared.scale_harness import (
    START,
    CityWorld,
    WorkerProcess,
    canonical,
    create_topic,
    current_episode,
    episodes,
    publish,
    wait_for,
    worker_env,
)
from bench.shared.serve_harness import LLM_KEY, LLMThread
from epigraph.episodes.inputs import EpisodeInput

from .conftest import _skip_or_fail

__all__ = [
    "LLM_KEY", "CityWorld", "LLMThread", "WorkerProcess", "canonical", "create_topic", "current_episode",
    "episodes", "moves", "neo4j_uri", "one_group_a_partition", "publish", "wait_for", "worker_env",
]  # fmt: skip

NEO4J_SKIP = "EPIGRAPH_NEO4J_URI not set: run `make test` to start a real Neo4j"


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
        _skip_or_fail(NEO4J_SKIP)
    return uri


def moves(group: str, texts: Sequence[str]) -> list[EpisodeInput]:
    """One episode per text, one minute apart, with caller ids ``m-<i>``."""
    return [
        EpisodeInput(text, START + timedelta(minutes=i), group_id=group, episode_id=f"m-{i}")
        for i, text in enumerate(texts)
    ]
