"""The page ``epigraph serve`` shows at ``/``, in headless Chromium against a real server (uvicorn in a
thread) over the demo graph, keys on: search, expand by fetching, ask with cited facts lit up."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from bench.shared.serve_harness import uvicorn_thread
from docs.screenshots import demo_graph
from epigraph.prompts.protocol import ChatRequest
from epigraph.serve import Keys, create_app
from epigraph.testing import ScriptedLLM
from epigraph.testing.overview import OVERVIEW_SCRIPT
from examples.quickstart import RECORDED, Replay, conversation
from tests.support.view_page import BERLIN, DRAWN, NODES, PARIS, drawn, in_thread, move_slider

KEY = "k-demo-not-a-secret"


class Demo:
    """The quickstart's recorded answers, and a two-step ask: one fact search, then an answer."""

    def __init__(self) -> None:
        import json

        self.replay = Replay(json.loads(RECORDED.read_text(encoding="utf-8")))

    def __call__(self, request: ChatRequest) -> str:
        if request.prompt_name == "ask_plan":
            if request.variables.get("observations") == "(nothing yet)":
                return '{"thought": "Look it up.", "action": "search_facts", "query": "Alice lives"}'
            return '{"thought": "Enough.", "action": "answer"}'
        if request.prompt_name == "ask_answer":
            return "She lives there now [F1]."
        if request.prompt_name in OVERVIEW_SCRIPT:
            return str(OVERVIEW_SCRIPT[request.prompt_name](request))
        return self.replay(request)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    db = str(tmp_path_factory.mktemp("served") / "demo.db")

    async def fill() -> None:
        async with demo_graph(db, ScriptedLLM(Demo())) as kg:
            await kg.add_episodes(conversation())

    in_thread(fill())
    app = create_app(demo_graph(db, ScriptedLLM(Demo())), keys=Keys({KEY: frozenset({"quickstart"})}))
    with uvicorn_thread(app) as url:
        yield url


