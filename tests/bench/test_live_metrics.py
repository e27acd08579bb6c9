"""bench/quality/live_metrics.py's fact figures: a gold restatement counts as merged only when the built fact
matching the first statement also carries the restating turn's episode (a fact written again as new is
not); a built fact's start is right when it agrees with the gold fact it matches (its own date, else
when it was said), and a made-up year is wrong; a bulk window's lines count as kept by the turns they
went to, and a combined reply's names line by the names written."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from bench.quality.live_calls import kept_output_tokens, reply_rows
from bench.quality.live_metrics import Built, fact_quality
from bench.quality.reading import exchanged, owner_right, summary_check
from bench.shared.gold import GoldSet
from epigraph.episodes.events import EpisodeResult
from epigraph.graph.model import Entity, Episode, Fact
from epigraph.pipeline.metering import CallRecord
from epigraph.testing import HashEmbedder

G = "g"
FIRST = "Jon started a dance studio."
AGAIN = "Jon is starting his dance studio."
SAID = datetime(2023, 1, 20, 16, 4, tzinfo=UTC)


def _gold() -> dict[str, Any]:
    def turn(fact: dict[str, Any]) -> dict[str, Any]:
        return {"entities": [{"name": "Jon"}, {"name": "dance studio"}], "facts": [fact]}

    first = {
        "id": "D1:1#1",
        "source": "Jon",
        "target": "dance studio",
        "fact": FIRST,
        "valid_at": SAID.isoformat(),
    }
    again = {
        "id": "D1:2#1",
        "source": "Jon",
        "target": "dance studio",
        "fact": AGAIN,
        "duplicate_of": ["D1:1#1"],
    }
    return {"turns": {"D1:1": turn(first), "D1:2": turn(again)}}


async def _figures(facts: list[tuple[list[str], datetime | None]]) -> dict[str, float]:
    """The fact figures of a graph of Jon -> dance studio facts, each (its episodes, its valid_at)."""
    jon, studio = Entity(group_id=G, name="Jon"), Entity(group_id=G, name="dance studio")
    built = Built(
        {jon.uuid: jon, studio.uuid: studio},
        [
            Fact(group_id=G, source_uuid=jon.uuid, target_uuid=studio.uuid, relation="STARTED", text=FIRST,
                 episodes=episodes, valid_at=valid_at, stated_at=SAID)
            for episodes, valid_at in facts
        ],
    )  # fmt: skip
    gold = _gold()
    turns = list(gold["turns"].values())
    episodes = {"D1:1": "e1", "D1:2": "e2"}
    return await fact_quality(GoldSet(G, gold, []), turns, built, HashEmbedder(), 0.99, episodes)


async def test_a_restatement_is_merged_when_the_first_facts_provenance_holds_its_turn() -> None:
    figures = await _figures([(["e1", "e2"], None)])
    assert (figures["restatements_expected"], figures["restatements_merged"]) == (1, 1)


async def test_a_restatement_written_again_as_a_new_fact_is_not_merged() -> None:
    figures = await _figures([(["e1"], None), (["e2"], None)])
    assert (figures["restatements_expected"], figures["restatements_merged"]) == (1, 0)


async def test_a_fact_starts_right_when_said_or_dated_that_day_and_wrong_on_a_made_up_year() -> None:
    undated = await _figures([(["e1"], None)])
    assert (undated["fact_dates_checked"], undated["fact_dates_right"]) == (1, 1.0), "said that day"
    made_up = await _figures([(["e1"], None), (["e1"], datetime(2019, 1, 1, tzinfo=UTC))])
    assert (made_up["fact_dates_checked"], made_up["fact_dates_right"]) == (2, 0.5)


def test_a_window_calls_lines_are_kept_by_the_turns_they_went_to_with_their_speaker() -> None:
    """A bulk window's call is its first turn's; a line it numbered for Ann that went to Bo's turn
    (written with Ann's name for "I") still counts as kept; a line no turn wrote does not."""
    ann, bo = Entity(group_id=G, name="Ann"), Entity(group_id=G, name="pottery class")
    first = Episode(group_id=G, content="Ann: Hi Bo!", reference_time=SAID)
    second = Episode(group_id=G, content="Bo: I joined a pottery class.", reference_time=SAID)
    fact = Fact(group_id=G, source_uuid=ann.uuid, target_uuid=bo.uuid, relation="JOINED",
                text="Bo joined pottery class.", stated_at=SAID)  # fmt: skip
    reply = "1 Ann: [Ann] joined [pottery class]\n2 Bo: [Bo] loves [clay]\n"
    window = CallRecord("extract_window", 0.0, 1.0, output_tokens=20, text=reply)
    results = [EpisodeResult(first), EpisodeResult(second, entities=[ann, bo], facts=[fact])]

    kept = kept_output_tokens([window], results)

    half = 20 * len(reply.splitlines()[0]) / sum(len(line) for line in reply.splitlines())
    assert kept == [half]


def test_a_combined_replys_names_line_is_kept_by_the_names_the_graph_wrote() -> None:
    """A combined reply's ``Names:`` line counts like separate mode's names call: by the share of its
    names' lengths the episode wrote as entities (grounding dropped "Atlantis")."""
    ann, tours = Entity(group_id=G, name="Ann"), Entity(group_id=G, name="fjord tours")
    episode = Episode(group_id=G, content="Ann: I love the fjord tours.", reference_time=SAID)
    reply = "Names: fjord tours; Atlantis\n"
    call = CallRecord("extract_combined", 0.0, 1.0, output_tokens=10, text=reply)

    kept = kept_output_tokens([call], [EpisodeResult(episode, entities=[ann, tours])])

    assert kept == [10 * len("fjord tours") / len("fjord toursAtlantis")]


def test_the_batchs_summary_calls_are_saved_under_the_last_episode() -> None:
    """The calls made after the last episode ended (the batch's summaries) are saved too, so a replay
    answers the summaries as the model wrote them."""
    calls = [CallRecord("extract_entities", 0.0, 1.0, text="Jon"), CallRecord("summarize_entities", 1.0, 2.0,
             finish_reason="stop", text="{}")]  # fmt: skip
    rows = reply_rows(calls, [(1, "Jon: hi")])
    assert [(r["prompt"], r["episode"]) for r in rows] == [
        ("extract_entities", "Jon: hi"),
        ("summarize_entities", "Jon: hi"),
    ]


def test_a_reply_is_saved_under_the_episode_it_was_asked_about() -> None:
    """With episodes in flight the next turn's extraction is made before the first turn ends: its reply
    goes under the turn it asked about, not under the turn that ended next; a call about no turn (a
    summary) goes by when it was made."""
    calls = [
        CallRecord("extract_combined", 0.0, 1.0, text="none", asked_about="Jon: hi"),
        CallRecord("extract_combined", 0.0, 1.0, text="none", asked_about="Ann: hello Jon"),
        CallRecord("summarize_entities", 1.0, 2.0, text="{}"),
    ]
    rows = reply_rows(calls, [(3, "hi"), (3, "hello Jon")])
    assert [(r["prompt"], r["episode"]) for r in rows] == [
        ("extract_combined", "hi"),
        ("summarize_entities", "hi"),
        ("extract_combined", "hello Jon"),
    ]


async def test_a_fact_is_precise_when_it_matches_any_statement_of_a_gold_fact() -> None:
    """``fact_precision``: a built fact saying a restatement's words counts as matched, one saying
    nothing gold does not."""
    jon, studio = Entity(group_id=G, name="Jon"), Entity(group_id=G, name="dance studio")
    hall = Entity(group_id=G, name="town hall")
    facts = [
        Fact(group_id=G, source_uuid=jon.uuid, target_uuid=hall.uuid, relation="IS", text=AGAIN,
             stated_at=SAID),
        Fact(group_id=G, source_uuid=hall.uuid, target_uuid=studio.uuid, relation="IS",
             text="The town hall opens at nine.", stated_at=SAID),
    ]  # fmt: skip
    built = Built({e.uuid: e for e in (jon, studio, hall)}, facts)
    gold = _gold()
    figures = await fact_quality(GoldSet(G, gold, []), list(gold["turns"].values()), built, HashEmbedder(),
                                 0.99, {})  # fmt: skip
    assert figures["fact_precision"] == 0.5


async def _cosines(left: list[str], right: list[str]) -> Any:
    a, b = await HashEmbedder().embed(left), await HashEmbedder().embed(right)
    return a @ b.T


def _same(a: Sequence[str], b: Sequence[str]) -> bool:
    return bool({n.casefold() for n in a} & {n.casefold() for n in b})


async def test_an_owner_is_right_when_it_matches_better_as_written_than_with_the_speakers_exchanged() -> None:
    jon, job = Entity(group_id=G, name="Jon"), Entity(group_id=G, name="Gina's business")
    right = Fact(group_id=G, source_uuid=jon.uuid, target_uuid=job.uuid, relation="LOST",
                 text="Jon lost his job as a banker", stated_at=SAID)  # fmt: skip
    wrong = Fact(group_id=G, source_uuid=jon.uuid, target_uuid=job.uuid, relation="STARTED",
                 text="Jon started a clothing store", stated_at=SAID)  # fmt: skip
    unjudged = Fact(group_id=G, source_uuid=jon.uuid, target_uuid=job.uuid, relation="LIKES",
                    text="Jon likes the weather on Mars", stated_at=SAID)  # fmt: skip
    gold_facts = ["Jon lost his job as a banker yesterday", "Gina started a clothing store"]
    gold_names = [["Jon"], ["Gina"], ["Jon's business"]]

    figures = await owner_right([right, wrong, unjudged], [jon, job], gold_facts, gold_names, ("Jon", "Gina"),
                                _cosines, _same, 0.6)  # fmt: skip

    # the two facts that match a gold fact either way, and the possessive the gold gives to Jon
    assert figures == {"owner_right": round(1 / 3, 4), "owners_checked": 3}
    assert exchanged("Jon's studio and Gina's store", ("Jon", "Gina")) == "Gina's studio and Jon's store"


async def test_the_summary_check_reads_the_summary_of_each_gold_entity_with_three_facts() -> None:
    gold_facts = [
        ("jon", "dance studio", "Jon started a dance studio"),
        ("jon", "banker", "Jon lost his job as a banker"),
        ("jon", "festival", "Jon will perform at the festival"),
        ("gina", "store", "Gina opened a store"),
    ]
    jon = Entity(group_id=G, name="Jon", summary="Jon started a dance studio. Jon flew to the moon.")
    figures = await summary_check([["jon", "Jon"], ["gina", "Gina"]], gold_facts, [jon],
                                  ["Jon started a dance studio"], _cosines, _same, 0.9)  # fmt: skip
    assert figures == {
        "summaries_checked": 1,  # Gina has one gold fact
        "summary_fact_recall": round(1 / 3, 4),
        "summary_sentences": 2,
        "summary_sentences_unsupported": 0.5,  # the moon
    }
