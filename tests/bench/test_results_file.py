"""bench/shared/results.py: the results file every benchmark writes (DESIGN.md section 9)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.shared.results import KEPT_NOTE, write_results


def _read(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def test_a_run_writes_the_documented_format(tmp_path: Path) -> None:
    path = write_results("store", {"embedded.10k.fulltext_p50_ms": 0.8}, ["a: b"], results_dir=tmp_path)
    data = _read(path)
    assert path == tmp_path / "store.json"
    assert {"bench", "when", "commit", "machine", "metrics", "notes"} <= data.keys()
    assert data["metrics"] == {"embedded.10k.fulltext_p50_ms": 0.8} and data["notes"] == ["a: b"]


@pytest.mark.parametrize("metrics", [{"a b": 1.0}, {"": 1.0}, {"x": float("nan")}, {"x": "fast"}])
def test_bad_metrics_are_rejected_and_nothing_is_written(tmp_path: Path, metrics: dict) -> None:
    with pytest.raises(ValueError):
        write_results("store", metrics, [], results_dir=tmp_path)
    assert not list(tmp_path.iterdir())


def test_merge_keeps_unmeasured_metrics_and_replaces_a_reworded_note(tmp_path: Path) -> None:
    old = {"neo4j.100k.bulk_write_facts_per_s": 1500.0, "embedded.100k.bulk_write_facts_per_s": 6000.0}
    write_results("store", old, ["episode writes: old wording", "memory_mb: RSS"], results_dir=tmp_path)
    new = {"embedded.100k.bulk_write_facts_per_s": 6500.0}
    path = write_results("store", new, ["episode writes: new wording"], results_dir=tmp_path, merge=True)
    data = _read(path)
    assert data["metrics"] == {**old, **new}
    notes = data["notes"]
    assert notes[:2] == ["episode writes: new wording", "memory_mb: RSS"]
    assert len(notes) == 3 and KEPT_NOTE in notes[2] and "(neo4j)" in notes[2]


def test_merge_after_merge_keeps_one_origin_note(tmp_path: Path) -> None:
    write_results("store", {"neo4j.10k.x": 1.0, "embedded.10k.x": 2.0}, [], results_dir=tmp_path)
    write_results("store", {"embedded.10k.x": 3.0}, [], results_dir=tmp_path, merge=True)
    path = write_results("store", {"embedded.10k.x": 4.0}, [], results_dir=tmp_path, merge=True)
    notes = _read(path)["notes"]
    assert len([n for n in notes if KEPT_NOTE in n]) == 1
