"""Pure logic of the pipeline: names, relations, dates, round trips."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from epigraph.pipeline.dating import (
    among,
    resolve_expression,
    sentence_dates,
    stated_dates,
    without_iso_dates,
)
from epigraph.pipeline.facts.drafts import outside_names
from epigraph.pipeline.facts.wording import compatible_relations, normalize_relation, normalize_text
from epigraph.pipeline.metering import CallRecord, round_trips
from epigraph.pipeline.names.matching import plausible_duplicate
from epigraph.pipeline.names.repair import possessor, titled
from epigraph.pipeline.names.speaker import owned
from epigraph.pipeline.options import EXAMPLE_RELATION_FAMILIES
from epigraph.prompts.extraction import ExtractedFact

REF = datetime(2023, 5, 25, 13, 14, tzinfo=UTC)  # a Thursday


@pytest.mark.parametrize(
    ("new", "candidate", "plausible"),
    [
        ("support group", "LGBTQ support group", True),
        ("Mel", "Melanie", True),
        ("Melanie", "Melanie Smith", True),
        ("kids who need a family", "kids in need", True),
        ("Melanie's wedding day", "Melanie's wedding", True),
        ("adoption agency", "adoption agencies", True),
        ("DGIA", "dgia", True),
        ("painting Caroline shared", "Caroline", False),
        ("Melanie's kids", "Melanie", False),
        ("Melanie's kids", "Caroline's kids", False),
        ("charity race for mental health", "mental health", False),
        ("LGBTQ community", "LGBTQ support group", False),
        ("Me", "Melanie", False),
    ],
)
def test_plausible_duplicates(new: str, candidate: str, plausible: bool) -> None:
    assert plausible_duplicate(new, candidate) is plausible
    assert plausible_duplicate(candidate, new) is plausible


@given(st.text(min_size=1, max_size=40))
def test_a_name_is_always_a_plausible_duplicate_of_itself(name: str) -> None:
    assert plausible_duplicate(name, name)


@pytest.mark.parametrize(
    ("raw", "relation"),
    [
        ("works at", "WORKS_AT"),
        ("worksAt", "WORKS_AT"),
        ("LIVES_IN", "LIVES_IN"),
        ("is-friend-of!", "IS_FRIEND_OF"),
        ("2nd place", "R_2ND_PLACE"),
        ("???", None),
        ("", None),
    ],
)
def test_normalize_relation(raw: str, relation: str | None) -> None:
    assert normalize_relation(raw) == relation


def test_relation_families_and_text_normalization() -> None:
    assert "MOVED_TO" in compatible_relations("LIVES_IN", EXAMPLE_RELATION_FAMILIES)
    assert compatible_relations("ENJOYS", EXAMPLE_RELATION_FAMILIES) == {"ENJOYS"}
    assert normalize_text("Ann  works at Acme!") == normalize_text("ann works at acme.")


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("yesterday", "2023-05-24"), ("today", "2023-05-25"), ("tomorrow", "2023-05-26"),
        ("last week", "2023-05-18"), ("next week", "2023-06-01"), ("3 days ago", "2023-05-22"),
        ("three years ago", "2020-05-25"), ("for 4 years", "2019-05-25"), ("a year ago", "2022-05-25"),
        ("last month", "2023-04-01"), ("next month", "2023-06-01"), ("last year", "2022-01-01"),
        ("last Saturday", "2023-05-20"), ("last Thursday", "2023-05-18"), ("next Friday", "2023-05-26"),
        ("this Monday", "2023-05-22"), ("in 2019", "2019-01-01"), ("May 2021", "2021-05-01"),
        ("2023-01-02", "2023-01-02"), ("2023-01-02T10:00:00Z", "2023-01-02T10:00:00"),
        ("2 months ago", "2023-03-25"),
    ],
)  # fmt: skip
def test_resolve_expression(expression: str, expected: str) -> None:
    got = resolve_expression(expression, REF)
    assert got is not None and got.tzinfo is not None
    assert got.replace(tzinfo=None).isoformat().startswith(expected)


@pytest.mark.parametrize("expression", ["sometime", "when she was young", "", None])
def test_unreadable_expressions_are_left_to_the_model(expression: str | None) -> None:
    assert resolve_expression(expression, REF) is None


def test_month_arithmetic_clamps_the_day() -> None:
    got = resolve_expression("1 month ago", datetime(2023, 3, 31, tzinfo=UTC))
    assert got == datetime(2023, 2, 28, tzinfo=UTC)


def test_a_fact_line_is_dated_by_the_time_words_around_its_names() -> None:
    """The line's own words date it (``dating.sentence_dates`` over ``facts.outside_names``): a relative
    phrase, an interval, an end, a start, an ISO date; words that state no time leave it undated, and a
    name that holds a year ("2020 Olympics") dates nothing."""
    ref = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)

    def dates(fact: str, source: str = "Caroline", target: str = "group") -> tuple[object, object]:
        return sentence_dates(
            outside_names(ExtractedFact(source=source, target=target, relation="R", fact=fact)), ref
        )

    assert dates("Caroline went to group yesterday") == (datetime(2023, 5, 7, tzinfo=UTC), None)
    assert dates("Caroline painted group last year") == (datetime(2022, 1, 1, tzinfo=UTC), None)
    assert dates("Caroline lived with group from 2018 to 2020") == (
        datetime(2018, 1, 1, tzinfo=UTC),
        datetime(2020, 1, 1, tzinfo=UTC),
    )
    assert dates("Caroline worked at group until last year") == (None, datetime(2022, 1, 1, tzinfo=UTC))
    assert dates("Caroline has led group since May 2021") == (datetime(2021, 5, 1, tzinfo=UTC), None)
    assert dates("Caroline joined group on 2024-03-01") == (datetime(2024, 3, 1, tzinfo=UTC), None)
    assert dates("Caroline is keen on group") == (None, None)
    assert dates("Caroline went to the 2020 Olympics", target="2020 Olympics") == (None, None)
    assert dates("Caroline left group from 2020 to 2018") == (datetime(2020, 1, 1, tzinfo=UTC), None)


def test_the_dates_a_message_states_and_which_line_dates_agree_with_them() -> None:
    """``stated_dates``: the reference day and every time expression of the message; ``among``: a
    line's date agrees with one at the coarser precision of the two (a year, a month, a day)."""
    ref = datetime(2023, 3, 10, 9, 30, tzinfo=UTC)
    said = stated_dates(
        "Bob: I've taught here for five years, since 2018. Moved last month, sold it 3 days ago", ref
    )
    day = lambda y, m, d: datetime(y, m, d, tzinfo=UTC)  # noqa: E731
    assert said == {day(2023, 3, 10), day(2018, 3, 10), day(2018, 1, 1), day(2023, 2, 1), day(2023, 3, 7)}
    assert stated_dates("Ann: Hi!", ref) == {day(2023, 3, 10)}, "a message states its own present"
    assert stated_dates("Jon: Wanna see my moves next Fri?", ref) == {day(2023, 3, 10), day(2023, 3, 17)}
    assert among(day(2018, 1, 1), said) and among(day(2023, 2, 14), said) and among(day(2023, 3, 7), said)
    assert not among(day(2019, 1, 1), said), "a year the message never gives"
    assert not among(day(2023, 1, 16), said) and not among(day(2023, 3, 8), said)


