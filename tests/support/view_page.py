"""Driving the interactive view in headless Chromium (Playwright's sync API): open a saved view, read
what is drawn from Cytoscape's own model, move the time slider, find a node or an edge on the page; and
running a coroutine beside Playwright's loop."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from epigraph.explore import GraphView

T = TypeVar("T")


def in_thread(work: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to the end on a loop of its own thread (Playwright's sync API keeps a loop
    running in this one)."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, work).result()


# Shown = not hidden by the page (its "hidden" class: display none). Cytoscape's ':visible' reads the
# computed style, which a loaded machine can leave one update behind (seen once in CI: a 'later' fact).
DRAWN = """() => window.epigraph.cy.edges().not('.hidden').map(e => ({
    id: e.id(), text: window.epigraph.model.edges.get(e.id()).text, state: e.data('state'),
    retired: e.hasClass('retired'), source: e.source().data('name'), target: e.target().data('name')}))"""


NODES = "() => window.epigraph.cy.nodes().not('.hidden').map(n => n.data('name')).sort()"


PARIS, BERLIN = "Alice lives in Paris.", "Alice lives in Berlin."


def open_view(page: Any, view: GraphView, tmp_path: Path) -> dict[str, dict[str, Any]]:
    """Save the view, open the file, and return what is drawn (by fact text)."""
    page.goto(view.save(tmp_path / "view.html").as_uri())
    page.wait_for_function("window.epigraph && window.epigraph.ready")
    return drawn(page)


def drawn(page: Any) -> dict[str, dict[str, Any]]:
    return {e["text"]: e for e in page.evaluate(DRAWN)}


def move_slider(page: Any, day: str | None) -> None:
    """Move the time slider itself (an input event): to the last moment on or before ``day``, or to now."""
    index = page.evaluate(
        "d => d === null ? window.epigraph.state.moments.length"
        " : window.epigraph.state.moments.filter(m => m <= Date.parse(d)).length - 1",
        day,
    )
    page.locator("#ep-time").fill(str(index))


def point(page: Any, selector_js: str) -> tuple[float, float]:
    """Page coordinates of an element's rendered position (a node) or midpoint (an edge)."""
    x, y = page.evaluate(
        f"""() => {{ const el = {selector_js};
        const box = document.getElementById('ep-cy').getBoundingClientRect();
        const p = el.isNode() ? el.renderedPosition() : el.renderedMidpoint();
        return [box.left + p.x, box.top + p.y]; }}"""
    )
    return float(x), float(y)


def by_text(text: str) -> str:
    return (
        "window.epigraph.cy.edges().filter(e => window.epigraph.model.edges.get(e.id()).text === "
        f"{text!r})[0]"
    )


def by_name(name: str) -> str:
    return f"window.epigraph.cy.nodes().filter(n => n.data('name') === {name!r})[0]"
