"""bench/serve_bench.py's mixed load, short: a real ``epigraph serve`` process, a few clients reading and
writing for a few seconds while it ingests, then every accepted episode audited."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from _serve_harness import LLMThread, World, server_env
from _serve_load import WEIGHTS
from serve_bench import GROUPS, SEEDED, mixed_row


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
