"""The HTTP API over the wire: uvicorn on a free loopback port, httpx, SSE parsed from the bytes sent,
the pipeline answered by the local OpenAI-compatible test server."""

from __future__ import annotations

import threading
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from bench.shared.serve_harness import LLMThread, World, uvicorn_thread
from epigraph import __version__
from epigraph.client import KnowledgeGraph
from epigraph.episodes.inputs import MAX_EPISODE_CHARS, EpisodeInput, content_problem
from epigraph.errors import InputError
from epigraph.serve import Keys, Limits, create_app
from epigraph.serve.schemas import EpisodeIn, LimitExceeded, checked_inputs
from tests.support.served import KEYS, LIMITS, Served, T, add, auth, graph_settings, sse_events, wait_done


def test_added_episodes_are_ingested_in_order_with_progress_events_on_the_wire(served: Served) -> None:
    events: list[dict[str, Any]] = []
    subscribed = threading.Event()

    def listen() -> None:
        with served.client() as c, c.stream("GET", "/v1/groups/alpha/events") as response:
            assert response.headers["content-type"].startswith("text/event-stream")
            for event in sse_events(response):
                if event["type"] == "Subscribed":
                    subscribed.set()
                    continue
                events.append(event)
                if sum(e["type"] == "EpisodeDone" for e in events) == 3:
                    return

    listener = threading.Thread(target=listen, daemon=True)
    listener.start()
    assert subscribed.wait(10)
    with served.client() as c:
        ids = add(c, "alpha", "Alice met Bob in Paris.", "Carol called Dave.", "Erin visited Frank.")
        assert wait_done(c, "alpha", ids) == dict.fromkeys(ids, "done")
        episode = c.get(f"/v1/groups/alpha/episodes/{ids[0]}").json()
        assert episode["content"] == "Alice met Bob in Paris." and episode["report"]["llm_calls"] >= 2
    listener.join(20)
    done = [e["episode_uuid"] for e in events if e["type"] == "EpisodeDone"]
    assert done == ids  # one group: in the order accepted
    saved = [e["episode_uuid"] for e in events if e["type"] == "EpisodeSaved"]
    assert saved == ids


def test_search_entity_history_range_and_stats(served: Served) -> None:
    with served.client() as c:
        ids = add(c, "alpha", "Grace trusts Heidi.")
        wait_done(c, "alpha", ids)
        found = c.get("/v1/groups/alpha/search", params={"q": "Grace Heidi", "scope": "facts"}).json()
        assert [f["fact"]["text"] for f in found["facts"]][:1] == ["Grace knows Heidi."]
        assert found["entities"] == [] and found["group_ids"] == ["alpha"]
        past = c.get("/v1/groups/alpha/search", params={"q": "Grace", "as_of": "2000-01-01T00:00:00Z"})
        assert past.status_code == 200 and past.json()["as_of"].startswith("2000-01-01")
        said = c.get(
            "/v1/groups/alpha/search", params={"q": "Grace trusts Heidi", "scope": "episodes"}
        ).json()
        assert ids[0] in [e["episode"]["uuid"] for e in said["episodes"]]
        assert past.json()["episodes"] == []  # said in 2024: not among what was said by 2000
        view = c.get("/v1/groups/alpha/entities/Grace").json()
        assert view["entity"]["name"] == "Grace"
        assert view["current"] and view["episodes"] and view["as_of"] is None
        before = c.get("/v1/groups/alpha/entities/Grace", params={"as_of": "2000-01-01"})
        # first named in 2024: as of 2000 there was no Grace (issue 63), and the answer says why
        assert before.status_code == 404 and "nothing said by then names it" in before.text, before.text
        for path, name in [("entities/Grace", "asof"), ("search?q=Grace", "as_off"), ("stats", "x")]:
            unknown = c.get(f"/v1/groups/alpha/{path}", params={name: "2000-01-01"})
            assert unknown.status_code == 422 and unknown.json()["field"] == name, unknown.text
            assert f"unknown query parameter {name!r}" in unknown.json()["detail"]
        assert c.get("/v1/health", params={"verbose": "1"}).status_code == 422
        explored = c.get("/v1/groups/alpha/explore/search", params={"q": "Grace", "as_of": "2000-01-01"})
        assert explored.status_code == 422 and explored.json()["field"] == "as_of"
        history = c.get("/v1/groups/alpha/entities/Grace/history").json()
        assert history["entity"]["name"] == "Grace" and history["history"] == []
        assert c.get("/v1/groups/alpha/entities/Nobody").status_code == 404
        listed = c.get("/v1/groups/alpha/episodes", params={"since": "2024-05-01", "until": "2024-05-03"})
        assert ids[0] in [e["uuid"] for e in listed.json()["episodes"]]
        none = c.get("/v1/groups/alpha/episodes", params={"until": "2024-05-01"}).json()
        assert none["episodes"] == []
        stats = c.get("/v1/groups/alpha/stats").json()
        assert stats["episodes"] >= 4 and stats["pending_episodes"] == 0 and stats["facts"] >= 4


