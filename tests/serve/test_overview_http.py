"""Communities and conversations over HTTP: read (keys scope them like everything else), brought up to
date after each batch the server ingests (an event on the group's stream) and on request, searched; a
server without an LLM says so instead of failing."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import httpx

from epigraph.client import KnowledgeGraph
from epigraph.config import Settings
from epigraph.serve import Keys, create_app
from tests.support.served import KEYS, LIMITS, Served, T, auth, sse_events, wait_done


def test_conversations_and_communities_over_http(served: Served) -> None:
    chat = 'support/ticket 7: "urgent"'  # a key with a slash and quotes travels in the path
    turns = [
        {"content": "Ivan met Judy.", "reference_time": "2024-05-02T11:00:00Z", "source": chat},
        {"content": "Judy met Ivan.", "reference_time": T, "source": chat},  # earlier, sent later
    ]
    overview: list[dict[str, Any]] = []
    subscribed = threading.Event()

    def listen() -> None:
        with served.client() as c, c.stream("GET", "/v1/groups/gamma/events") as response:
            for event in sse_events(response):
                subscribed.set()
                if event["type"] == "OverviewUpdated":
                    overview.append(event)
                    return

    listener = threading.Thread(target=listen, daemon=True)
    listener.start()
    assert subscribed.wait(10)
    with served.client() as c:
        accepted = c.post("/v1/groups/gamma/episodes/batch", json={"episodes": turns}).json()
        ids = [e["uuid"] for e in accepted["episodes"]]
        wait_done(c, "gamma", ids)
        listener.join(60)
        # the drain's pass ended the batch: both episodes folded into the conversation in one call
        (after,) = overview
        assert [(u["key"], u["folded"]) for u in after["conversations"]] == [(chat, 2)]
        assert after["llm_calls"] == 1 and after["communities"] is None  # the group has none yet
        (listed,) = c.get("/v1/groups/gamma/conversations").json()["conversations"]
        assert (listed["key"], listed["episodes"], listed["unsummarized"]) == (chat, 2, 0)
        updated = c.post("/v1/groups/gamma/conversations/update", json={"keys": [chat]}).json()
        assert [u["folded"] for u in updated["updates"]] == [0]  # nothing new
        updated = c.post("/v1/groups/gamma/conversations/update", json={"keys": [chat], "rebuild": True})
        assert [u["folded"] for u in updated.json()["updates"]] == [2]
        one = c.get(f"/v1/groups/gamma/conversations/{chat}").json()
        assert [e["uuid"] for e in one["episodes"]] == ids[::-1]  # in order of reference time
        assert one["episodes"][1]["previous"] == ids[1]
        assert one["summary"]["summary"].startswith("They talked")
        assert c.post("/v1/groups/gamma/conversations/update").json()["updates"] == []  # nothing behind
        assert c.get("/v1/groups/gamma/conversations/nothing").status_code == 404

        assert c.get("/v1/groups/gamma/communities").json()["communities"] == []
        built = c.post("/v1/groups/gamma/communities/update", params={"rebuild": "true"}).json()
        assert built["update"]["rebuilt"] and built["update"]["llm_calls"] == 1
        (community,) = built["communities"]
        assert {m["name"] for m in community["members"]} == {"Ivan", "Judy"} and community["stored"]
        before = c.get("/v1/groups/gamma/communities", params={"known_at": "2000-01-01T00:00:00Z"}).json()
        assert before["communities"] == []  # nothing was known then
        found = c.get("/v1/groups/gamma/search", params={"q": "Ivan", "scope": "communities"}).json()
        assert found["communities"][0]["community"]["uuid"] == community["uuid"]
    with served.client("key-alpha") as c:
        assert c.get("/v1/groups/gamma/conversations").status_code == 403
        assert c.post("/v1/groups/gamma/communities/update").status_code == 403


async def test_a_server_without_an_llm_reads_but_does_not_update(tmp_path: Path) -> None:
    kg = KnowledgeGraph(Settings(db_path=str(tmp_path / "g.db"), embedder="hash"))  # type: ignore[arg-type]
    transport = httpx.ASGITransport(app=create_app(kg, keys=Keys(KEYS), limits=LIMITS))
    async with httpx.AsyncClient(transport=transport, base_url="http://test", headers=auth("key-all")) as c:
        assert (await c.get("/v1/groups/alpha/communities")).json()["communities"] == []
        refused = await c.post("/v1/groups/alpha/communities/update")
        assert refused.status_code == 503 and "model" in refused.json()["detail"]
        refused = await c.post("/v1/groups/alpha/conversations/update", json={"rebuild": True})
        assert refused.status_code == 503
        bad = await c.post("/v1/groups/alpha/conversations/update", json={"keys": [""]})
        assert bad.status_code == 422
    await kg.close()
