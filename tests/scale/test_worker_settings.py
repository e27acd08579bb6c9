"""The LLM limits a worker takes when N workers share one endpoint, and ``epigraph worker``'s refusals."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from epigraph.config import Settings
from epigraph.scale.worker_config import share_llm_limits


def test_n_workers_each_take_a_share_of_the_llm_limits() -> None:
    settings = Settings(llm_max_in_flight=8, llm_rpm=600, llm_tpm=0)
    mine = share_llm_limits(settings, 3)
    assert (mine.llm_max_in_flight, mine.llm_rpm, mine.llm_tpm) == (2, 200, 0)  # 0 stays unlimited
    assert share_llm_limits(Settings(llm_max_in_flight=2, llm_rpm=5), 4).llm_max_in_flight == 1
    assert share_llm_limits(Settings(llm_rpm=5), 10).llm_rpm == 1  # never 0: that would mean unlimited
    with pytest.raises(ValueError, match="positive number of workers"):
        share_llm_limits(settings, 0)


def _worker(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("EPIGRAPH_")}
    cmd = [sys.executable, "-m", "epigraph", "worker", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env)


def test_the_worker_command_names_what_is_missing() -> None:
    run = _worker()
    assert run.returncode == 2 and "--kafka" in run.stderr and "EPIGRAPH_KAFKA_BOOTSTRAP" in run.stderr
    run = _worker("--kafka", "127.0.0.1:9", "--llm-share", "0")
    assert run.returncode == 2 and "--llm-share" in run.stderr and "at least 1" in run.stderr
