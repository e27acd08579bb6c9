"""The gates of the names room and the facts room: each a named step, run in the order its room's
docstring states, whose verdict comes back with the room's result (and in ``EpisodeOutcome.verdicts``),
while the episode's report says the same in words, exactly as before the rooms had names."""

from __future__ import annotations

from epigraph.episodes.verdicts import Verdict
from epigraph.graph.embedded import EmbeddedStore
from epigraph.graph.model import Episode
from epigraph.pipeline.episode import ingest_episode
from epigraph.pipeline.facts import drafts
from epigraph.pipeline.metering import MeteredEmbedder, MeteredLLM, ReportBuilder
from epigraph.pipeline.names import gates, reply
from epigraph.pipeline.names.gates import NameGates, report_refusal
from epigraph.pipeline.names.grounding import Grounding
from epigraph.pipeline.names.things import message_words
from epigraph.pipeline.options import FactOptions, IngestOptions, NameOptions
from epigraph.pipeline.state import EpisodeRun
from epigraph.testing import HashEmbedder, ScriptedLLM
from tests.support.world import T0, E, F, Turn, World


def _gates(text: str, options: NameOptions) -> NameGates:
    episode = Episode(group_id="g", content=text, reference_time=T0)
    return NameGates(episode, options, Grounding([text]) if options.grounding is not None else None)


def _never_taken(_: str) -> bool:
    return False


def test_the_name_gates_run_in_their_stated_order_and_say_which_refused() -> None:
    assert gates.GATES == ("not_an_entity", "grounded", "thing", "unowned", "kin")
    words = _gates("Ann: where did you go last year?", NameOptions(things=message_words()))
    refused = {
        "Sam": "grounded",  # named nowhere
        "where did you go": "thing",  # grounded, but a question
        "last year": "thing",  # grounded, but a time
    }
    for name, gate in refused.items():
        decision = words.admit(name, None, _never_taken)
        assert decision.refusal is not None and decision.refusal.gate == gate, name
    # typed as no entity and named nowhere: the first gate refuses it, and the others never run
    decision = words.admit("Sam", "Adjective", _never_taken)
    assert [v.gate for v in decision.verdicts] == ["not_an_entity"]
    assert words.admit("Ann", None, _never_taken).verdicts == ()


def test_a_bare_name_is_renamed_by_the_gates_that_say_so() -> None:
    bare = NameOptions(bare_names=True)
    business = _gates("Gina: Starting your own business is hard.", bare)
    decision = business.admit("Gina's business", None, _never_taken)
    assert decision.name == "business" and decision.refusal is None
    assert decision.verdicts == (
        Verdict("unowned", "Gina's business", "the message gives no owner", False, "business"),
    )
    kept = business.admit("Gina's business", None, lambda name: name == "business")
    assert kept.name == "Gina's business" and kept.verdicts == (), "another name of the reply has it"
    kids = _gates("Melanie: swimming with the kids today", bare).admit("kids", None, _never_taken)
    assert kids.name == "Melanie's kids" and [v.gate for v in kids.verdicts] == ["kin"]
    off = _gates("Melanie: swimming with the kids today", NameOptions()).admit("kids", None, _never_taken)
    assert off.name == "kids" and off.verdicts == ()


def test_a_refusal_is_counted_where_the_report_always_counted_it() -> None:
    report = ReportBuilder(MeteredLLM(ScriptedLLM(lambda _: "")), MeteredEmbedder(HashEmbedder()))
    report_refusal(report, Verdict("grounded", "Sam", "'Sam' appears nowhere"))
    report_refusal(report, Verdict("thing", "last year", "'last year' is a time expression"))
    built = report.build()
    assert (built.dropped_lines, built.names_refused) == (1, 1)
    assert built.warnings == [
        "entity dropped: 'Sam' appears nowhere",
        "entity dropped: 'last year' is a time expression",
    ]


TEXT = "Ann: I moved to Oslo from my hometown, “Bergen”."
WORLD = World(
    {
        TEXT: Turn(
            ["Ann", "Oslo", E("Paris"), '"Bergen" town'],
            [
                F("Ann", "Oslo", "LIVES_IN", "Ann moved to Oslo in 2019."),
                F("Ann", "Ann", "IS", "Ann is Ann."),
                F("Ann", "Oslo", "é", "Ann é Oslo."),
                F("Ann", "Oslo", "LIVES_IN", "Ann moved to Oslo in 2019!"),
            ],
        )
    }
)


async def test_an_episode_hands_every_verdict_to_the_queue_in_road_order(
    store: EmbeddedStore, embedder: HashEmbedder
) -> None:
    episode = Episode(group_id="g", content=TEXT, reference_time=T0)
    await store.save_episode(episode)
    llm, metered = MeteredLLM(WORLD.llm()), MeteredEmbedder(embedder)
    options = IngestOptions(facts=FactOptions(dates_stated_only=True))
    report = ReportBuilder(llm, metered)
    run = EpisodeRun(episode, store, llm, metered, options, report, lambda _: None, 0, T0)

    outcome = await ingest_episode(run)

    said = [(v.gate, v.subject, v.refused) for v in outcome.verdicts]
    assert said == [
        ("grounded", "Paris", True),  # the names room: its repairs and gates, as the lines came
        ("title", '"Bergen" town', False),
        ("stated_dates", "Ann moved to Oslo in 2019.", False),  # the facts room: its gates in order
        ("two_ends", "Ann is Ann.", True),
        ("relation", "Ann é Oslo.", True),
        ("stated_dates", "Ann moved to Oslo in 2019!", False),
        ("repeat", "Ann moved to Oslo in 2019!", True),
    ]
    assert {v.gate for v in outcome.verdicts} <= {*reply.REPAIRS, *gates.GATES, *drafts.GATES}
    warnings = outcome.write.episode.report.warnings or report.build().warnings
    assert "entity dropped: 'Paris' appears nowhere in the episode or its context (hallucinated)" in warnings
    assert "fact 'Ann is Ann.' dropped: both ends are the same entity" in warnings
    assert "fact 'Ann moved to Oslo in 2019.': the message states no 2019-01-01; left undated" in warnings
    assert not any("'Ann moved to Oslo in 2019.' dropped" in w for w in warnings), "a repeat is silent"
    assert sorted(e.name for e in outcome.write.entities) == ["Ann", "Bergen", "Oslo"]
