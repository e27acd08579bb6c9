"""``kill -9`` during ingestion loses nothing and duplicates nothing: ``epigraph serve`` as a real
subprocess (embedded SQLite file), the LLM the local test server answering slowly, a restart resumes
every group's pending episodes in order (those the killed server had claimed once its claims lapse)."""

from __future__ import annotations

import socket
import time
from pathlib import Path

import httpx

from bench.shared.serve_harness import LLMThread, ServerProcess, World, server_env

NAMES = ["Alice", "Bob", "Carol", "Dave", "Erin", "Frank", "Grace", "Heidi", "Ivan", "Judy", "Kevin",
         "Laura", "Mallory", "Niaj", "Olivia", "Peggy", "Quentin", "Rupert", "Sybil", "Trent", "Ursula",
         "Victor", "Walter", "Xavier", "Yvonne", "Zoe"]  # fmt: skip
T = "2024-05-02T10:00:00Z"


def _episodes(group: int) -> list[dict[str, str]]:
    out = []
    for i in range(6):
        a, b = NAMES[group * 12 + 2 * i], NAMES[group * 12 + 2 * i + 1]
        out.append({"content": f"{a} met {b}.", "reference_time": T})
    return out


def _statuses(url: str, group: str) -> dict[str, str]:
    listed = httpx.get(f"{url}/v1/groups/{group}/episodes", params={"limit": 1000}, timeout=10).json()
    return {e["uuid"]: e["status"] for e in listed["episodes"]}


def _add_all(url: str) -> dict[str, list[str]]:
    accepted: dict[str, list[str]] = {}
    for g in range(2):
        for episode in _episodes(g):  # one request each: every 202 is a promise
            r = httpx.post(f"{url}/v1/groups/g{g}/episodes", json=episode, timeout=10)
            assert r.status_code == 202, r.text
            accepted.setdefault(f"g{g}", []).append(r.json()["episodes"][0]["uuid"])
    return accepted


def _wait_until(url: str, groups: list[str], done: int | None, timeout_s: float) -> dict[str, dict[str, str]]:
    """Poll until ``done`` episodes are done (None: until none is pending); returns the statuses."""
    deadline = time.monotonic() + timeout_s
    while True:
        statuses = {g: _statuses(url, g) for g in groups}
        flat = [s for st in statuses.values() for s in st.values()]
        if (flat.count("done") >= done) if done is not None else "pending" not in flat:
            return statuses
        assert time.monotonic() < deadline, statuses
        time.sleep(0.05)


def _check_written_once(url: str, group: str) -> None:
    """Each episode's one fact is in the graph once, from that one episode."""
    params = {"q": "met knows", "scope": "facts", "limit": 100}
    facts = httpx.get(f"{url}/v1/groups/{group}/search", params=params, timeout=10).json()["facts"]
    by_text: dict[str, list[list[str]]] = {}
    for f in facts:
        by_text.setdefault(f["fact"]["text"], []).append(f["fact"]["episodes"])
    expected = [
        f"{a} knows {b[:-1]}." for a, _, b in (e["content"].split() for e in _episodes(int(group[1])))
    ]
    assert sorted(by_text) == sorted(expected)
    assert all(len(v) == 1 and len(v[0]) == 1 for v in by_text.values())
    stats = httpx.get(f"{url}/v1/groups/{group}/stats", timeout=10).json()
    assert (stats["episodes"], stats["facts"], stats["pending_episodes"]) == (6, 6, 0)


def test_kill_9_mid_ingestion_then_restart_runs_every_accepted_episode_exactly_once(tmp_path: Path) -> None:
    with LLMThread(World(delay_s=0.15)) as llm:
        # the killed server's claims on its episodes in flight lapse after 5 s, then the next one runs them
        env = server_env(tmp_path / "graph.db", llm.url, EPIGRAPH_CLAIM_SECONDS="5")
        first = ServerProcess(env, tmp_path / "serve.log").start()
        try:
            accepted = _add_all(first.url)
            before = _wait_until(first.url, list(accepted), 2, 60)
        finally:
            first.kill()
        done_before = [s for st in before.values() for s in st.values()].count("done")
        assert 2 <= done_before < 12, "the kill must land mid-ingestion"
        second = ServerProcess(env, tmp_path / "serve.log").start()
        try:
            after = _wait_until(second.url, list(accepted), None, 120)
            for group, ids in accepted.items():
                assert after[group] == dict.fromkeys(ids, "done")  # none lost, none extra
                _check_written_once(second.url, group)
        finally:
            second.stop()
    assert "API keys OFF" in (tmp_path / "serve.log").read_text(encoding="utf-8")  # said at each start


def _open_stream(port: int, request: bytes, until: bytes) -> tuple[socket.socket, bytes]:
    client = socket.create_connection(("127.0.0.1", port), timeout=60)
    client.sendall(request)
    received = b""
    while until not in received:
        received += client.recv(4096)
    return client, received


def _read_to_close(client: socket.socket, received: bytes) -> bytes:
    with client:
        while chunk := client.recv(4096):
            received += chunk
    return received


def test_a_stopped_server_ends_its_open_streams_cleanly(tmp_path: Path) -> None:
    """SIGTERM with an event stream and a question's stream open (clients that keep their connections,
    as curl does): each ends at once with its last event, the server exits, and its log holds no error
    (uvicorn used to wait 5 s, cancel the streams and log an ERROR with a traceback)."""
    world = World(delay_s=20.0)  # the question waits for the model's plan when the server is stopped
    with LLMThread(world) as llm:
        server = ServerProcess(server_env(tmp_path / "graph.db", llm.url), tmp_path / "serve.log").start()
        try:
            events, head = _open_stream(
                server.port, b"GET /v1/groups/g0/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", b"Subscribed"
            )
            body = b'{"question": "Who?", "streaming": true}'
            asked, _ = _open_stream(server.port, b"POST /v1/groups/g0/ask HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                    b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
                                    % (len(body), body), b"200 OK")  # fmt: skip
            deadline = time.monotonic() + 60
            while world.calls == 0:  # the question is with the model
                assert time.monotonic() < deadline
                time.sleep(0.05)
            assert server.proc is not None
            server.proc.terminate()
            streamed, answer = _read_to_close(events, head), _read_to_close(asked, b"")
            assert server.proc.wait(60) in (0, -15)  # a bound for a hang only: uvicorn re-raises SIGTERM
        finally:
            server.kill()
    assert b'data: {"type": "ServerStopping"}' in streamed and streamed.endswith(b"0\r\n\r\n")
    assert b'"type": "ServerStopping"' in answer and b'"end_of_dialog": true' in answer
    assert answer.endswith(b"0\r\n\r\n")
    log = (tmp_path / "serve.log").read_text(encoding="utf-8")
    assert "Finished server process" in log
    assert "ERROR" not in log and "Traceback" not in log, log
