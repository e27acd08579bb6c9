"""Names and facts holding HTML or script render as text, in headless Chromium, on both stores: the saved
interactive view (``GraphView.save``, ``epigraph entity X --html``), the static picture, the notebook HTML
(``_repr_html_`` of a search, an entity view, a listing and a GraphView) and the page ``epigraph serve``
shows at ``/`` (search, the entity panel, an answer streamed by ask).

Each page is watched for any script of the data running: a dialog (the payloads call ``alert``), the
``window.__pwned`` flag they set, an element they would create (``img``, ``svg[onload]``, ``iframe``
inside a cell); and the strings must be shown literally where the page shows them."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from epigraph import KnowledgeGraph
from epigraph.cli import main
from epigraph.config import Settings
from epigraph.graph.embedded import EmbeddedStore
from epigraph.graph.store import GraphStore
from epigraph.present.listing import EpisodeList
from epigraph.serve import create_app
from epigraph.testing import HashEmbedder, ScriptedLLM
from tests.support.stores import DIM, neo4j_store
from tests.support.view_page import by_name, in_thread, point
from tests.support.world import F, Turn, World

SCRIPT = "<script>alert(1)</script>"
IMG = "<img src=x onerror=alert(2)>"
QUOTES = "</textarea>\"Quotes' & Co"
NAMES = (SCRIPT, IMG, QUOTES)
MET = f"{SCRIPT} met {IMG} at {QUOTES}."
WAITS = f'{IMG} waits at {QUOTES} <svg onload="window.__pwned=1"></svg>.'
EPISODE = f'Mallory: {SCRIPT} met {IMG} at {QUOTES}. <img src=y onerror="window.__pwned=2"> {WAITS}'
ANSWER = f'They met <img src=z onerror="window.__pwned=3;alert(3)"> {SCRIPT}.'
WORLD = World(
    {EPISODE: Turn(["Mallory", *NAMES], [F(SCRIPT, IMG, "MET", MET), F(IMG, QUOTES, "WAITS_AT", WAITS)])}
)
INJECTED = "() => document.querySelectorAll('img, svg[onload], iframe img, textarea').length"


def _ask(request: Any) -> str:
    if request.prompt_name == "ask_answer":
        return ANSWER
    return WORLD.answer(request).text


def _graph(store: GraphStore, group: str) -> KnowledgeGraph:
    settings = Settings(db_path=":memory:")
    return KnowledgeGraph(settings, store=store, llm=ScriptedLLM(_ask), embedder=HashEmbedder(dim=DIM),
                          group_id=group)  # fmt: skip


@dataclass
class Hostile:
    """The hostile graph on one store, and what each way of showing it wrote."""

    kind: str
    group: str
    db: Path
    view_html: str
    picture_html: str
    picture_svg: str
    notebook: dict[str, str]

    def store(self) -> GraphStore:
        return EmbeddedStore(str(self.db)) if self.kind == "embedded" else neo4j_store()


async def _build(kind: str, db: Path) -> Hostile:
    store = EmbeddedStore(str(db)) if kind == "embedded" else neo4j_store()
    group = f"h-{uuid.uuid4().hex[:12]}"
    async with _graph(store, group) as kg:
        result = await kg.add_episode(EPISODE, reference_time=datetime(2024, 1, 1, tzinfo=UTC))
        assert result.ok and {f.text for f in result.facts} == {MET, WAITS}, result.report.warnings
        assert NAMES[0] in {e.name for e in result.entities}
        view = await kg.subgraph(IMG, include_retired=True)
        episodes = await kg.episodes()
        notebook = {
            "search": (await kg.search(IMG))._repr_html_(),
            "entity": (await kg.entity(IMG))._repr_html_(),
            "episodes": EpisodeList(group, episodes)._repr_html_(),
            "view": view._repr_html_(),
        }
        return Hostile(kind, group, db, view.to_html(), view.drawing().to_html(), view.to_svg(), notebook)


@pytest.fixture(scope="module", params=["embedded", pytest.param("neo4j", marks=pytest.mark.neo4j)])
def hostile(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hostile]:
    db = tmp_path_factory.mktemp("hostile") / "graph.db"
    built = in_thread(_build(request.param, db))
    yield built

    async def drop() -> None:
        store = built.store()
        try:
            await store.delete_group(built.group)
        finally:
            await store.close()

    in_thread(drop())


@pytest.fixture
def watched(page: Any) -> Any:
    """The page, with every dialog recorded (and dismissed) as ``page.dialogs``."""
    page.dialogs = []
    page.on("dialog", lambda d: (page.dialogs.append(d.message), d.dismiss()))
    return page


def assert_nothing_ran(page: Any, frame: Any = None) -> None:
    where = frame or page
    assert page.dialogs == [], f"a dialog opened: {page.dialogs}"
    assert where.evaluate("() => window.__pwned") is None
    assert where.evaluate(INJECTED) == 0, "markup of the data became elements"


def open_saved(page: Any, html: str, path: Path) -> None:
    path.write_text(html, encoding="utf-8")
    page.goto(path.as_uri())
    page.wait_for_function("window.epigraph && window.epigraph.ready")


def assert_drawn_literally(page: Any) -> None:
    """Node names and the panel's heading are the strings themselves."""
    names = page.evaluate("() => window.epigraph.cy.nodes().map(n => n.data('name'))")
    assert set(NAMES) <= set(names)
    page.mouse.click(*point(page, by_name(SCRIPT)))
    panel = page.locator("#ep-panel")
    panel.wait_for(state="visible")
    assert panel.locator("h2").inner_text() == SCRIPT
    assert MET in panel.inner_text()


