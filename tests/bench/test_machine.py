"""bench/shared/machine.py: the machine-speed figures stored beside each store's results."""

from __future__ import annotations

import math
from pathlib import Path

from bench.shared.machine import calibrate
from bench.shared.results import write_results


def test_calibration_measures_both_workloads_in_a_child_process(tmp_path: Path) -> None:
    figures = calibrate(repeat=3)
    assert set(figures) == {"matvec_100k_ms", "python_ms"}
    for value in figures.values():
        assert math.isfinite(value) and 0 < value < 60_000
    # they travel as ordinary metrics of the results file
    keys = {f"embedded.machine.{measure}": value for measure, value in figures.items()}
    path = write_results("store", keys, [], results_dir=tmp_path)
    assert path.read_text(encoding="utf-8").count("embedded.machine.") == 2
