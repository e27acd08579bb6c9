"""What the worker tests share: the bench harness (``bench/_scale_harness.py``) on the path, the Neo4j
they need (skipped without one, a failure in CI), and episodes as Kafka records."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from _scale_harness import (
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
from _serve_harness import LLM_KEY, LLMThread

from epigraph.pipeline.inputs import EpisodeInput

from .conftest import _skip_or_fail

__all__ = [
    "LLM_KEY", "CityWorld", "LLMThread", "WorkerProcess", "canonical", "create_topic", "current_episode",
    "episodes", "moves", "neo4j_uri", "publish", "wait_for", "worker_env",
]  # fmt: skip

NEO4J_SKIP = "EPIGRAPH_NEO4J_URI not set: run `make test` to start a real Neo4j"


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
