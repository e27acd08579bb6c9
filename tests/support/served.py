"""Talking to ``epigraph serve`` in the serve tests: the keys and limits of the served app, its settings
over the scripted test LLM (``bench.shared.serve_harness``), a client with a key, and waiting for
episodes, adding them, reading server-sent events."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from bench.shared.serve_harness import LLM_KEY, World
from epigraph.config import Settings
from epigraph.serve import Limits

KEYS = {"key-alpha": frozenset({"alpha"}), "key-beta": frozenset({"beta"}), "key-all": frozenset({"*"})}


# questions get all the time a loaded machine needs; the time limit has its own app (test_http)
LIMITS = Limits(max_body_bytes=20_000, max_batch=5, max_episode_chars=2_000, ask_timeout_s=60.0)


def auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def graph_settings(db: Path, llm_url: str) -> Settings:
    return Settings(
        db_path=str(db), llm_base_url=llm_url, llm_api_key=LLM_KEY, llm_model="fake-model",  # type: ignore[arg-type]
        embedder="hash", llm_timeout=2.0, llm_max_attempts=2, llm_max_retry_seconds=2.0,
    )  # fmt: skip


@dataclass
class Served:
    url: str
    world: World

    def client(self, key: str | None = "key-all") -> httpx.Client:
        return httpx.Client(base_url=self.url, headers=auth(key) if key else {}, timeout=30.0)


def wait_done(client: httpx.Client, group: str, uuids: list[str], timeout_s: float = 60.0) -> dict[str, str]:
    """Poll each episode until none is pending; returns uuid -> status."""
    deadline = time.monotonic() + timeout_s
    status: dict[str, str] = {}
    while time.monotonic() < deadline:
        status = {u: client.get(f"/v1/groups/{group}/episodes/{u}").json()["status"] for u in uuids}
        if all(s != "pending" for s in status.values()):
            return status
        time.sleep(0.1)
    raise AssertionError(f"episodes still pending after {timeout_s} s: {status}")


T = "2024-05-02T10:00:00Z"


def sse_events(response: httpx.Response) -> Iterator[dict[str, Any]]:
    """The JSON ``data:`` of each server-sent event, as the bytes arrive."""
    data: list[str] = []
    for line in response.iter_lines():
        if line.startswith("data:"):
            data.append(line[5:].strip())
        elif line == "" and data:
            yield json.loads("\n".join(data))
            data = []


def add(client: httpx.Client, group: str, *contents: str) -> list[str]:
    body = {"episodes": [{"content": c, "reference_time": T, "speaker": None} for c in contents]}
    response = client.post(f"/v1/groups/{group}/episodes/batch", json=body)
    assert response.status_code == 202, response.text
    return [e["uuid"] for e in response.json()["episodes"]]
