"""bench/performance/communities.py end to end on the LoCoMo 26 gold graph (scripted models, hash embedder, no
latency): a full build names every community in one call, an update after one episode re-summarizes only
what changed, an update with nothing new costs nothing."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

from bench.performance import communities
from bench.shared.paths import DATASETS as LOCOMO


def test_the_bench_measures_a_build_and_an_update_after_one_episode(tmp_path: Path) -> None:
    if not (LOCOMO / "26.json").exists():
        if os.environ.get("CI"):
            pytest.fail(f"no LoCoMo data at {LOCOMO}")
        pytest.skip(f"no LoCoMo data at {LOCOMO}")
    argv = [
        "--conversation",
        str(LOCOMO),
        "--embedder",
        "hash",
        "--latency",
        "0",
        "--results-dir",
        str(tmp_path),
    ]
    asyncio.run(communities.main(argv))
    metrics = json.loads((tmp_path / "communities.json").read_text(encoding="utf-8"))["metrics"]
    m = {k.removeprefix("embedded."): v for k, v in metrics.items()}
    assert m["graph.episodes"] == 57 and m["build.communities"] >= 3
    assert m["build.calls"] == 1 and m["build.summarized"] == m["build.communities"]
    assert m["update.calls"] == 1 and m["update.rebuilt"] == 0
    assert 1 <= m["update.summarized"] < m["update.communities"]
    assert m["unchanged.calls"] == 0 and m["unchanged.kept"] == m["unchanged.communities"]
    assert m["conversation.build.folded"] == 57 and m["conversation.update.folded"] == 1
    assert m["conversation.update.calls"] == 1
