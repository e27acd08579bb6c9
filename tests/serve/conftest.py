"""Fixtures of the serve tests: the scripted LLM behind the local OpenAI-compatible test server, and
``epigraph serve``'s app under uvicorn on a free loopback port in a background thread."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from bench.shared.serve_harness import LLM_KEY, LLMThread, World, uvicorn_thread
from epigraph.client import KnowledgeGraph
from epigraph.config import Settings
from epigraph.serve import Keys, Limits, create_app

KEYS = {"key-alpha": frozenset({"alpha"}), "key-beta": frozenset({"beta"}), "key-all": frozenset({"*"})}
# questions get all the time a loaded machine needs; the time limit has its own app (test_http)
LIMITS = Limits(max_body_bytes=20_000, max_batch=5, max_episode_chars=2_000, ask_timeout_s=60.0)


def auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


@pytest.fixture(scope="module")
def world() -> World:
    return World()


@pytest.fixture(scope="module")
def llm(world: World) -> Iterator[LLMThread]:
    with LLMThread(world) as thread:
        yield thread


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


@pytest.fixture(scope="module")
def served(llm: LLMThread, world: World, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """The app with keys on, under uvicorn in a thread (its own event loop), on a free loopback port."""
    tmp = tmp_path_factory.mktemp("serve")
    kg = KnowledgeGraph(graph_settings(tmp / "graph.db", llm.url))
    app = create_app(kg, keys=Keys(KEYS), limits=LIMITS, groups_file=tmp / "graph.db.groups")
    with uvicorn_thread(app) as url:
        yield Served(url, world)


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