def test_the_saved_view_shows_markup_as_text(watched: Any, hostile: Hostile, tmp_path: Path) -> None:
    open_saved(watched, hostile.view_html, tmp_path / "view.html")
    assert_drawn_literally(watched)
    watched.mouse.move(*point(watched, by_name(IMG)))
    watched.locator("#ep-tip").wait_for(state="visible")
    assert watched.locator("#ep-tip").inner_text().startswith(IMG)
    assert_nothing_ran(watched)


@pytest.mark.parametrize("suffix", ["html", "svg"])
def test_the_static_picture_shows_markup_as_text(
    watched: Any, hostile: Hostile, tmp_path: Path, suffix: str
) -> None:
    path = tmp_path / f"picture.{suffix}"
    path.write_text(hostile.picture_html if suffix == "html" else hostile.picture_svg, encoding="utf-8")
    watched.goto(path.as_uri())
    labels = watched.evaluate("() => Array.from(document.querySelectorAll('text')).map(t => t.textContent)")
    assert set(NAMES) <= {label.strip() for label in labels}, labels
    assert_nothing_ran(watched)


def test_the_entity_command_writes_a_page_that_shows_markup_as_text(
    watched: Any, hostile: Hostile, tmp_path: Path
) -> None:
    if hostile.kind != "embedded":
        environ = {"EPIGRAPH_NEO4J_URI": os.environ["EPIGRAPH_NEO4J_URI"]}
        environ.update({k: v for k, v in os.environ.items() if k.startswith("EPIGRAPH_NEO4J_")})
    else:
        environ = {"EPIGRAPH_DB": str(hostile.db)}
    environ.update(EPIGRAPH_EMBEDDER="hash", EPIGRAPH_GROUP=hostile.group, HF_HUB_OFFLINE="1")
    page = tmp_path / "entity.html"
    code = in_thread(_cli(["entity", IMG, "--html", str(page)], environ))
    assert code == 0 and page.is_file()
    watched.goto(page.as_uri())
    watched.wait_for_function("window.epigraph && window.epigraph.ready")
    assert_drawn_literally(watched)
    assert_nothing_ran(watched)


async def _cli(argv: list[str], environ: dict[str, str]) -> int:
    import asyncio

    return await asyncio.to_thread(main, argv, environ=environ)


@pytest.mark.parametrize("cell", ["search", "entity", "episodes"])
def test_a_notebook_table_shows_markup_as_text(watched: Any, hostile: Hostile, cell: str) -> None:
    watched.set_content(f"<html><body><h1>a notebook</h1>{hostile.notebook[cell]}</body></html>")
    shown = watched.locator("body").inner_text()
    for text in (IMG, SCRIPT) if cell != "episodes" else (EPISODE[:60],):
        assert text in shown, f"{text!r} is not shown literally in the {cell} cell"
    assert_nothing_ran(watched)


def test_a_notebook_view_shows_markup_as_text(watched: Any, hostile: Hostile) -> None:
    watched.set_content(f"<html><body><h1>a notebook</h1>{hostile.notebook['view']}</body></html>")
    frame = watched.frame_locator("iframe.epigraph-view")
    inner = next(f for f in watched.frames if f != watched.main_frame)
    inner.wait_for_function("window.epigraph && window.epigraph.ready")
    names = inner.evaluate("() => window.epigraph.cy.nodes().map(n => n.data('name'))")
    assert set(NAMES) <= set(names)
    assert frame.locator("#ep-app").count() == 1
    assert_nothing_ran(watched)
    assert_nothing_ran(watched, inner)


def test_the_served_page_shows_markup_as_text(watched: Any, hostile: Hostile) -> None:

    from bench.shared.serve_harness import uvicorn_thread

    app = create_app(_graph(hostile.store(), hostile.group))
    with uvicorn_thread(app) as url:
        watched.goto(f"{url}/?group={hostile.group}")
        watched.wait_for_function("window.epigraph && window.epigraph.ready")
        watched.locator("#ep-group").fill(hostile.group)
        watched.locator("#ep-query").fill(IMG)
        watched.locator("#ep-query").press("Enter")
        watched.wait_for_function("window.epigraph.cy.edges(':visible').length > 0")
        assert_drawn_literally(watched)
        watched.locator("#ep-question").fill(f"Who met {SCRIPT}?")
        watched.locator("#ep-question").press("Enter")
        watched.wait_for_function(  # the whole answer: it streams in, a few words at a time
            "answer => document.getElementById('ep-answer').innerText.includes(answer)", arg=ANSWER
        )
        assert ANSWER in watched.locator("#ep-answer").inner_text()
        assert_nothing_ran(watched)
