"""Two processes on one store do not do the same LLM work twice (issue 31): ``epigraph serve`` running on a
SQLite file while ``epigraph ingest`` feeds the same file and group. Each time the CLI is in the middle of
an episode, an add to the server wakes its background run, which finds the CLI's episode ``pending``; it
must wait for the CLI's claim (and then skip the episode, done), not run it too. The test LLM server counts
the runs of every episode: each is run once.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import httpx

from bench.shared.serve_harness import LLMThread, ServerProcess, World, server_env

T = "2024-05-02T10:00:00Z"
CLI_TEXTS = ["Alice met Bob.", "Carol met Dave.", "Erin met Frank.", "Grace met Heidi."]
SERVER_TEXTS = ["Ivan met Judy.", "Kevin met Laura.", "Mallory met Niaj."]


def _wait(condition: Callable[[], bool], timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"waited {timeout_s} s for {what}"
        time.sleep(0.02)


def _statuses(url: str, group: str) -> dict[str, str]:
    listed = httpx.get(f"{url}/v1/groups/{group}/episodes", params={"limit": 100}, timeout=10).json()
    return {e["content"]: e["status"] for e in listed["episodes"]}


def test_a_server_and_the_cli_on_one_file_run_each_episode_once(tmp_path: Path) -> None:
    world = World(delay_s=0.3)  # an episode takes the CLI a second or more: long enough to be seen pending
    episodes = tmp_path / "episodes.jsonl"
    episodes.write_text("".join(json.dumps({"content": c, "reference_time": T}) + "\n" for c in CLI_TEXTS))
    with LLMThread(world) as llm:
        env = server_env(tmp_path / "graph.db", llm.url, EPIGRAPH_GROUP="shared")
        server = ServerProcess(env, tmp_path / "serve.log").start()
        try:
            cmd = [sys.executable, "-m", "epigraph", "ingest", str(episodes)]
            with (tmp_path / "ingest.log").open("wb") as out:
                cli = subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.STDOUT)
            for cli_text, server_text in zip(CLI_TEXTS, SERVER_TEXTS, strict=False):
                _wait(lambda text=cli_text: world.runs[text] >= 1, 120, f"the CLI to run {cli_text!r}")  # type: ignore[misc]
                body = {"content": server_text, "reference_time": T}
                added = httpx.post(f"{server.url}/v1/groups/shared/episodes", json=body, timeout=10)
                assert added.status_code == 202, added.text
            assert cli.wait(180) == 0, (tmp_path / "ingest.log").read_text(encoding="utf-8")
            everything = [*CLI_TEXTS, *SERVER_TEXTS]
            _wait(
                lambda: _statuses(server.url, "shared") == dict.fromkeys(everything, "done"), 180, "all done"
            )
        finally:
            server.stop()
    assert world.runs == Counter(everything)  # before claims, the server also ran the CLI's episodes
