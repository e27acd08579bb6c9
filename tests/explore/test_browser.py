"""The interactive view in a real browser (headless Chromium): a saved file and a notebook cell.

Every assertion reads the page itself: Cytoscape's model of what is drawn (``window.epigraph.cy``), the
page's own data and its DOM (tooltip, panel, slider label)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from epigraph.explore import GraphView
from epigraph.explore.payload import edge_dict
from epigraph.graph.derived import Community
from epigraph.graph.model import Entity, Fact, Invalidation
from epigraph.graph.store import TimeFilter
from epigraph.graph.temporal import matches
from tests.support.view_page import (
    BERLIN,
    DRAWN,
    NODES,
    PARIS,
    by_name,
    by_text,
    drawn,
    move_slider,
    open_view,
    point,
)


def test_the_saved_file_draws_the_neighbourhood(page: Any, alice: GraphView, tmp_path: Path) -> None:
    edges = open_view(page, alice, tmp_path)
    assert page.evaluate(NODES) == ["Acme", "Alice", "Berlin", "Carol", "Globex", "Paris"]
    assert set(edges) == {PARIS, BERLIN, "Alice works at Acme as a designer.", "Alice works at Globex.",
                          "Carol is Alice's sister.", "Carol lives two streets from Alice."}  # fmt: skip
    assert {t for t, e in edges.items() if e["retired"]} == {PARIS, "Alice works at Acme as a designer."}
    assert edges[BERLIN]["state"] == "current" and edges[PARIS]["state"] == "ended"
    # the two facts between Carol and Alice are drawn apart, not on top of each other
    a = point(page, by_text("Carol is Alice's sister."))
    b = point(page, by_text("Carol lives two streets from Alice."))
    assert abs(a[0] - b[0]) + abs(a[1] - b[1]) > 15
    # sized by mentions (Alice: 7, Paris: 1); nothing was fetched: the library is inlined
    sizes = page.evaluate(f"() => [{by_name('Alice')}.width(), {by_name('Paris')}.width()]")
    assert sizes[0] > sizes[1]
    assert "<script src" not in alice.to_html()


def test_the_slider_goes_back_to_paris_and_forward_to_berlin(
    page: Any, alice: GraphView, tmp_path: Path
) -> None:
    open_view(page, alice, tmp_path)
    move_slider(page, "2023-06-01")
    assert page.locator("#ep-when").inner_text() == "2023-03-10 18:00"
    then = drawn(page)
    assert then[PARIS]["state"] == "current" and not then[PARIS]["retired"]
    assert BERLIN not in then and "Alice works at Globex." not in then
    assert "Berlin" not in page.evaluate(NODES)
    move_slider(page, None)
    assert page.locator("#ep-when").inner_text() == "now"
    now = drawn(page)
    assert now[BERLIN]["state"] == "current" and now[PARIS]["retired"]


def test_a_view_asked_as_of_a_date_opens_as_it_stood_then(
    page: Any, alice: GraphView, tmp_path: Path
) -> None:
    then = replace(alice, as_of=datetime(2023, 6, 1, tzinfo=UTC))  # `entity --as-of --html`
    edges = open_view(page, then, tmp_path)
    assert page.locator("#ep-when").inner_text() == "2023-06-01"
    assert edges[PARIS]["state"] == "current" and BERLIN not in edges
    assert open_view(page, alice, tmp_path)[BERLIN]["state"] == "current", "without it: now"


def test_hovering_shows_the_fact_and_its_window_or_the_summary(
    page: Any, alice: GraphView, tmp_path: Path
) -> None:
    open_view(page, alice, tmp_path)
    page.mouse.move(*point(page, by_text(PARIS)))
    tip = page.locator("#ep-tip")
    tip.wait_for(state="visible")
    assert PARIS in tip.inner_text() and "valid 2023-03-10 18:00 → 2023-08-01" in tip.inner_text()
    page.mouse.move(*point(page, by_name("Carol")))
    page.wait_for_function("document.getElementById('ep-tip').innerText.startsWith('Carol')")
    assert alice.entities[alice.focus[0]].summary  # Alice has one; Carol's is shown for Carol:
    carol = next(e for e in alice.entities.values() if e.name == "Carol")
    assert carol.summary[:40] in tip.inner_text()


def test_clicking_opens_the_entity_view_and_expand_reveals_its_neighbours(
    page: Any, alice: GraphView, tmp_path: Path
) -> None:
    open_view(page, alice, tmp_path)
    page.mouse.click(*point(page, by_name("Carol")))
    panel = page.locator("#ep-panel")
    panel.wait_for(state="visible")
    assert panel.locator("h2").inner_text() == "Carol"  # the heading alone: the summary is its own paragraph
    carol = next(e for e in alice.entities.values() if e.name == "Carol")
    assert panel.locator(".ep-summary").inner_text() == " ".join(carol.summary.split())
    assert "Carol is Alice's sister." in panel.inner_text()
    assert "Carol founded Globex in 2019." not in drawn(page)
    page.locator("#ep-expand").click()
    page.wait_for_function("window.epigraph.cy.nodes(':visible').length > 6")
    assert "Carol founded Globex in 2019." in drawn(page)  # embedded in the file, revealed
    assert "Bob" in page.evaluate(NODES)


def test_retired_facts_hide_and_system_time_shows_what_was_known(
    page: Any, alice: GraphView, tmp_path: Path
) -> None:
    """Each switch re-draws at once: the picture, the empty message and the legend are read right after
    one change (they once answered for the picture before it until the next frame: ':visible')."""
    open_view(page, alice, tmp_path)
    legend, empty = page.locator("#ep-legend"), page.locator("#ep-empty")
    assert "retired" in legend.inner_text()
    page.locator("#ep-retired").uncheck()
    assert not any(e["retired"] for e in drawn(page).values()) and PARIS not in drawn(page)
    assert "retired" not in legend.inner_text()
    page.locator("#ep-retired").check()
    assert drawn(page)[PARIS]["retired"] and "retired" in legend.inner_text()
    move_slider(page, "2023-06-01")
    assert PARIS in drawn(page) and empty.inner_text() == ""
    page.locator("#ep-system").check()  # as the graph knew it then: it learned everything later
    assert page.locator("#ep-when").inner_text() == "2023-03-10 18:00"  # the same moment, now as known then
    assert drawn(page) == {}
    assert "Nothing held at this moment" in empty.inner_text()
    move_slider(page, None)  # now, as known now: everything back, the message gone
    assert drawn(page)[BERLIN]["state"] == "current" and empty.inner_text() == ""


def test_the_notebook_cell_is_the_same_view_in_an_iframe(page: Any, alice: GraphView) -> None:
    page.set_content(f"<html><body><h1>a notebook</h1>{alice._repr_html_()}</body></html>")
    frame = page.frame_locator("iframe.epigraph-view")
    frame.locator("#ep-time").wait_for()
    inner = page.frames[1]
    inner.wait_for_function("window.epigraph && window.epigraph.ready")
    assert len(inner.evaluate(DRAWN)) == 6
    assert page.evaluate("typeof window.cytoscape") == "undefined"  # the notebook's page is untouched


def test_the_page_reads_time_exactly_as_the_library_does(page: Any, alice: GraphView, tmp_path: Path) -> None:
    open_view(page, alice, tmp_path)
    t0 = datetime(2024, 1, 1, tzinfo=UTC)
    day = timedelta(days=1)
    made = [
        Fact(group_id="g", source_uuid="a", target_uuid="b", relation="R", text="open", created_at=t0),
        Fact(group_id="g", source_uuid="a", target_uuid="b", relation="R", text="withdrawn",
             valid_at=t0, created_at=t0, expired_at=t0 + 5 * day),
        Fact(group_id="g", source_uuid="a", target_uuid="b", relation="R", text="contradicted",
             valid_at=t0 - 9 * day, invalid_at=t0 + 2 * day, created_at=t0 - 9 * day, expired_at=t0 + 4 * day,
             invalidated_by=Invalidation(fact_uuid="x", episode_uuid="e", previous_invalid_at=t0 + 8 * day)),
        # no start stated: it starts when first stated, unless the interval believed ends by then
        Fact(group_id="g", source_uuid="a", target_uuid="b", relation="R", text="undated",
             stated_at=t0 + 3 * day, created_at=t0),
        Fact(group_id="g", source_uuid="a", target_uuid="b", relation="R", text="ended before it was said",
             stated_at=t0 + 3 * day, invalid_at=t0 + 1 * day, created_at=t0),
        Fact(group_id="g", source_uuid="a", target_uuid="b", relation="R", text="retired before it was said",
             stated_at=t0 + 3 * day, invalid_at=t0 + 1 * day, created_at=t0, expired_at=t0 + 5 * day,
             invalidated_by=Invalidation(fact_uuid="x", episode_uuid="e", previous_invalid_at=None)),
    ]  # fmt: skip
    facts = [*made, *alice.facts]
    instants = [t0 + k * day for k in range(-12, 12, 1)] + [f.created_at for f in alice.facts]
    cases = [(fact, a, k) for fact in facts for a in instants
             for k in (a, t0 + 30 * day, datetime(2030, 1, 1, tzinfo=UTC))]  # fmt: skip
    states = page.evaluate(
        "cases => cases.map(([e, a, k]) => window.epigraph.factState(e, Date.parse(a), Date.parse(k)))",
        [[edge_dict(f, shown=True), a.isoformat(), k.isoformat()] for f, a, k in cases],
    )
    assert len(states) == len(cases) > 1000
    for (fact, as_of, known_at), state in zip(cases, states, strict=True):
        python = matches(fact, TimeFilter(as_of=as_of, known_at=known_at), known_at)
        assert (state == "current") == python, (fact.text, as_of, known_at, state)


def test_entities_are_coloured_by_type_with_a_legend(page: Any, tmp_path: Path) -> None:
    alice, bob = (Entity(group_id="g", name=n, labels=["Person"]) for n in ("Alice", "Bob"))
    paris = Entity(group_id="g", name="Paris", labels=["Place"])
    facts = tuple(
        Fact(group_id="g", source_uuid=p.uuid, target_uuid=paris.uuid, relation="LIVES_IN",
             text=f"{p.name} lives in Paris.")
        for p in (alice, bob)
    )  # fmt: skip
    view = GraphView({e.uuid: e for e in (alice, bob, paris)}, facts, frozenset(f.uuid for f in facts))
    open_view(page, view, tmp_path)
    colour = page.evaluate(
        "() => Object.fromEntries(window.epigraph.cy.nodes()"
        ".map(n => [n.data('name'), n.style('background-color')]))"
    )
    assert colour["Alice"] == colour["Bob"] != colour["Paris"]
    legend = page.locator("#ep-legend").inner_text()
    assert "Person" in legend and "Place" in legend and "retired" not in legend


# Each relation's label as drawn (centred on the edge, along it) against each node's disc: the names of
# the pairs that touch.
LABELS_ON_NODES = """() => { const cy = window.epigraph.cy, out = [];
    const ctx = document.createElement('canvas').getContext('2d');
    cy.edges().not('.hidden').filter(e => !e.isLoop()).forEach(e => {
        ctx.font = e.style('font-size') + ' ' + e.style('font-family');
        const w = ctx.measureText(e.data('relation')).width / 2 + 2;
        const h = parseFloat(e.style('font-size')) / 2 + 2;
        const m = e.midpoint(), s = e.source().position(), t = e.target().position();
        const len = Math.hypot(t.x - s.x, t.y - s.y), ux = (t.x - s.x) / len, uy = (t.y - s.y) / len;
        cy.nodes().not('.hidden').forEach(n => {
            const dx = n.position('x') - m.x, dy = n.position('y') - m.y;
            const along = dx * ux + dy * uy, across = dy * ux - dx * uy;
            const off = (v, half) => v - Math.max(-half, Math.min(half, v));
            const gap = Math.hypot(off(along, w), off(across, h));
            if (gap < n.width() / 2) { out.push(e.data('relation') + ' on ' + n.data('name')); }
        });
    });
    return out; }"""


def test_relations_stay_readable_where_the_graph_is_dense(
    page: Any, alice: GraphView, tmp_path: Path
) -> None:
    """Relations were drawn under the nodes ("CATED_" for LOCATED_IN, SIBLING_OF under Globex): edges
    (each with its label on a white background) are drawn above the nodes now, and the layout leaves
    each edge room for its relation."""
    open_view(page, alice, tmp_path)
    page.evaluate(f"() => window.epigraph.expand({by_name('Carol')}.id())")
    page.wait_for_function("window.epigraph.cy.nodes(':visible').length > 6")
    order = page.evaluate(
        """() => { const cy = window.epigraph.cy;
        const z = el => [el.style('z-index-compare'), +el.style('z-index')];
        return { nodes: cy.nodes().map(z), edges: cy.edges().map(z),
                 backgrounds: cy.edges().map(e => +e.style('text-background-opacity')) }; }"""
    )
    assert {compare for compare, _ in order["nodes"] + order["edges"]} == {"manual"}
    assert min(z for _, z in order["edges"]) > max(z for _, z in order["nodes"])
    assert min(order["backgrounds"]) >= 0.85
    assert page.evaluate(LABELS_ON_NODES) == []


def _two_circles() -> GraphView:
    """Ann, Bob and Cy in one community, Dee and Eve in another, Fay in none; Bob knows Dee."""
    names = ("Ann", "Bob", "Cy", "Dee", "Eve", "Fay")
    people = {n: Entity(group_id="g", name=n, labels=["Person"]) for n in names}
    pairs = [("Ann", "Bob"), ("Bob", "Cy"), ("Cy", "Ann"), ("Dee", "Eve"), ("Bob", "Dee"), ("Eve", "Fay")]
    facts = tuple(
        Fact(group_id="g", source_uuid=people[a].uuid, target_uuid=people[b].uuid, relation="KNOWS",
             text=f"{a} knows {b}.")
        for a, b in pairs
    )  # fmt: skip
    friends = Community(group_id="g", name="Old friends", summary="Ann, Bob and Cy grew up together.",
                        members=[people[n].uuid for n in ("Ann", "Bob", "Cy")])  # fmt: skip
    club = Community(group_id="g", name="Chess club", summary="Dee and Eve play chess.",
                     members=[people[n].uuid for n in ("Dee", "Eve")])  # fmt: skip
    return GraphView({e.uuid: e for e in people.values()}, facts, frozenset(f.uuid for f in facts),
                     communities={friends.uuid: friends, club.uuid: club})  # fmt: skip


COLOURS = (
    "() => Object.fromEntries(window.epigraph.cy.nodes()"
    ".map(n => [n.data('name'), n.style('background-color')]))"
)


def test_entities_are_coloured_and_listed_by_community(page: Any, tmp_path: Path) -> None:
    open_view(page, _two_circles(), tmp_path)
    colour = page.evaluate(COLOURS)
    assert colour["Ann"] == colour["Bob"] == colour["Cy"] != colour["Dee"] == colour["Eve"] != colour["Fay"]
    assert colour["Fay"] not in (colour["Ann"], colour["Dee"])
    legend = page.locator("#ep-legend").inner_text()
    assert "Old friends" in legend and "Chess club" in legend and "no community" in legend
    assert legend.index("Old friends") < legend.index("Chess club")  # the larger first
    page.mouse.move(*point(page, by_name("Dee")))
    page.wait_for_function("document.getElementById('ep-tip').innerText.startsWith('Dee')")
    assert "community: Chess club" in page.locator("#ep-tip").inner_text()
    page.mouse.click(*point(page, by_name("Bob")))
    page.locator("#ep-community").wait_for(state="visible")
    shown = page.locator("#ep-community").inner_text()
    assert "Community: Old friends (3 members) Ann, Bob and Cy grew up together." in shown


def test_the_communities_switch_colours_by_type_instead(page: Any, tmp_path: Path) -> None:
    open_view(page, _two_circles(), tmp_path)
    assert page.locator("#ep-communities").is_checked()
    page.locator("#ep-communities").uncheck()
    colour = page.evaluate(COLOURS)
    assert len(set(colour.values())) == 1  # all Person
    legend = page.locator("#ep-legend").inner_text()
    assert "Person" in legend and "Old friends" not in legend
    page.locator("#ep-communities").check()
    assert page.evaluate(COLOURS)["Ann"] != page.evaluate(COLOURS)["Dee"]


def test_a_view_without_communities_colours_by_type(page: Any, alice: GraphView, tmp_path: Path) -> None:
    open_view(page, alice, tmp_path)
    assert not page.locator("#ep-communities").is_checked()
    assert "no community" not in page.locator("#ep-legend").inner_text()