def test_the_page_needs_no_key_but_its_data_does(server: str) -> None:
    page = httpx.get(server + "/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert 'id="ep-app"' in page.text and '"keys":true' in page.text and "Alice" not in page.text
    url = server + "/v1/groups/quickstart/explore/search?q=Alice"
    assert httpx.get(url).status_code == 401
    found = httpx.get(url, headers={"Authorization": f"Bearer {KEY}"}).json()
    assert {"Alice lives in Berlin.", "Alice lives in Paris."} <= {e["text"] for e in found["edges"]}
    other = server + "/v1/groups/other/explore/entity/Alice"
    assert httpx.get(other, headers={"Authorization": f"Bearer {KEY}"}).status_code == 403


def test_search_expand_and_ask_on_the_served_page(server: str, page: Any) -> None:
    page.goto(server + "/")
    page.wait_for_function("window.epigraph && window.epigraph.ready")
    page.locator("#ep-key").fill(KEY)
    page.locator("#ep-query").fill("Where does Alice live?")
    page.locator("#ep-query").press("Enter")
    page.wait_for_function("window.epigraph.cy.edges(':visible').length > 0")
    edges = drawn(page)
    assert edges[BERLIN]["state"] == "current" and edges[PARIS]["retired"]
    move_slider(page, "2023-06-01")
    assert drawn(page)[PARIS]["state"] == "current" and BERLIN not in drawn(page)
    move_slider(page, None)

    carol = "window.epigraph.cy.nodes().filter(n => n.data('name') === 'Carol')[0].id()"
    with page.expect_response(lambda r: "/explore/entity/" in r.url) as expanded:
        page.evaluate(f"() => window.epigraph.expand({carol})")  # on the served page: fetched
    assert expanded.value.status == 200 and "Carol is Alice's sister." in expanded.value.text()
    assert "Carol" in page.evaluate(NODES)

    page.locator("#ep-question").fill("Where does Alice live?")
    with page.expect_request(lambda r: r.url.endswith("/ask")) as asked:
        page.locator("#ep-question").press("Enter")
    assert asked.value.post_data_json == {"question": "Where does Alice live?", "streaming": True}
    page.wait_for_function("document.getElementById('ep-cites').innerText.startsWith('cited:')")
    shown = page.locator("#ep-answer").inner_text()
    assert "She lives there now [F1]." in shown
    assert "looking up: search_facts(query='Where does Alice live?')" in shown, "the default path's steps"
    assert "looking up: search_episodes(" in shown
    cited = page.evaluate("() => Array.from(window.epigraph.model.cited)")
    lit = page.evaluate("() => window.epigraph.cy.edges('.cited').not('.hidden').map(e => e.id())")
    assert cited and sorted(lit) == sorted(cited)
    text = page.evaluate("id => window.epigraph.model.edges.get(id).text", cited[0])
    assert text in page.locator("#ep-cites").inner_text()
    assert len(page.evaluate(DRAWN)) >= len(edges)

    move_slider(page, "2023-06-01")  # a question asked there is asked as of that moment
    with page.expect_request(lambda r: r.url.endswith("/ask")) as asked:
        page.locator("#ep-question").press("Enter")
    assert asked.value.post_data_json["as_of"] == "2023-03-10T18:00:00.000Z"
    assert "known_at" not in asked.value.post_data_json


def offline(page: Any, origin: str) -> list[str]:
    """Let the page reach ``origin`` only (no other network); returns the requests refused."""
    refused: list[str] = []

    def route(found: Any) -> None:
        if found.request.url.startswith(origin + "/"):
            found.continue_()
        else:
            refused.append(found.request.url)
            found.abort()

    page.route("**/*", route)
    return refused


def test_the_api_docs_render_with_no_network(server: str, page: Any) -> None:
    refused = offline(page, server)
    page.goto(server + "/docs")
    page.wait_for_selector("#swagger-ui .swagger-ui .information-container .title")
    assert page.locator(".swagger-ui .info .title").inner_text().startswith("epigraph")
    assert page.locator(".opblock").count() >= 16  # every operation listed
    page.goto(server + "/redoc")
    page.wait_for_selector("redoc .api-content h1")
    assert page.locator("redoc .api-content h1").first.inner_text().startswith("epigraph")
    assert page.locator("redoc [data-section-id^='operation/']").count() >= 16
    assert refused == []


def test_a_search_in_the_address_waits_for_the_key(server: str, page: Any) -> None:
    """``/?q=...`` with keys on searched at once, before a key could be entered, and showed a 401."""
    answered: list[tuple[str, int]] = []
    page.on("response", lambda r: answered.append((r.url, r.status)) if "/v1/" in r.url else None)
    page.goto(server + "/?q=Alice")
    page.wait_for_function("window.epigraph && window.epigraph.ready")
    assert page.locator("#ep-status").inner_text() == "enter the API key, then press Enter"
    assert page.evaluate("document.activeElement.id") == "ep-key"
    assert page.locator("#ep-query").input_value() == "Alice" and answered == []
    page.locator("#ep-key").fill(KEY)
    with page.expect_response(lambda r: "/explore/search" in r.url) as found:
        page.locator("#ep-key").press("Enter")
    assert found.value.status == 200
    page.wait_for_function("window.epigraph.cy.edges(':visible').length > 0")
    assert [status for _, status in answered] == [200]


def test_the_served_page_colours_a_search_by_community(server: str, page: Any) -> None:
    auth = {"Authorization": f"Bearer {KEY}"}
    built = httpx.post(server + "/v1/groups/quickstart/communities/update", params={"rebuild": "true"},
                       headers=auth, timeout=60).json()  # fmt: skip
    names = {c["name"] for c in built["communities"]}
    assert built["update"]["rebuilt"] and names
    found = httpx.get(server + "/v1/groups/quickstart/explore/search?q=Alice", headers=auth).json()
    assert {c["name"] for c in found["communities"].values()} <= names
    alice = next(n for n in found["nodes"] if n["name"] == "Alice")
    assert alice["community"] in found["communities"]

    page.goto(server + "/")
    page.wait_for_function("window.epigraph && window.epigraph.ready")
    page.locator("#ep-key").fill(KEY)
    page.locator("#ep-query").fill("Alice")
    page.locator("#ep-query").press("Enter")
    page.wait_for_function("window.epigraph.cy.edges(':visible').length > 0")
    assert page.locator("#ep-communities").is_checked()  # the new picture carries communities
    legend = page.locator("#ep-legend").inner_text()
    assert found["communities"][alice["community"]]["name"] in legend
