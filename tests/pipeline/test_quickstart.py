"""The demo runs offline on its recorded responses and shows changed facts with their history."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

QUICKSTART = Path(__file__).resolve().parents[2] / "examples" / "quickstart.py"


def test_the_quickstart_runs_offline_and_says_so() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("EPIGRAPH_")}
    env["EPIGRAPH_EMBEDDER"] = "hash"
    env["PYTHONPATH"] = str(QUICKSTART.parents[1])  # this checkout's epigraph, not an installed one
    done = subprocess.run(
        [sys.executable, str(QUICKSTART)], env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("epigraph quickstart: running on RECORDED responses")
    out = done.stdout
    assert "Carol (also: Caro)" in out, "the nickname was merged into the entity"
    assert "2023-03-10 .. 2023-08-01 Alice lives in Paris." in out
    assert "retired by: Alice lives in Berlin." in out
    assert "retired by: Alice works at Globex." in out
    current = out.split("Current facts")[1].split("History")[0]
    assert "Alice lives in Berlin." in current and "Alice lives in Paris." not in current


def test_the_quickstart_goes_live_when_an_llm_is_configured() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("EPIGRAPH_")}
    env.update(
        EPIGRAPH_EMBEDDER="hash",
        EPIGRAPH_LLM_BASE_URL="http://127.0.0.1:9/v1",  # nothing listens there: every call fails fast
        EPIGRAPH_LLM_API_KEY="sk-test",
        EPIGRAPH_LLM_MODEL="some-model",
        EPIGRAPH_LLM_MAX_ATTEMPTS="1",
        EPIGRAPH_LLM_TIMEOUT="2",
    )
    done = subprocess.run(
        [sys.executable, str(QUICKSTART)], env=env, capture_output=True, text=True, timeout=120, check=False
    )
    first = done.stdout.splitlines()[0]
    assert first == "epigraph quickstart: running LIVE against some-model at http://127.0.0.1:9/v1"
    assert done.returncode == 1, "failed episodes make the demo fail"
    assert "FAILED (LLMUnavailable" in done.stdout
    assert "sk-test" not in done.stdout + done.stderr
