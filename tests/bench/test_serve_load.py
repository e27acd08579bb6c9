"""bench/performance/serve.py's mixed load, short: a real ``epigraph serve`` process, a few clients
reading and writing for a few seconds while it ingests, then every accepted episode audited."""

from __future__ import annotations

from pathlib import Path

from bench.performance.serve import GROUPS, SEEDED, mixed_row
from bench.performance.serve_load import WEIGHTS
from bench.shared.serve_harness import LLMThread, World, server_env


def test_clients_reading_and_writing_while_the_server_ingests_lose_nothing(tmp_path: Path) -> None:
    with LLMThread(World(delay_s=0.01)) as llm:
        env = server_env(tmp_path / "mixed.db", llm.url)
        figures = mixed_row(env, tmp_path / "serve.log", clients=6, seconds=4.0)
    assert figures["errors"] == 0
    assert figures["requests"] == sum(figures[f"{route}.requests"] for route in WEIGHTS)
    assert figures["post.requests"] > 0 and figures["search.requests"] > 0
    assert figures["accepted"] == len(GROUPS) * SEEDED + figures["post.requests"]
    assert figures["done"] == figures["accepted"] and figures["lost"] == 0 and figures["failed"] == 0
    assert figures["duplicated"] == 0 and figures["drained"] == 1.0