def test_what_changed_in_a_window_grouped_by_entity(served: Served) -> None:
    with served.client() as c:
        ids = add(c, "changes", "Ivan trusts Judy.")
        wait_done(c, "changes", ids)
        window = {"since": "2024-05-02", "until": "2024-05-03"}
        changed = c.get("/v1/groups/changes/changes", params=window).json()
        assert changed["since"] == "2024-05-02T00:00:00+00:00" and not changed["truncated"]
        assert changed["counts"]["started"] == 1 and changed["counts"]["learned"] == 0  # learned today
        assert [e["name"] for e in changed["entities"]] == ["Ivan", "Judy"]
        (started,) = changed["entities"][0]["changes"]
        assert started["kind"] == "started" and started["axis"] == "event"
        assert started["fact"]["text"] == "Ivan knows Judy." and started["at"].startswith("2024-05-02T10:00")
        assert [s["uuid"] for s in started["sources"]] == ids
        learned = c.get("/v1/groups/changes/changes", params={"kind": ["learned", "retired"]}).json()
        assert learned["kinds"] == ["learned", "retired"]
        assert learned["counts"] == {"learned": 1, "retired": 0}
        for params, field in [({"since": "2024-05-03", "until": "2024-05-02"}, "until"),
                              ({"kind": "moved"}, "kind"), ({"since": "0"}, "since")]:  # fmt: skip
            refused = c.get("/v1/groups/changes/changes", params=params)
            assert refused.status_code == 422 and refused.json()["field"].startswith(field), refused.text


def test_ask_streams_the_dialog_as_sse_and_answers_one_json_otherwise(served: Served) -> None:
    with served.client() as c:
        wait_done(c, "alpha", add(c, "alpha", "Alice knows Bob."))
        body = {"question": "Who does Alice know?", "streaming": True}
        with c.stream("POST", "/v1/groups/alpha/ask", json=body) as response:
            assert response.status_code == 200
            chunks = list(sse_events(response))
        kinds = [chunk["chunk_type"] for chunk in chunks]
        assert "action" in kinds and kinds[-1] == "answer"
        assert [chunk["end_of_dialog"] for chunk in chunks] == [False] * (len(chunks) - 1) + [True]
        assert "Alice knows Bob" in "".join(ch["content"] for ch in chunks if ch["chunk_type"] == "answer")
        whole = c.post("/v1/groups/alpha/ask", json={"question": "Who does Alice know?"}).json()
        assert "Alice knows Bob" in whole["text"] and whole["error"] is None
        assert [c["kind"] for c in whole["citations"]] == ["fact"]
        body["mode"] = "agent"
        with c.stream("POST", "/v1/groups/alpha/ask", json=body) as response:
            planned = list(sse_events(response))
        bad = c.post("/v1/groups/alpha/ask", json={"question": "Who?", "mode": "fast"})
    tools = [ch["data"]["tool"] for ch in chunks if ch["chunk_type"] == "action"]
    default_path = ["search_episodes", "search_facts", "entities", "conversations_of", "episodes_of"]
    assert tools == default_path
    assert chunks[-1]["usage"]["calls"] == 1 and whole["usage"]["calls"] == 1
    assert [ch["data"]["tool"] for ch in planned if ch["chunk_type"] == "action"] == ["search_facts"]
    assert planned[-1]["usage"]["calls"] == 3 and "thought" in [ch["chunk_type"] for ch in planned]
    assert bad.status_code == 422 and "mode" in bad.text


