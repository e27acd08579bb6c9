"""What the serve bench and the serve tests share: a scripted world behind the local OpenAI-compatible
test server (``epigraph.testing.server``, run on its own loop in a thread, with a fixed reply delay and
switchable faults), and ``epigraph serve`` as a real subprocess on a free loopback port.

The world answers each of the pipeline's prompts from the episode's own words: every capitalized word
is an entity, the first two are linked by one fact; the ask agent plans one fact search, then answers.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from epigraph.prompts.grammar import NONE
from epigraph.testing.reading import asked_in, episode_in, prompt_of
from epigraph.testing.server import FakeOpenAIServer, Reply

LLM_KEY = "llm-test-key-not-a-secret"
_NAME = re.compile(r"\b[A-Z][a-z]{2,}\b")


def names_in(text: str) -> list[str]:
    """The entities the world sees in an episode: its capitalized words, once each, in order."""
    return list(dict.fromkeys(_NAME.findall(text)))


@dataclass
class World:
    """The scripted LLM. ``delay_s``: every reply waits this long; ``fault``: None, ``"429"``, ``"500"``
    or ``"hang"`` (applies to extraction calls while set); counts what it answered."""

    delay_s: float = 0.0
    fault: str | None = None
    calls: int = 0
    faults_sent: int = 0
    runs: Counter[str] = field(default_factory=Counter)
    """Episode content -> entity extractions asked for it: how many times the episode was run."""
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, body: dict[str, Any]) -> Reply:
        system, user = body["messages"][0]["content"], body["messages"][-1]["content"]
        with self._lock:
            self.calls += 1
            if prompt_of(body) == "extract_entities":
                self.runs[episode_in(body)] += 1
        prompt = prompt_of(body)
        if prompt is not None and prompt.startswith("extract_") and self.fault is not None:
            with self._lock:
                self.faults_sent += 1
            return _fault(self.fault)
        return Reply(text=self._text(body, prompt, system, user), delay_s=self.delay_s)

    def _text(self, body: dict[str, Any], prompt: str | None, system: str, user: str) -> str:
        names = names_in(episode_in(body)) if prompt and prompt.startswith("extract_") else []
        if prompt == "extract_entities":
            return "; ".join(names) or NONE
        if prompt in ("extract_facts", "extract_combined"):
            if len(names) < 2:
                return "\n".join(f"[{n}]" for n in names) if prompt == "extract_combined" and names else NONE
            a, b = names[:2]
            alone = [f"[{n}]" for n in names[2:]] if prompt == "extract_combined" else []
            return "\n".join([f"[{a}] knows [{b}].", *alone])
        if prompt == "resolve_episode":
            entities, facts = asked_in(body)
            return "\n".join(f"{item.id} new" for item in [*entities, *facts])
        if system.startswith("Write a summary"):
            entities = json.loads(user.split("Entities: ", 1)[1])
            return json.dumps({"summaries": [{"id": e["id"], "summary": f"{e['name']}."} for e in entities]})
        if system.startswith("You plan lookups"):
            if "(nothing yet)" in user:
                return json.dumps(
                    {"thought": "Look up the facts.", "action": "search_facts", "query": "knows"}
                )
            return json.dumps({"thought": "Enough found.", "action": "answer"})
        if system.startswith("Answer the question"):
            return "Alice knows Bob [F1]."
        if system.startswith("Each community below"):
            found = json.loads(user.split("Communities: ", 1)[1])
            named = [{"id": c["id"], "name": " and ".join(m["name"] for m in c["members"][:2]),
                      "summary": "People who know each other."} for c in found]  # fmt: skip
            return json.dumps({"communities": named})
        if system.startswith("You keep the running summary"):
            return "They talked: " + " / ".join(user.split("New messages:\n", 1)[1].splitlines())
        return "{}"


def _fault(kind: str) -> Reply:
    if kind == "429":
        return Reply.rate_limited(retry_after=None, retry_after_ms=50)
    if kind == "500":
        return Reply.server_error()
    if kind == "hang":
        return Reply.hanging()
    raise ValueError(f"unknown fault {kind!r}")


class LLMThread:
    """The test server served by an event loop of its own in a background thread, so that threads and
    subprocesses reach it while the caller blocks."""

    def __init__(self, world: Any, *, embed_dim: int = 8, api_key: str | None = LLM_KEY) -> None:
        self.world = world  # a World, or any handler of the test server
        self.server = FakeOpenAIServer(world, api_key=api_key, embed_dim=embed_dim)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)

    def __enter__(self) -> LLMThread:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self.server.__aenter__(), self._loop).result(10)
        return self

    def __exit__(self, *exc: object) -> None:
        asyncio.run_coroutine_threadsafe(self.server.__aexit__(None, None, None), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()

    @property
    def url(self) -> str:
        return self.server.base_url


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def uvicorn_thread(app: Any, timeout_s: float = 30.0) -> Iterator[str]:
    """``app`` under uvicorn in a background thread (its own event loop) on a free loopback port; yields
    its URL and stops it on exit."""
    import uvicorn

    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + timeout_s
    while not server.started and thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.05)
    if not server.started:
        raise RuntimeError(f"uvicorn did not start within {timeout_s} s")
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout_s)


def server_env(db: Path, llm_url: str, **extra: str) -> dict[str, str]:
    """The environment of an ``epigraph serve`` subprocess: embedded store ``db``, the test LLM, the
    hash embedder, short LLM timeouts (a hang fails the episode in seconds, not minutes)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("EPIGRAPH_")}
    env.update(
        EPIGRAPH_DB=str(db), EPIGRAPH_LLM_BASE_URL=llm_url, EPIGRAPH_LLM_API_KEY=LLM_KEY,
        EPIGRAPH_LLM_MODEL="fake-model", EPIGRAPH_EMBEDDER="hash", EPIGRAPH_LLM_TIMEOUT="2",
        EPIGRAPH_LLM_MAX_ATTEMPTS="3", EPIGRAPH_LLM_MAX_RETRY_SECONDS="4", HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
    )  # fmt: skip
    env.update(extra)
    return env


class ServerProcess:
    """``python -m epigraph serve`` on a free loopback port; ``kill()`` is ``kill -9``."""

    def __init__(self, env: dict[str, str], log: Path) -> None:
        self.env, self.log = env, log
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout_s: float = 60.0) -> ServerProcess:
        cmd = [sys.executable, "-m", "epigraph", "serve", "--port", str(self.port)]
        with self.log.open("ab") as out:
            self.proc = subprocess.Popen(cmd, env=self.env, stdout=out, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"epigraph serve exited ({self.proc.returncode}); see {self.log}")
            try:
                if httpx.get(f"{self.url}/v1/ready", timeout=1.0).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        self.kill()
        raise RuntimeError(f"epigraph serve was not ready within {timeout_s} s; see {self.log}")

    def kill(self) -> None:
        """``kill -9``: no shutdown, no cleanup."""
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.kill()
