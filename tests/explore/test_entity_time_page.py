"""Issue 63, item 1, on the interactive page in headless Chromium, on both stores: with the slider moved
back before 2024, Initech (first named in 2024) leaves the screen, with the fact that names it, and
Dana's panel shows her mentions, aliases and summary as they were then (the summary written from the
2024 episode is withheld, saying so); at now, all of it is back. The saved file and the served page
(``epigraph serve``'s ``/``, which fetches the same data) alike."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from bench.shared.serve_harness import uvicorn_thread
from epigraph import KnowledgeGraph
from epigraph.config import Settings
from epigraph.explore import GraphView
from epigraph.explore.payload import node_dict
from epigraph.graph.embedded import EmbeddedStore
from epigraph.graph.entity_time import Mentioned, entity_as_of, mentions_passing
from epigraph.graph.model import Entity
from epigraph.graph.store import GraphStore, TimeFilter
from epigraph.serve import create_app
from epigraph.testing import HashEmbedder
from tests.support.dana import DANA_SUMMARY, write_dana
from tests.support.stores import DIM, neo4j_store
from tests.support.view_page import NODES, by_name, drawn, in_thread, move_slider, point

WITHHELD = "after this moment; not shown"


@dataclass
class Built:
    kind: str
    db: Path
    group: str

    def store(self) -> GraphStore:
        return EmbeddedStore(str(self.db)) if self.kind == "embedded" else neo4j_store()

    def graph(self) -> KnowledgeGraph:
        return KnowledgeGraph(Settings(db_path=":memory:", embedder="hash"), store=self.store(),
                              embedder=HashEmbedder(dim=DIM), group_id=self.group)  # fmt: skip


async def _build(built: Built) -> None:
    store = built.store()
    try:
        await store.setup(DIM)
        await write_dana(store, built.group)
    finally:
        await store.close()


async def _drop(built: Built) -> None:
    store = built.store()
    try:
        await store.delete_group(built.group)
    finally:
        await store.close()


@pytest.fixture(scope="module", params=["embedded", pytest.param("neo4j", marks=pytest.mark.neo4j)])
def dana(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Built]:
    built = Built(request.param, tmp_path_factory.mktemp("dana") / "graph.db", f"dana-{os.urandom(4).hex()}")
    in_thread(_build(built))
    yield built
    in_thread(_drop(built))


async def _view_html(built: Built) -> str:
    async with built.graph() as kg:
        return (await kg.subgraph("Dana", include_retired=True)).to_html()


def panel_of(page: Any, name: str) -> str:
    page.mouse.click(*point(page, by_name(name)))
    panel = page.locator("#ep-panel")
    panel.wait_for(state="visible")
    page.wait_for_function("n => document.querySelector('#ep-panel h2').innerText === n", arg=name)
    text: str = panel.inner_text()
    return text


def check_back_then_and_now(page: Any) -> None:
    assert "Initech" in page.evaluate(NODES)
    now = panel_of(page, "Dana")
    assert DANA_SUMMARY in now and "aka Dana S." in now and "2 mentions" in now
    move_slider(page, "2023-06-01")  # before the 2024 episode
    assert page.evaluate(NODES) == ["Acme", "Dana"]  # Initech first named in 2024
    # "consults for Initech since 2021" holds then, but Initech was not named yet: not drawn either
    assert set(drawn(page)) == {"Dana works at Acme"}
    then = page.locator("#ep-panel").inner_text()  # the panel follows the slider
    assert WITHHELD in then and DANA_SUMMARY not in then, then
    assert page.locator("#ep-panel .ep-meta").inner_text() == "Person · 1 mention"  # no "aka Dana S."
    assert "Dana: I work at Acme." in then and "I left Acme" not in then  # the episodes said by then
    for name in ("Acme", "Dana"):  # off Dana (hovered since the click), then on her again: as of then
        page.mouse.move(*point(page, by_name(name)))
        page.wait_for_function("n => document.getElementById('ep-tip').innerText.startsWith(n)", arg=name)
    assert WITHHELD in page.locator("#ep-tip").inner_text()
    move_slider(page, None)
    assert "Initech" in page.evaluate(NODES) and DANA_SUMMARY in page.locator("#ep-panel").inner_text()


def test_the_saved_view_shows_entities_as_they_were(page: Any, dana: Built, tmp_path: Path) -> None:
    path = tmp_path / "dana.html"
    path.write_text(in_thread(_view_html(dana)), encoding="utf-8")
    page.goto(path.as_uri())
    page.wait_for_function("window.epigraph && window.epigraph.ready")
    check_back_then_and_now(page)


def test_the_served_page_shows_entities_as_they_were(page: Any, dana: Built) -> None:
    app = create_app(dana.graph())
    with uvicorn_thread(app) as url:
        page.goto(f"{url}/?group={dana.group}")
        page.wait_for_function("window.epigraph && window.epigraph.ready")
        page.locator("#ep-group").fill(dana.group)
        page.locator("#ep-query").fill("Dana works at Initech")
        page.locator("#ep-query").press("Enter")
        page.wait_for_function("window.epigraph.cy.nodes().filter(n => n.data('name') === 'Initech').length")
        check_back_then_and_now(page)


def test_the_page_reads_an_entity_in_time_exactly_as_the_library_does(
    page: Any, alice: GraphView, tmp_path: Path
) -> None:
    """``view.js``'s ``entityState`` against ``graph.entity_time`` on a grid of entities and instants."""
    page.goto(alice.save(tmp_path / "view.html").as_uri())
    page.wait_for_function("window.epigraph && window.epigraph.ready")
    y = [datetime(2023, m, 1, tzinfo=UTC) for m in range(1, 13)]
    said = [Mentioned(y[1], y[2], "Dana: hi"), Mentioned(y[4], y[4], "Dee: I moved"),
            Mentioned(y[7], y[9], "Dana Dee: still here")]  # fmt: skip
    entities = [
        (Entity(group_id="g", name="Dana", aliases=["Dee", "Dana Dee"], summary="S.", created_at=y[2]), said),
        (Entity(group_id="g", name="Bo", summary="", created_at=y[0]), said[1:]),
        (Entity(group_id="g", name="Hand", summary="By hand.", created_at=y[5]), []),
    ]
    instants = [*y, datetime(2022, 6, 1, tzinfo=UTC)]
    cases = [(e, m, a, k) for e, m in entities for a in instants for k in (None, *instants)]
    js = "cs => cs.map(([n, a, k]) => window.epigraph.entityState(n, Date.parse(a), k && Date.parse(k)))"
    args = [[node_dict(e.uuid, e, len(m), True, said=m), a.isoformat(), k and k.isoformat()]
            for e, m, a, k in cases]  # fmt: skip
    got = page.evaluate(js, args)
    assert len(got) == len(cases) > 400
    for (entity, mentioned, as_of, known_at), state in zip(cases, got, strict=True):
        flt = TimeFilter(as_of=as_of, known_at=known_at)
        then = entity_as_of(entity, mentioned, flt)
        assert state["exists"] == (then is not None), (entity.name, as_of, known_at)
        if then is not None:
            withheld = None if then.summary_withheld is None else then.summary_withheld.timestamp() * 1000
            expected = (then.aliases, withheld, mentions_passing(mentioned, flt) if mentioned else 0)
            assert (state["aliases"], state["withheld"], state["mentions"]) == expected, (entity.name, as_of)
