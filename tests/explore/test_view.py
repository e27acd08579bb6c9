"""The view's data and document without a browser: what is embedded, bounded and escaped."""

from __future__ import annotations

import html
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from epigraph.explore import GraphView
from epigraph.explore.page import script_json
from epigraph.graph.model import Entity, Fact
from epigraph.present.tables import Table, html_tables
from tests.support.view_page import in_thread

DATA = re.compile(r'<script id="epigraph-data" type="application/json">(.*?)</script>', re.S)


def data_of(document: str) -> dict:  # type: ignore[type-arg]
    found = DATA.search(document)
    assert found, "no data script in the page"
    return json.loads(found.group(1))


def test_the_view_embeds_both_time_axes_the_neighbourhood_and_episodes(alice: GraphView) -> None:
    data = data_of(alice.to_html())
    edges = {e["text"]: e for e in data["edges"]}
    paris = edges["Alice lives in Paris."]
    assert paris["valid_at"].startswith("2023-03-10") and paris["invalid_at"].startswith("2023-08-01")
    assert (
        paris["created_at"]
        and paris["expired_at"]
        and paris["invalidated_by"]["fact"]
        == (next(f.uuid for f in alice.facts if f.text == "Alice lives in Berlin."))
    )
    assert paris["shown"] and not edges["Carol founded Globex in 2019."]["shown"]  # embedded for "expand"
    nodes = {n["name"]: n for n in data["nodes"]}
    assert nodes["Alice"]["mentions"] > nodes["Paris"]["mentions"] >= 1
    assert nodes["Alice"]["shown"] and not nodes["Bob"]["shown"]
    assert data["focus"] == [nodes["Alice"]["id"]]
    assert all(u in data["episodes"] for u in paris["episodes"])
    assert any("Paris" in e["content"] for e in data["episodes"].values())


def test_the_document_is_self_contained_and_the_cell_is_an_iframe(alice: GraphView, tmp_path: Path) -> None:
    page = alice.save(tmp_path / "a.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and "cytoscape" in page
    assert not re.search(r"<(script|link|img)[^>]+(src|href)=", page), "nothing is fetched"
    assert "ep.hooks.more = " not in page  # the served page's script is left out
    cell = alice._repr_html_()
    assert cell.startswith('<iframe class="epigraph-view" srcdoc="')
    assert html.unescape(cell.split('srcdoc="', 1)[1].split('" style=', 1)[0]) == page
    ET.fromstring(alice.save(tmp_path / "a.svg").read_text())
    with pytest.raises(ValueError, match=r"\.html or \.svg"):
        alice.save(tmp_path / "a.png")


def test_hostile_text_cannot_end_the_data_script() -> None:
    evil = "</script><script>alert(1)</script>&"
    a = Entity(group_id="g", name=evil, summary=evil)
    b = Entity(group_id="g", name="B")
    fact = Fact(group_id="g", source_uuid=a.uuid, target_uuid=b.uuid, relation="R", text=evil)
    view = GraphView({a.uuid: a, b.uuid: b}, (fact,), frozenset({fact.uuid}), (a.uuid,), title=evil)
    page = view.to_html()
    assert page.count("</script>") == 4  # data, config, library, page script: nothing else ends a script
    data = data_of(page)
    assert data["edges"][0]["text"] == evil and data["nodes"][0]["name"] == evil
    assert "<" not in script_json({"x": evil})


def test_an_entity_heading_stays_apart_from_its_summary() -> None:
    out = html_tables([Table("t", ("a",), (("1",),))], header="Alice [Person]\nAlice lives in Berlin.")
    assert '<div class="epigraph-head"><b>Alice [Person]</b></div>' in out
    assert '<p class="epigraph-summary">Alice lives in Berlin.</p>' in out


def test_in_the_terminal_only_the_heading_is_bold(alice: GraphView) -> None:
    from rich.console import Group as RichGroup

    from epigraph.search.entity import EntityView

    entity = alice.entities[alice.focus[0]]
    view = EntityView(entity=entity, current=(), history=(), episodes=(), mentions=7, neighbours={})
    rendered = view.__rich__()
    assert isinstance(rendered, RichGroup)
    head = rendered.renderables[0]
    where = f"group {entity.group_id!r} · uuid {entity.uuid} · mentioned in 7 episodes"
    assert head.plain.split("\n") == ["Alice", entity.summary, where]
    assert [(s.start, s.end, s.style) for s in head.spans] == [(0, len("Alice"), "bold")]


def test_a_view_read_from_the_store_carries_the_communities_of_its_entities() -> None:
    """(Run on a loop of its own: the browser tests of this package keep one running on this thread.)"""
    in_thread(_view_with_communities())


async def _view_with_communities() -> None:
    from epigraph.explore.gather import entity_graph
    from epigraph.graph.derived import Community
    from epigraph.graph.embedded import EmbeddedStore
    from epigraph.graph.model import Episode, Mention
    from epigraph.graph.store import EpisodeWrite

    async with EmbeddedStore(":memory:") as store:
        await store.setup(8)
        ann, bob, zed = (Entity(group_id="g", name=n) for n in ("Ann", "Bob", "Zed"))
        episode = Episode(group_id="g", content="Ann met Bob", reference_time="2024-01-01T00:00:00Z")
        fact = Fact(group_id="g", source_uuid=ann.uuid, target_uuid=bob.uuid, relation="MET", text="Ann met.")
        mentions = [Mention(group_id="g", episode_uuid=episode.uuid, entity_uuid=e.uuid) for e in (ann, zed)]
        await store.write_episode(EpisodeWrite(episode, [ann, bob, zed], [fact], mentions))
        pair = Community(group_id="g", name="Ann and Bob", members=[ann.uuid, bob.uuid])
        alone = Community(group_id="g", name="Zed alone", members=[zed.uuid])
        await store.replace_communities("g", [pair, alone])
        view = await entity_graph(store, "g", "Ann")
    assert set(view.communities) == {pair.uuid}  # only those of the entities in the view
    data = view.to_data()
    assert {n["name"]: n["community"] for n in data["nodes"]} == {"Ann": pair.uuid, "Bob": pair.uuid}
    assert data["communities"] == {pair.uuid: {"name": "Ann and Bob", "summary": "", "size": 2}}
