"""``GET /metrics`` of a served graph, parsed by prometheus_client's own text parser: episodes by status,
the queue's depth, the model calls with their tokens, retries and latencies, the routes' requests and
latencies, and the webhooks' dead letters (a receiver that refuses every connection); and who may read
it."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from bench.shared.serve_harness import LLMThread, uvicorn_thread
from epigraph.client import KnowledgeGraph
from epigraph.serve import Keys, create_app
from tests.support.served import KEYS, LIMITS, auth, graph_settings, wait_done

T = "2024-05-02T10:00:00Z"
REFUSED = "http://127.0.0.1:1/hooks"  # nothing listens on port 1: every try is a connection refused


@pytest.fixture
def url(llm: LLMThread, tmp_path: Path) -> Iterator[str]:
    settings = graph_settings(tmp_path / "graph.db", llm.url).model_copy(update={
        "webhook_urls": REFUSED, "webhook_secret": "s", "webhook_attempts": 2, "webhook_backoff": 0.01,
    })  # fmt: skip
    settings = type(settings).model_validate(settings.model_dump())  # the SecretStr fields as settings
    app = create_app(KnowledgeGraph(settings), keys=Keys(KEYS), limits=LIMITS)
    with uvicorn_thread(app) as served:
        yield served


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def scrape(url: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    response = httpx.get(f"{url}/metrics", headers=auth("key-all"), timeout=10)
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/plain")
    return samples(response.text)


def test_the_metrics_count_episodes_queue_model_calls_routes_and_dead_letters(url: str) -> None:
    with httpx.Client(base_url=url, headers=auth("key-all"), timeout=30) as c:
        body = {"episodes": [{"content": text, "reference_time": T} for text in
                             ("Alice met Bob in Paris.", "Carol called Dave.")]}  # fmt: skip
        accepted = c.post("/v1/groups/alpha/episodes/batch", json=body)
        assert accepted.status_code == 202
        wait_done(c, "alpha", [e["uuid"] for e in accepted.json()["episodes"]])
        for _ in range(300):  # the two deliveries, each tried twice, end as dead letters
            found = scrape(url)
            if found.get(("epigraph_webhook_dead_letters_total", ())) == 2:
                break
            time.sleep(0.05)
        stats = c.get("/v1/groups/alpha/stats").json()
    assert found[("epigraph_webhook_dead_letters_total", ())] == 2 == stats["webhook_dead_letters"]
    assert found[("epigraph_webhook_retries_total", ())] == 2
    assert found[("epigraph_webhook_outstanding", ())] == 0
    assert found[("epigraph_episodes_total", (("status", "done"),))] == 2
    assert found[("epigraph_episodes_total", (("status", "failed"),))] == 0
    assert found[("epigraph_queue_depth", ())] == 0
    calls = {labels: v for (name, labels), v in found.items() if name == "epigraph_model_calls_total"}
    prompts = {dict(labels)["prompt"] for labels in calls}
    assert {"extract_entities", "extract_facts"} <= prompts
    assert all(dict(labels)["outcome"] == "ok" for labels in calls)
    for prompt in prompts:
        tokens = {t: found[("epigraph_model_tokens_total", (("prompt", prompt), ("type", t)))]
                  for t in ("input", "output")}  # fmt: skip
        assert tokens["input"] > 0 and tokens["output"] > 0
        count = found[("epigraph_model_call_duration_seconds_count", (("prompt", prompt),))]
        assert count == sum(v for labels, v in calls.items() if dict(labels)["prompt"] == prompt)
        inf = found[("epigraph_model_call_duration_seconds_bucket", (("le", "+Inf"), ("prompt", prompt)))]
        assert inf == count and found[("epigraph_model_retries_total", (("prompt", prompt),))] == 0
    batch = (("method", "POST"), ("route", "/v1/groups/{group_id}/episodes/batch"), ("status", "202"))
    assert found[("epigraph_http_requests_total", batch)] == 1
    timed = (("method", "POST"), ("route", "/v1/groups/{group_id}/episodes/batch"))
    assert found[("epigraph_http_request_duration_seconds_count", timed)] == 1
    assert found[("epigraph_http_request_duration_seconds_sum", timed)] > 0


def test_the_metrics_take_a_key_for_every_group(url: str) -> None:
    assert httpx.get(f"{url}/metrics", timeout=10).status_code == 401
    refused = httpx.get(f"{url}/metrics", headers=auth("key-alpha"), timeout=10)
    assert refused.status_code == 403 and "every group" in refused.json()["detail"]
    found = scrape(url)
    refusals = (("method", "GET"), ("route", "/metrics"), ("status", "403"))
    assert found[("epigraph_http_requests_total", refusals)] == 1  # counted too
    missing = httpx.get(f"{url}/v1/nothing/here", headers=auth("key-all"), timeout=10)
    assert missing.status_code == 404
    assert scrape(url)[("epigraph_http_requests_total", (("method", "GET"), ("route", "unmatched"),
                                                         ("status", "404")))] == 1  # fmt: skip


def test_without_a_model_what_is_accepted_waits_in_the_queue(llm: LLMThread, tmp_path: Path) -> None:
    settings = graph_settings(tmp_path / "graph.db", llm.url).model_copy(update={"llm_model": None})
    app = create_app(KnowledgeGraph(settings), keys=Keys(KEYS), limits=LIMITS)
    with uvicorn_thread(app) as served:
        body = {"episodes": [{"content": text, "reference_time": T} for text in ("One.", "Two.")]}
        accepted = httpx.post(f"{served}/v1/groups/alpha/episodes/batch", json=body, headers=auth("key-all"))
        assert accepted.status_code == 202
        found = scrape(served)
    assert found[("epigraph_queue_depth", ())] == 2
    assert found[("epigraph_episodes_total", (("status", "done"),))] == 0
    assert not any(name.startswith("epigraph_model_") for name, _ in found)  # no model client
    assert not any(name.startswith("epigraph_webhook_") for name, _ in found)  # no webhooks
