"""The store bench's code at a tiny size: every figure of a size written, the embedded store's through its
approximate vector index (``--exact-below`` low) with recall@10 against brute force."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.performance.store import main
from bench.performance.store_search import parse_size, size_label
from epigraph.graph.embedded import ann


@pytest.mark.parametrize(
    ("text", "size", "label"),
    [("1m", 1_000_000, "1m"), ("100k", 100_000, "100k"), ("20000", 20_000, "20k"), ("2.5k", 2_500, "2k")],
)
def test_sizes_are_read_and_named(text: str, size: int, label: str) -> None:
    assert parse_size(text) == size and size_label(size) == label


@pytest.mark.skipif(not ann.AVAILABLE, reason="usearch is not installed (epigraph[ann])")
async def test_the_bench_writes_every_figure_of_a_size(tmp_path: Path) -> None:
    args = ["--sizes", "1500", "--stores", "embedded", "--queries", "12", "--exact-below", "500"]
    await main([*args, "--results-dir", str(tmp_path)])
    metrics = json.loads((tmp_path / "store.json").read_text(encoding="utf-8"))["metrics"]
    wanted = ["hybrid_p50_ms", "hybrid_p95_ms", "time_travel_hybrid_p50_ms", "time_travel_hybrid_p95_ms",
              "episode_write_facts_per_s", "memory_mb", "file_mb", "open_first_search_s",
              "open_index_ready_s", "index_build_s", "recall_at_10"]  # fmt: skip
    assert not [m for m in wanted if f"embedded.1k.{m}" not in metrics]
    assert metrics["embedded.1k.recall_at_10"] >= 0.95 and metrics["embedded.1k.file_mb"] > 0
