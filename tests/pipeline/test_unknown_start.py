"""A fact whose statement gave no start date starts when it was first stated, for every reader.

Before, such a fact (``valid_at`` None) matched every ``as_of``: a fact first stated in a 2024 episode
was returned for ``as_of=2023-01-01`` by search, the ask lookups and the view's time slider. The rule
(``graph.temporal.start_of``): no earlier than the reference time of the earliest episode that stated
it, unless a stated date says otherwise; results say which facts have an unknown start.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from rich.console import Console

from epigraph import KnowledgeGraph
from epigraph.ask.lookups import Lookups
from epigraph.ask.observations import Observations
from epigraph.explore.payload import edge_dict
from epigraph.graph.embedded import EmbeddedStore
from epigraph.pipeline.options import FactOptions, IngestOptions
from epigraph.testing import HashEmbedder
from tests.support.world import F, Turn, World

SAID = datetime(2024, 3, 1, 12, 0, tzinfo=UTC)
EARLIER = datetime(2023, 6, 1, 12, 0, tzinfo=UTC)
WORK = "Bob: I work at Acme."
AGAIN = "Bob: Acme is still my employer."
WORKS = "Bob works at Acme."
EMPLOYS = "Acme employs Bob."


def world() -> World:
    return World(
        {
            WORK: Turn(["Bob", "Acme"], [F("Bob", "Acme", "WORKS_AT", WORKS)]),
            AGAIN: Turn(["Bob", "Acme"], [F("Bob", "Acme", "WORKS_AT", EMPLOYS)]),
        },
        duplicates={EMPLOYS: [WORKS]},
    )


def graph() -> KnowledgeGraph:
    return KnowledgeGraph(
        store=EmbeddedStore(":memory:"),
        llm=world().llm(),
        embedder=HashEmbedder(dim=64),
        options=IngestOptions(facts=FactOptions(similarity_floor=0.0)),
        group_id="g",
    )


def text(renderable: object) -> str:
    console = Console(width=200, record=True)
    console.print(renderable)
    return console.export_text()


async def test_search_as_of_a_time_before_the_statement_does_not_find_it() -> None:
    async with graph() as kg:
        await kg.add_episode(WORK, reference_time=SAID)
        before = await kg.search("Bob works at Acme", as_of="2023-01-01")
        assert [r.text for r in before.facts] == [], "nothing stated it before 2024-03-01"
        after = await kg.search("Bob works at Acme", as_of=SAID + timedelta(days=1))
        assert [r.text for r in after.facts] == [WORKS]
        found = after.to_dict()["facts"][0]["fact"]
        assert (found["valid_at"], found["start_unknown"]) == (None, True)
        assert found["stated_at"] == SAID.isoformat().replace("+00:00", "Z")
        assert "? (stated 2024-03-01 12:00) → now" in text(after)
        assert "? (stated 2024-03-01 12:00) → now" in after._repr_html_()


async def test_an_earlier_restatement_moves_the_start_and_removing_it_moves_it_back() -> None:
    async with graph() as kg:
        await kg.add_episode(WORK, reference_time=SAID)
        earlier = await kg.add_episode(AGAIN, reference_time=EARLIER)
        as_of = EARLIER + timedelta(days=30)
        assert [r.text for r in (await kg.search("Bob Acme", as_of=as_of)).facts] == [WORKS]
        await kg.remove_episode(earlier.episode.uuid)
        assert [r.text for r in (await kg.search("Bob Acme", as_of=as_of)).facts] == []
        fact = (await kg.entity("Bob")).current[0]
        assert fact.stated_at == SAID


async def test_the_entity_view_and_the_view_payload_say_the_start_is_unknown() -> None:
    async with graph() as kg:
        await kg.add_episode(WORK, reference_time=SAID)
        view = await kg.entity("Bob")
        current = view.to_dict()["current"][0]
        assert current["start_unknown"] is True
        assert "? (stated 2024-03-01 12:00)" in text(view)  # what `epigraph entity` prints
        edge = edge_dict(view.current[0], shown=True)
        assert (edge["valid_at"], edge["stated_at"], edge["start_unknown"]) == (None, SAID.isoformat(), True)


async def test_ask_lookups_leave_out_a_fact_not_yet_stated_at_the_dialogs_date() -> None:
    async with graph() as kg:
        await kg.add_episode(WORK, reference_time=SAID)
        early = Lookups(kg.store, kg.embedder, "g", as_of=datetime(2023, 1, 1, tzinfo=UTC), known_at=None)
        assert (await early.entity("Bob")).facts == []
        assert (await early.search_facts("Bob works at Acme")).facts == []
        assert (await early.search_facts("Bob works at Acme", during="2023")).facts == []
        late = Lookups(kg.store, kg.embedder, "g", as_of=SAID + timedelta(days=1), known_at=None)
        (fact,) = (await late.entity("Bob")).facts
        seen = Observations(now=SAID + timedelta(days=1), known_at=None, budget_tokens=1000)
        (item,) = seen.add([fact], [])
        assert item.line.endswith("(stated 1 March 2024)"), "when it was said, never a start it lacks"
        assert item.citation.start_unknown and item.citation.valid_at == SAID