def test_an_ask_that_fails_ends_with_one_error_event(served: Served) -> None:
    served.world.fault = None
    with served.client() as c:
        body = {"question": "Who?", "streaming": True, "as_of": "2024-01-01T00:00:00Z",
                "known_at": "2023-01-01T00:00:00Z"}  # fmt: skip
        with c.stream("POST", "/v1/groups/empty-group/ask", json=body) as response:
            chunks = list(sse_events(response))
    assert chunks[-1]["end_of_dialog"] is True
    assert sum(ch["end_of_dialog"] for ch in chunks) == 1


def test_failed_episodes_are_retried_and_deleted_ones_are_gone(served: Served) -> None:
    with served.client() as c:
        served.world.fault = "500"
        try:
            ids = add(c, "alpha", "Ivan owes Judy.")
            assert wait_done(c, "alpha", ids) == {ids[0]: "failed"}
        finally:
            served.world.fault = None
        failed = c.get(f"/v1/groups/alpha/episodes/{ids[0]}").json()
        assert "LLM" in (failed["error"] or "")
        retried = c.post("/v1/groups/alpha/episodes/retry")
        assert retried.status_code == 202 and [e["uuid"] for e in retried.json()["episodes"]] == ids
        assert wait_done(c, "alpha", ids) == {ids[0]: "done"}
        removed = c.delete(f"/v1/groups/alpha/episodes/{ids[0]}")
        assert removed.status_code == 200 and removed.json()["episode"] == ids[0]
        assert c.get(f"/v1/groups/alpha/episodes/{ids[0]}").status_code == 404
        assert c.delete(f"/v1/groups/alpha/episodes/{ids[0]}").status_code == 404


def test_re_adding_an_episode_changes_nothing(served: Served) -> None:
    with served.client() as c:
        first = add(c, "alpha", "Kim hired Leo.")
        wait_done(c, "alpha", first)
        again = c.post("/v1/groups/alpha/episodes", json={"content": "Kim hired Leo.", "reference_time": T})
        assert again.status_code == 202
        assert again.json()["episodes"] == [{"uuid": first[0], "status": "done"}]


def test_an_id_reused_with_other_content_is_refused_with_409(served: Served) -> None:
    one = {"content": "Mia hired Ned.", "reference_time": T, "id": "hire-1"}
    with served.client() as c:
        first = c.post("/v1/groups/alpha/episodes", json=one)
        assert first.status_code == 202
        (accepted,) = first.json()["episodes"]
        same = c.post("/v1/groups/alpha/episodes", json=one)
        assert same.status_code == 202 and same.json()["episodes"][0]["uuid"] == accepted["uuid"]
        other = {**one, "content": "Mia fired Ned."}
        batch = {"episodes": [{"content": "Mia met Oda.", "reference_time": T, "id": "meet-1"}, other]}
        refused = c.post("/v1/groups/alpha/episodes/batch", json=batch)
        assert refused.status_code == 409, refused.text
        detail = refused.json()["detail"]
        assert detail.startswith("episode id 'hire-1' of group 'alpha' is already taken by the stored")
        assert "with other content: refused, nothing stored" in detail
        wait_done(c, "alpha", [accepted["uuid"]])
        assert c.get(f"/v1/groups/alpha/episodes/{accepted['uuid']}").json()["content"] == "Mia hired Ned."
        listed = c.get("/v1/groups/alpha/episodes", params={"limit": 1000}).json()["episodes"]
        contents = [e["content"] for e in listed]
        assert "Mia met Oda." not in contents and "Mia fired Ned." not in contents, "nothing of the batch"


