"""What an ``epigraph worker`` is told and what it counts: its Kafka settings (``WorkerConfig``), the
share of the LLM endpoint's limits each of several workers takes (``share_llm_limits``) and its
``Counts``. Apart from :mod:`.worker` so the CLI reads them without importing aiokafka."""

from __future__ import annotations

from dataclasses import dataclass

from ..config import Settings
from ..publish.producer import DEFAULT_TOPIC

DEFAULT_GROUP = "epigraph-workers"


@dataclass(frozen=True)
class WorkerConfig:
    """Where the worker reads and how it behaves (``epigraph worker`` options)."""

    bootstrap: str
    topic: str = DEFAULT_TOPIC
    group_id: str = DEFAULT_GROUP
    client_id: str = "epigraph-worker"
    buffer: int = 32
    """Messages held per partition; fetching from a partition pauses while its buffer is full."""
    revoke_grace_s: float = 5.0
    """On revoke (or stop), how long an episode in flight may run on before it is abandoned."""
    session_timeout_ms: int = 30_000
    """How long the group waits for a silent (crashed) member before moving its partitions."""
    heartbeat_interval_ms: int = 2_000
    rebalance_timeout_ms: int = 30_000
    """How long the group waits for its members to rejoin a rebalance (past their revoke grace)."""
    retry_s: float = 1.0
    """First wait before retrying a store write or a dead-letter publish (doubles, at most 30 s)."""

    @property
    def dead_topic(self) -> str:
        return f"{self.topic}.dead"


def share_llm_limits(settings: Settings, workers: int) -> Settings:
    """The settings of one of ``workers`` processes that share one LLM endpoint's limits: in-flight calls,
    requests and tokens per minute each divided by ``workers`` (at least 1 call in flight; 0 stays
    unlimited)."""
    if workers < 1:
        raise ValueError(f"--llm-share must be a positive number of workers, not {workers}")

    def part(limit: int) -> int:
        return max(1, limit // workers) if limit else 0

    return settings.model_copy(
        update={
            "llm_max_in_flight": max(1, settings.llm_max_in_flight // workers),
            "llm_rpm": part(settings.llm_rpm),
            "llm_tpm": part(settings.llm_tpm),
        }
    )


@dataclass
class Counts:
    """What this worker did since it started (episodes by outcome; commits that failed)."""

    done: int = 0
    skipped: int = 0
    failed: int = 0
    dead: int = 0
    abandoned: int = 0
    commit_failures: int = 0
