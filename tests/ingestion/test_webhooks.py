"""Webhooks on ``episode.done`` / ``episode.failed`` (``epigraph.webhooks``), configured by settings and
sent to a real HTTP receiver on the loopback (the stdlib's server in a thread) that fails the first
tries, stays down, or holds its answer: signed (checked with ``verify``), retried with backoff, bounded,
dead letters counted, and ingestion never waiting for a receiver."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from epigraph import KnowledgeGraph, Settings
from epigraph.episodes.events import EpisodeResult
from epigraph.episodes.inputs import EpisodeInput
from epigraph.errors import ConfigError, LLMUnavailable
from epigraph.graph.embedded import EmbeddedStore
from epigraph.ingestion.ingestor import Ingestor
from epigraph.testing import HashEmbedder, ScriptedReply
from epigraph.webhooks import SIGNATURE, verify, webhooks_from_settings
from tests.support.world import OSLO, OSLO_WORLD, World, episode_of

SECRET = "not-a-real-secret"
T = datetime(2024, 5, 2, 10, tzinfo=UTC)


@dataclass
class Receiver:
    """What the receiver was sent, and how it answers: ``fail_first`` tries with 503, then 200; ``down``:
    500 always; ``hold``: no answer until set."""

    fail_first: int = 0
    down: bool = False
    hold: threading.Event | None = None
    received: list[tuple[dict[str, str], bytes]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    url: str = ""

    def answer(self, headers: dict[str, str], body: bytes) -> int:
        with self.lock:
            self.received.append((headers, body))
            tries = len(self.received)
        if self.hold is not None:
            self.hold.wait(30)
        return 500 if self.down else 503 if tries <= self.fail_first else 200

    def payloads(self) -> list[dict[str, Any]]:
        return [json.loads(body) for _, body in self.received]


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    state = Receiver()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            status = state.answer(dict(self.headers.items()), body)
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            return None

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.url = f"http://127.0.0.1:{server.server_address[1]}/hooks/epigraph"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        if state.hold is not None:
            state.hold.set()
        server.shutdown()
        server.server_close()


def graph(receiver: Receiver, **settings: Any) -> KnowledgeGraph:
    world = World(turns=dict(OSLO_WORLD))
    world.overrides["extract_entities"] = lambda request: (
        ScriptedReply(error=LLMUnavailable("the model is down"))
        if "fail" in episode_of(request.variables) else world.extract_entities(request.variables)
    )  # fmt: skip
    chosen = Settings(webhook_urls=receiver.url, webhook_secret=SECRET, webhook_backoff=0.01, **settings)
    store = EmbeddedStore(":memory:")
    return KnowledgeGraph(chosen, store=store, llm=world.llm(), embedder=HashEmbedder(dim=16))


async def test_a_done_episode_is_delivered_signed_after_the_receiver_failed_twice(receiver: Receiver) -> None:
    receiver.fail_first = 2
    async with graph(receiver) as kg:
        result = await kg.add_episode(OSLO, reference_time=T)
        assert kg.webhooks is not None and await kg.webhooks.drain(30)
        stats = kg.webhooks.stats
    assert (stats.delivered, stats.retries, stats.dead_letters, stats.outstanding) == (1, 2, 0, 0)
    assert len(receiver.received) == 3  # two 503s, then 200
    deliveries = {p["delivery"] for p in receiver.payloads()}
    assert len(deliveries) == 1  # a retry is the same delivery: a receiver can drop repeats
    headers, body = receiver.received[-1]
    assert verify(SECRET, headers, body)
    assert not verify("another secret", headers, body)
    assert not verify(SECRET, headers, body.replace(b"done", b"d0ne"))
    assert not verify(SECRET, headers, body, now=int(headers[SIGNATURE].split(",")[0][2:]) + 301)  # too old
    assert headers["Epigraph-Event"] == "episode.done" and headers["Content-Type"] == "application/json"
    sent = json.loads(body)
    assert sent["type"] == "episode.done" and sent["group_id"] == result.episode.group_id
    assert sent["episode"]["uuid"] == result.episode.uuid and sent["episode"]["status"] == "done"
    assert sent["episode"]["report"]["llm_calls"] == result.report.llm_calls
    assert sent["facts"] == len(result.facts) == 2
    assert "content" not in sent["episode"] and "Oslo" not in body.decode()  # never the user's words


async def test_a_failed_episode_is_delivered_as_episode_failed(receiver: Receiver) -> None:
    async with graph(receiver) as kg:
        result = await kg.add_episode("Ann: this will fail", reference_time=T, raise_on_failure=False)
        assert kg.webhooks is not None and await kg.webhooks.drain(30)
    assert not result.ok
    (sent,) = receiver.payloads()
    assert sent["type"] == "episode.failed" and sent["episode"]["status"] == "failed"
    assert sent["episode"]["error"] == result.error and "LLMUnavailable" in sent["episode"]["error"]


async def test_a_receiver_that_stays_down_makes_one_dead_letter_after_the_bounded_tries(
    receiver: Receiver,
) -> None:
    receiver.down = True
    async with graph(receiver, webhook_attempts=3) as kg:
        assert (await kg.add_episode(OSLO, reference_time=T)).ok
        assert kg.webhooks is not None and await kg.webhooks.drain(30)
        stats = kg.webhooks.stats
    assert len(receiver.received) == 3 and (stats.delivered, stats.retries, stats.dead_letters) == (0, 2, 1)


async def test_ingestion_never_waits_for_a_receiver_and_the_queue_is_bounded(receiver: Receiver) -> None:
    receiver.hold = threading.Event()
    async with graph(receiver, webhook_queue=1, webhook_events="episode.done") as kg:
        first = await kg.add_episode(OSLO, reference_time=T)
        hooks = kg.webhooks
        assert hooks is not None
        assert first.ok and hooks.stats.outstanding == 1  # done while its delivery is still unanswered
        second = await kg.add_episode("Ann: a second turn", reference_time=T)
        assert second.ok and hooks.stats.dead_letters == 1  # the queue held one already: given up
        failed = await kg.add_episode("Ann: this will fail", reference_time=T, raise_on_failure=False)
        assert not failed.ok and hooks.stats.dead_letters == 1  # not an event asked for
        receiver.hold.set()
        assert await hooks.drain(30) and hooks.stats.delivered == 1
        receiver.hold = threading.Event()
        assert (await kg.add_episode("Ann: a third turn", reference_time=T)).ok
        await hooks.close(grace=0.05)  # the graph closes while one is unanswered: given up, counted
        assert hooks.stats.dead_letters == 2 and hooks.stats.outstanding == 0
        receiver.hold.set()


def test_the_settings_are_checked_and_never_shown() -> None:
    assert webhooks_from_settings(Settings()) is None
    with pytest.raises(ConfigError, match="EPIGRAPH_WEBHOOK_URLS needs EPIGRAPH_WEBHOOK_SECRET"):
        webhooks_from_settings(Settings(webhook_urls="https://hooks.example/x"))
    with pytest.raises(ConfigError, match="entry 2 is not an http") as bad:
        webhooks_from_settings(Settings(webhook_urls="https://a.example/x, ftp://token@b.example/y",
                                        webhook_secret=SECRET))  # fmt: skip
    assert "token" not in str(bad.value)
    with pytest.raises(ConfigError, match="EPIGRAPH_WEBHOOK_EVENTS"):
        webhooks_from_settings(Settings(webhook_urls="https://a.example/x", webhook_secret=SECRET,
                                        webhook_events="episode.done,episode.lost"))  # fmt: skip
    hooks = webhooks_from_settings(Settings(webhook_urls="https://a.example/t0ken https://b.example/x",
                                            webhook_secret=SECRET))  # fmt: skip
    assert hooks is not None and len(hooks.urls) == 2
    assert "t0ken" not in repr(hooks) and SECRET not in repr(hooks)
    assert "t0ken" not in repr(Settings(webhook_urls="https://a.example/t0ken"))


async def test_a_watch_that_fails_changes_nothing_of_the_episode(caplog: pytest.LogCaptureFixture) -> None:
    seen: list[EpisodeResult] = []

    def watch(result: EpisodeResult) -> None:
        seen.append(result)
        raise RuntimeError("a receiver's bug")

    async with EmbeddedStore(":memory:") as store:
        await store.setup(16)
        queue = Ingestor(store, World(turns=dict(OSLO_WORLD)).llm(), HashEmbedder(dim=16), watch=watch)
        item = EpisodeInput.coerce({"content": OSLO, "reference_time": T, "group_id": "g"})
        result = await queue.add_episode(item)
        stored = await store.get_episode("g", result.episode.uuid)
    assert result.ok and stored is not None and stored.status.value == "done"
    assert [r.episode.uuid for r in seen] == [result.episode.uuid]
    assert "the watch of episode" in caplog.text