def test_the_episode_limit_is_the_librarys() -> None:
    """One limit for every door: the server's default is the library's own (``MAX_EPISODE_CHARS``)."""
    long = EpisodeIn(content="a" * (MAX_EPISODE_CHARS + 1), reference_time=T)  # type: ignore[arg-type]
    with pytest.raises(LimitExceeded) as refused:
        checked_inputs("alpha", [long], Limits())
    assert (refused.value.status, refused.value.field) == (422, "episodes[0].content")
    assert refused.value.message == content_problem(long.content)
    longest = EpisodeIn(content="a" * MAX_EPISODE_CHARS, reference_time=T)  # type: ignore[arg-type]
    assert checked_inputs("alpha", [longest], Limits())
    with pytest.raises(InputError) as library:
        EpisodeInput("a" * (MAX_EPISODE_CHARS + 1), datetime(2024, 5, 2, tzinfo=UTC))
    assert library.value.field == "content" and library.value.reason == refused.value.message


def test_health_and_readiness_need_no_key(served: Served) -> None:
    with served.client(key=None) as c:
        assert c.get("/v1/health").json() == {"status": "ok"}
        assert c.get("/v1/ready").json() == {"ready": True, "llm": True}
        spec = c.get("/openapi.json").json()
        assert "/v1/groups/{group_id}/episodes/batch" in spec["paths"]
        assert spec["info"]["version"] == __version__


def test_a_question_past_its_time_limit_ends_with_an_error_event(tmp_path: Path) -> None:
    """A limit of 0.5 s and a model that takes 30 s to reply (the client waits 60 s for it): whatever
    the machine's load, the limit ends the question first."""
    with LLMThread(World(delay_s=30.0)) as slow:
        settings = graph_settings(tmp_path / "graph.db", slow.url).model_copy(update={"llm_timeout": 60.0})
        app = create_app(KnowledgeGraph(settings), keys=Keys(KEYS), limits=replace(LIMITS, ask_timeout_s=0.5))
        with uvicorn_thread(app) as url, httpx.Client(base_url=url, headers=auth("key-all"), timeout=60) as c:
            body = {"question": "Who does Alice know?", "streaming": True}
            with c.stream("POST", "/v1/groups/alpha/ask", json=body) as response:
                chunks = list(sse_events(response))
            whole = c.post("/v1/groups/alpha/ask", json={"question": "Who does Alice know?"})
    assert chunks[-1]["chunk_type"] == "error" and chunks[-1]["data"]["type"] == "TimeoutError"
    assert [ch["end_of_dialog"] for ch in chunks].count(True) == 1
    assert whole.status_code == 504


def test_a_pending_episode_deleted_while_it_waits_is_never_run(served: Served) -> None:
    served.world.delay_s = 0.3
    try:
        with served.client() as c:
            first, second = add(c, "waiting", "Nora met Otto.", "Pia met Quinn.")
            assert c.delete(f"/v1/groups/waiting/episodes/{second}").status_code == 200
            assert wait_done(c, "waiting", [first]) == {first: "done"}
            assert c.get(f"/v1/groups/waiting/episodes/{second}").status_code == 404
            assert c.get("/v1/groups/waiting/stats").json()["episodes"] == 1
            metrics = c.get("/metrics").text.splitlines()
            assert "epigraph_queue_depth 0.0" in metrics  # the deleted one waits no more
    finally:
        served.world.delay_s = 0.0
