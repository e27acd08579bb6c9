"""``epigraph ask`` through the real command: in-process ``main()`` and one real subprocess, against the
local OpenAI-compatible server (on its own thread) and an embedded store file holding the Alice graph."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from epigraph.ask import AskChunk, check_dialog
from epigraph.cli import main
from epigraph.graph.embedded import EmbeddedStore
from epigraph.testing import HashEmbedder
from epigraph.testing.server import FakeOpenAIServer, Reply
from tests.support.ask_graph import BERLIN, ingest

ANSWER = ["Alice ", "lived ", "in ", "Berlin ", "then ", "[F1]", "."]


class Model:
    """The agent: plans one fact search of "Alice lives" as of mid-2022. The answer: ``ANSWER`` in slow
    pieces (on this graph the Berlin fact is F1 for the agent's lookup and the one-call context alike)."""

    delay = 0.0

    def __call__(self, body: dict[str, Any]) -> Reply:
        system, user = body["messages"][0]["content"], body["messages"][-1]["content"]
        if system.startswith("You plan lookups"):
            if "(nothing yet)" in user:
                step = {"thought": "Search mid-2022.", "action": "search_facts", "query": "Alice lives",
                        "as_of": "2022-06-01"}  # fmt: skip
                return Reply(json.dumps(step))
            return Reply(json.dumps({"thought": "Enough.", "action": "answer"}))
        return Reply(text="".join(ANSWER), chunks=ANSWER, chunk_delay_s=self.delay)


class Served:
    """The test server on a background event loop, so ``main()`` (its own ``asyncio.run``) and a
    subprocess can reach it."""

    def __init__(self) -> None:
        self.model = Model()
        self.server: FakeOpenAIServer | None = None
        self._up = threading.Event()
        self._thread = threading.Thread(target=asyncio.run, args=(self._serve(),), daemon=True)

    async def _serve(self) -> None:
        self._stop = asyncio.Event()
        self._loop = asyncio.get_running_loop()
        async with FakeOpenAIServer(self.model) as self.server:
            self._up.set()
            await self._stop.wait()

    def __enter__(self) -> Served:
        self._thread.start()
        assert self._up.wait(10)
        return self

    def __exit__(self, *exc: object) -> None:
        self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(10)

    def env(self, db: Path) -> dict[str, str]:
        assert self.server is not None
        return {
            "EPIGRAPH_EMBEDDER": "hash", "HF_HUB_OFFLINE": "1", "EPIGRAPH_DB": str(db), "EPIGRAPH_GROUP": "g",
            "EPIGRAPH_LLM_BASE_URL": self.server.base_url, "EPIGRAPH_LLM_MODEL": "fake-model",
            "EPIGRAPH_LLM_API_KEY": "k",
        }  # fmt: skip


@pytest.fixture(scope="module")
def served() -> Iterator[Served]:
    with Served() as s:
        yield s


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("ask") / "graph.db"

    async def build() -> None:
        embedder = HashEmbedder()
        async with EmbeddedStore(str(path)) as store:
            await store.setup(embedder.dim)
            await ingest(store, embedder)

    asyncio.run(build())
    return path


def streamed(served: Served) -> list[bool]:
    assert served.server is not None
    return [bool(r.body.get("stream")) for r in served.server.chat_requests]


def test_ask_streams_by_default(served: Served, db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The default path: one context assembled without the model, one answering call, streamed."""
    before = len(streamed(served))
    code = main(["ask", "Where did Alice live in 2022?"], environ=served.env(db))
    out, err = capsys.readouterr()
    assert code == 0, err
    assert streamed(served)[before:] == [True], "one call: the answer, streamed"
    assert "lookup: search_facts(query='Where did Alice live in 2022?', during='2022')" in out
    assert "lookup: search_episodes(" in out and "thought:" not in out
    assert "Alice lived in Berlin then [F1]." in out
    table = out.split("Citations", 1)[1]
    assert BERLIN in table and "2022-01-10 → 2024-02-01" in table and "ended" in table
    assert "1 model calls, 5 lookups" in out

    code = main(["ask", "Where did Alice live in 2022?", "--quiet"], environ=served.env(db))
    quiet, _ = capsys.readouterr()
    assert code == 0 and "thought:" not in quiet and "lookup:" not in quiet and "model calls" not in quiet
    assert quiet.startswith("Alice lived in Berlin then [F1].") and BERLIN in quiet


def test_the_agent_path_is_chosen_with_mode(
    served: Served, db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = len(streamed(served))
    code = main(["ask", "Where did Alice live in 2022?", "--mode", "agent"], environ=served.env(db))
    out, err = capsys.readouterr()
    assert code == 0, err
    assert streamed(served)[before:] == [False, False, True], "plans whole, the answer streamed"
    assert "thought: Search mid-2022." in out and "lookup: search_facts(query='Alice lives'" in out
    assert "Alice lived in Berlin then [F1]." in out and BERLIN in out.split("Citations", 1)[1]
    code = main(["ask", "Where?", "--mode", "fast"], environ=served.env(db))
    assert code == 2 and "invalid choice: 'fast'" in capsys.readouterr().err


def test_no_streaming_prints_one_answer(served: Served, db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = len(streamed(served))
    code = main(["ask", "Where did Alice live in 2022?", "--no-streaming"], environ=served.env(db))
    out, err = capsys.readouterr()
    assert code == 0, err
    assert streamed(served)[before:] == [False], "one call, not streamed"
    assert out.count("Alice lived in Berlin then [F1].") == 1 and BERLIN in out.split("Citations", 1)[1]

    code = main(["--json", "ask", "Where did Alice live in 2022?", "--no-streaming"], environ=served.env(db))
    answer = json.loads(capsys.readouterr().out)
    assert code == 0 and answer["text"] == "".join(ANSWER) and answer["error"] is None
    (citation,) = answer["citations"]
    assert citation["text"] == BERLIN and citation["retired"] is True
    assert citation["valid_at"].startswith("2022-01-10") and citation["invalid_at"].startswith("2024-02-01")


def test_json_prints_one_chunk_per_line(served: Served, db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["--json", "ask", "Where did Alice live in 2022?"], environ=served.env(db))
    lines = capsys.readouterr().out.splitlines()
    chunks = [json.loads(line) for line in lines]
    assert code == 0 and len(chunks) > 5
    parsed = [AskChunk.from_dict(c) for c in chunks]
    check_dialog(parsed)
    assert [AskChunk.from_dict(c).to_dict() for c in chunks] == chunks, "the lines round-trip"
    assert chunks[-1]["citations"][0]["text"] == BERLIN and chunks[-1]["usage"]["calls"] == 1


def test_the_real_command_prints_the_answer_as_it_arrives(served: Served, db: Path) -> None:
    """A subprocess: the first answer piece is on its stdout while the server is still writing (the
    context path: ``auto`` would hold the text back until its first citation)."""
    assert served.server is not None
    served.model.delay = 0.4
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("EPIGRAPH_")}, **served.env(db)}
    question = "Where did Alice live in 2022?"
    command = [sys.executable, "-m", "epigraph", "ask", question, "--quiet", "--mode", "context"]
    try:
        with subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
            assert proc.stdout is not None
            first = os.read(proc.stdout.fileno(), len(ANSWER[0]))  # unbuffered: communicate() reads the rest
            answer = [r for r in served.server.chat_requests if r.body.get("stream")][-1]
            still_writing = answer.finished_at is None and answer.chunks_sent < len(ANSWER)
            rest, err = proc.communicate(timeout=120)
    finally:
        served.model.delay = 0.0
    assert proc.returncode == 0, err.decode()
    assert first.decode() == ANSWER[0] and still_writing, "the first piece came before the last was sent"
    assert (first + rest).decode().startswith("".join(ANSWER))
