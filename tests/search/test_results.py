"""Result types: JSON, terminal tables, HTML, pandas, networkx, drawing (built directly, no store)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from datetime import UTC, datetime

from rich.console import Console

from epigraph.graph.model import Entity, Episode, Fact
from epigraph.search.results import EntityResult, EpisodeHit, FactResult, SearchResults, is_retired

ALICE = Entity(
    group_id="g", name="Alice", labels=["Person"], summary="Engineer at Acme.", name_embedding=[1.0, 0.0]
)
ACME = Entity(group_id="g", name="Acme <Inc>", labels=["Company"])
WORKS = Fact(
    group_id="g",
    source_uuid=ALICE.uuid,
    target_uuid=ACME.uuid,
    relation="WORKS_AT",
    text="Alice works at Acme.",
    text_embedding=[0.5, 0.5],
    valid_at=datetime(2021, 1, 1, tzinfo=UTC),
    episodes=["e1", "e2"],
)
OLD = WORKS.model_copy(
    update={
        "uuid": "old",
        "relation": "WORKED_AT",
        "invalid_at": datetime(2020, 1, 1, tzinfo=UTC),
        "expired_at": datetime(2021, 1, 1, tzinfo=UTC),
    }
)
EPISODE = Episode(
    group_id="g",
    content="Alice: I joined Acme!",
    reference_time=datetime(2021, 1, 1, tzinfo=UTC),
    content_embedding=[0.1, 0.2],
)


def results() -> SearchResults:
    return SearchResults(
        query="where does Alice work",
        group_ids=("g",),
        recipe="COMBINED",
        facts=(
            FactResult(WORKS, ALICE, ACME, 0.9, {"bm25": 3.0, "cosine": 0.8}),
            FactResult(OLD, ALICE, None, 0.2),
        ),
        entities=(EntityResult(ALICE, 0.7),),
        episodes=(EpisodeHit(EPISODE, 0.5),),
        as_of=datetime(2022, 1, 1, tzinfo=UTC),
    )


def test_to_dict_and_json_without_embeddings() -> None:
    data = json.loads(results().to_json())
    assert data["query"] == "where does Alice work" and data["as_of"].startswith("2022-01-01")
    first = data["facts"][0]
    assert first["fact"]["text"] == "Alice works at Acme." and first["source"]["name"] == "Alice"
    assert first["scores"] == {"bm25": 3.0, "cosine": 0.8}
    assert data["facts"][1]["target"] is None
    text = json.dumps(data)
    assert "embedding" not in text
    assert len(results()) == 4 and next(type(r).__name__ for r in results()) == "FactResult"


def test_fact_result_accessors() -> None:
    r = results().facts[0]
    assert (r.uuid, r.text, r.relation, r.source_name, r.target_name) == (
        WORKS.uuid,
        WORKS.text,
        "WORKS_AT",
        "Alice",
        "Acme <Inc>",
    )
    assert not r.retired and results().facts[1].retired
    assert results().facts[1].target_name == ACME.uuid  # unknown endpoint: its uuid


def test_is_retired() -> None:
    future_end = WORKS.model_copy(update={"invalid_at": datetime(2999, 1, 1, tzinfo=UTC)})
    assert not is_retired(future_end) and is_retired(OLD)


def test_rich_rendering() -> None:
    console = Console(record=True, width=160)
    console.print(results())
    out = console.export_text()
    assert "WORKS_AT" in out and "Alice works at Acme." in out and "Engineer at Acme." in out
    assert "as of 2022-01-01" in out


def test_html_rendering_escapes() -> None:
    html = results()._repr_html_()
    assert "<table" in html and "Acme &lt;Inc&gt;" in html and "Acme <Inc>" not in html
    assert 'class="retired"' in html


def test_empty_results_render() -> None:
    empty = SearchResults(query="nothing", group_ids=("g",), recipe="X")
    console = Console(record=True, width=120)
    console.print(empty)
    assert "nothing found" in console.export_text()
    assert "nothing found" in empty._repr_html_()


def test_to_pandas() -> None:
    frame = results().to_pandas()
    assert list(frame["kind"]) == ["fact", "fact", "entity", "episode"]
    facts = results().to_pandas("facts")
    assert list(facts["relation"]) == ["WORKS_AT", "WORKED_AT"] and facts["episodes"][0] == 2
    assert results().to_pandas("episodes")["content"][0] == EPISODE.content


def test_to_networkx() -> None:
    graph = results().to_networkx()
    assert graph.nodes[ALICE.uuid]["name"] == "Alice"
    assert graph.number_of_edges() == 2
    data = graph.get_edge_data(ALICE.uuid, ACME.uuid)
    assert data[WORKS.uuid]["relation"] == "WORKS_AT" and data[WORKS.uuid]["score"] == 0.9
    assert data["old"]["retired"] is True


def test_draw() -> None:
    svg = results().draw(center=ALICE.uuid).to_svg()
    ET.fromstring(svg)
    assert "Alice" in svg and "WORKS_AT" in svg


def test_episode_list_and_stats_view() -> None:
    from epigraph.graph.store import StoreStats
    from epigraph.present import EpisodeList, StatsView

    listing = EpisodeList("g", (EPISODE,), since=datetime(2020, 1, 1, tzinfo=UTC))
    data = json.loads(listing.to_json())
    assert (
        data["episodes"][0]["content"] == EPISODE.content and "content_embedding" not in data["episodes"][0]
    )
    console = Console(record=True, width=160)
    console.print(listing)
    text = console.export_text()
    assert "Alice: I joined Acme!" in text and "since 2020-01-01" in text
    assert "<table" in listing._repr_html_() and len(listing.to_pandas()) == 1
    stats = StatsView(StoreStats(episodes=3, entities=4, facts=5, current_facts=4, mentions=9), "g")
    assert json.loads(stats.to_json())["current_facts"] == 4
    console.print(stats)
    assert "retired facts" in console.export_text() and "<table" in stats._repr_html_()