def test_iso_dates_are_left_out_of_a_stored_sentence() -> None:
    assert without_iso_dates("Alice lives in Paris on 2020-03-01.") == "Alice lives in Paris."
    assert (
        without_iso_dates("Alice lived there from 2020-03-01T12:00:00Z to 2021-01-01!")
        == "Alice lived there!"
    )
    assert without_iso_dates("Alice went yesterday") == "Alice went yesterday"


def _call(start: float, end: float) -> CallRecord:
    return CallRecord("p", start, end)


def test_round_trips_count_the_longest_sequential_chain() -> None:
    assert round_trips([]) == 0
    assert round_trips([_call(0, 1)]) == 1
    assert round_trips([_call(0, 1), _call(0.5, 2)]) == 1, "overlapping calls are one round trip"
    assert round_trips([_call(0, 1), _call(1, 2), _call(2, 3)]) == 3
    assert round_trips([_call(0, 1), _call(1.1, 2), _call(1.1, 5), _call(5, 6)]) == 3
    assert round_trips([_call(0, 1), _call(1.1, 2), _call(1.1, 5), _call(2.1, 3), _call(5, 6)]) == 4


def test_what_a_speaker_calls_my_x_is_the_speakers() -> None:
    assert owned("business", "I'm starting my own business.", "Jon") == "Jon's business"
    assert owned("job", "Lost my job as a banker", "Jon") == "Jon's job"
    assert owned("team", "My team won first place", "Gina") == "Gina's team", "a subject, a verb after it"
    assert owned("sister", "my sister lives in Leeds", "Tom") == "Tom's sister"
    assert owned("education", "Gonna continue my edu and check out", "Caroline") == "Caroline's education"
    assert owned("kids", "my kid", "Mel") == "Mel's kids"
    assert owned("dance class", "my dance", "Jon") == "dance class", "the whole name after 'my'"
    assert owned("job", "my jobs", "Jon") == "Jon's job" and owned("jar", "my job", "Jon") == "jar"
    assert owned("dance", "I love dancing", "Jon") == "dance", "no 'my' before the name"
    crew = "Woah, my dance crew took home first"
    assert owned("dancing", crew, "Jon", ["Jon's dance crew"]) == "dancing", "a part of a longer name"
    assert owned("dance crew", crew, "Jon", ["dancing", "dance crew"]) == "Jon's dance crew"
    assert owned("dance", "I love my dance.", "Jon", ["dance class"]) == "Jon's dance", "the phrase ends"
    plant = "Pixel knocked my plant over again."
    assert owned("plant", plant, "Noah", ["Noah's plant"]) == "Noah's plant", "its own owned form is no other"
    assert owned("kids", "I took the kids out", "Mel") == "kids", "no 'my'"
    assert owned("Mel's kids", "my kids", "Mel") == "Mel's kids" and owned("Jon", "my Jon", "Jon") == "Jon"
    assert owned("kids", "my kids", None) == "kids"


def test_a_quoted_title_names_the_work() -> None:
    said = 'We just did a contemporary piece called "Finding Freedom." It was emotional.'
    assert titled('"Finding Freedom" piece', said) == "Finding Freedom"
    assert titled("“Finding Freedom”", said) == "Finding Freedom"
    assert titled('"Finding Freedom" piece', "a piece called Finding Freedom") == '"Finding Freedom" piece', (
        "the message quotes no title"
    )
    assert titled('"good vibes" attitude', said) == '"good vibes" attitude', "not what the message quotes"
    assert titled("contemporary piece", said) == "contemporary piece"


def test_a_bare_possessive_names_its_possessor() -> None:
    assert possessor("Caroline's", ["Melanie", "Caroline"]) == "Caroline"
    assert possessor("Jon’s", ["jon"]) == "jon", "as the other name is written"
    assert possessor("James'", ["James"]) == "James"
    assert possessor("McDonald's", ["Ann"]) == "McDonald's", "no McDonald beside it"
    assert possessor("Caroline's job", ["Caroline"]) == "Caroline's job", "not bare"
