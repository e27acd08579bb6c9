"""The pure parts of ask: the citation filter (split-invariant), the observation budget and numbering,
the dates a model writes, the plan's tolerance of small-model spellings."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from epigraph.ask import DEFAULT_MODE, AskOptions, ask_mode
from epigraph.ask.citations import HOLD_LIMIT, CitationFilter, cited_answer_grammar
from epigraph.ask.lookups import named_period, parse_when, period_bounds
from epigraph.ask.observations import Observations
from epigraph.errors import UsageError
from epigraph.graph.model import Episode, Fact
from epigraph.prompts.ask_plan import AskPlanOutput
from tests.support.gbnf import to_regex

KNOWN = {"F1", "F2", "E1"}


def filtered(pieces: list[str]) -> tuple[str, list[str], list[str]]:
    flt = CitationFilter(KNOWN.__contains__)
    text = "".join(flt.feed(p) for p in pieces) + flt.finish()
    return text, flt.cited, flt.dropped


def test_known_ids_stay_and_unknown_ones_go() -> None:
    text, cited, dropped = filtered(["Lisbon [F1, F9] and Berlin [F2][E7], [sic] [1] [E1;F1]."])
    assert text == "Lisbon [F1] and Berlin [F2], [sic] [1] [E1, F1]."
    assert cited == ["F1", "F2", "E1"] and dropped == ["F9", "E7"]


def test_an_unclosed_or_long_bracket_is_ordinary_text() -> None:
    assert filtered(["a [F1 b"])[0] == "a [F1 b"
    long = "[" + "x" * (HOLD_LIMIT + 5) + "] done"
    assert filtered([long])[0] == long
    assert filtered(["[[F1]"])[0] == "[[F1]"


@given(
    st.lists(
        st.sampled_from(["Alice ", "[F1]", "[F9]", "[", "]", "F2", ", ", "[sic]", "[E1, F7]", "x"]),
        max_size=25,
    ),
    st.lists(st.integers(min_value=0, max_value=200), max_size=8),
)
def test_the_filter_does_not_depend_on_how_the_text_was_split(parts: list[str], cuts: list[int]) -> None:
    text = "".join(parts)
    bounds = sorted({min(c, len(text)) for c in cuts})
    pieces = [text[a:b] for a, b in zip([0, *bounds], [*bounds, len(text)], strict=True)]
    assert filtered(pieces) == filtered([text])


def _fact(uuid: str, text: str, start: datetime, end: datetime | None = None) -> Fact:
    return Fact(
        uuid=uuid,
        group_id="g",
        source_uuid="a",
        target_uuid="b",
        relation="LIVES_IN",
        text=text,
        valid_at=start,
        invalid_at=end,
        episodes=["ep1"],
    )


def test_a_fact_line_says_its_status_only_when_the_fact_does_not_simply_hold() -> None:
    """Begun with no end: the window alone; an end to come: "current"; no start known: when stated."""
    now = datetime(2024, 6, 1, tzinfo=UTC)
    stated = _fact("s", "Alice likes tea.", now).model_copy(
        update={"valid_at": None, "stated_at": datetime(2024, 3, 1, tzinfo=UTC)}
    )
    renting = _fact(
        "r", "Alice rents a flat.", datetime(2024, 1, 1, tzinfo=UTC), datetime(2025, 1, 1, tzinfo=UTC)
    )
    lines = [
        s.line for s in Observations(now=now, known_at=None, budget_tokens=200).add([stated, renting], [])
    ]
    assert lines == [
        "F1: Alice likes tea. (stated 1 March 2024)",
        "F2: Alice rents a flat. (from 1 January 2024 until 1 January 2025; current)",
    ]
    dated = Observations(now=now, known_at=None, budget_tokens=200, dated=True).add([renting], [])
    assert dated[0].line.endswith("; current as of 1 June 2024)"), "asked as of a date: says so"


def test_observations_number_once_mark_windows_and_respect_the_budget() -> None:
    now = datetime(2024, 6, 1, tzinfo=UTC)
    seen = Observations(now=now, known_at=None, budget_tokens=80)
    paris = _fact(
        "p", "Alice lives in Paris.", datetime(2020, 1, 1, tzinfo=UTC), datetime(2022, 1, 1, tzinfo=UTC)
    )
    lisbon = _fact("l", "Alice lives in Lisbon.", datetime(2024, 2, 1, tzinfo=UTC))
    first = seen.add([paris, lisbon], [])
    assert [s.label for s in first] == ["F1", "F2"]
    assert first[0].line == "F1: Alice lives in Paris. (from 1 January 2020 until 1 January 2022; ended)"
    assert first[1].line == "F2: Alice lives in Lisbon. (from 1 February 2024)", "holds, no end: no status"
    assert first[0].citation.retired and not first[1].citation.retired
    later = _fact("m", "Alice moves to Rome.", datetime(2025, 1, 1, tzinfo=UTC))
    assert seen.add([later], [])[0].line.endswith("(from 1 January 2025; not yet)")
    again = seen.add([lisbon], [])
    assert [s.label for s in again] == ["F2"], "a fact found twice keeps its number"
    episode = Episode(group_id="g", content="Alice: " + "word " * 200, reference_time=now)
    assert seen.add([], [episode]) == [] and seen.left_out == 1, "over the budget: not shown, not citable"
    assert seen.get("E1") is None and seen.used_tokens <= 80


def test_dates_a_model_writes() -> None:
    assert parse_when("2022") == datetime(2022, 1, 1, tzinfo=UTC)
    assert parse_when("2022-06") == datetime(2022, 6, 1, tzinfo=UTC)
    assert parse_when("2022-06-03T10:00:00Z") == datetime(2022, 6, 3, 10, tzinfo=UTC)
    # as the answering context writes dates (the planner sees facts with such windows)
    assert parse_when("3 June 2022") == datetime(2022, 6, 3, tzinfo=UTC)
    assert parse_when("June 2022") == datetime(2022, 6, 1, tzinfo=UTC)
    assert parse_when("last summer") is None and parse_when(None) is None


def test_the_plan_reads_small_model_spellings() -> None:
    plan = AskPlanOutput.model_validate({"action": "Search(query=Alice)", "query": "null", "as_of": "None"})
    assert (plan.action, plan.query, plan.as_of) == ("search_facts", None, None)
    assert AskPlanOutput.model_validate({"action": "final answer"}).action == "answer"
    assert AskPlanOutput.model_validate({"action": "Get-Entity", "entity": "Alice"}).action == "entity"


def allowed(labels: list[str], reply: str) -> bool:
    return to_regex(cited_answer_grammar(labels)).fullmatch(reply) is not None


def test_the_answer_grammar_allows_only_cited_sentences_of_shown_ids() -> None:
    shown = ["F1", "F2", "E1"]
    assert allowed(shown, "Alice lives in Berlin. [F1]")
    assert allowed(shown, "Alice moved to Berlin [F1, F2]. She works at Globex [E1].")
    assert allowed(shown, "Alice worked at Acme (from 2023-03-10 until 2023-08-01) [F2,E1]")
    assert allowed(shown, "The graph holds nothing about her favourite food. [none]")
    assert not allowed(shown, "Alice lives in Berlin.")  # nothing cited
    assert not allowed(shown, "Alice lives in Berlin [F1]. She is happy.")  # an uncited sentence
    assert not allowed(shown, "Alice lives in Berlin. She is happy. [F1]"), "a sentence's end is cited"
    assert not allowed(shown, "Alice lives in Berlin. This is stated in E1. [F1]")  # the padding it stops
    assert allowed(shown, "She ran 3.5 miles, e.g., on Sunday, and won! [F1] Really?! [E1]")  # marks inside
    assert not allowed(shown, "Alice lives in Berlin [F3].")  # an id nobody showed
    assert not allowed(shown, "Alice lives in Berlin<|im_end|> [F1]")  # special tokens' text
    assert not allowed(shown, "Alice lives\nin Berlin [F1]")
    assert allowed(shown, "[none]"), "declining is the whole reply"
    three = "Alice lives in Berlin [F1]. She moved [F2]. She works at Globex [E1]."
    assert allowed(shown, three) and not allowed(shown, three + " She is happy [F1].")  # at most three
    assert allowed(shown, "x" * 300 + " [F1]") and not allowed(shown, "x" * 301 + " [F1]")
    with pytest.raises(ValueError, match="at least one id"):
        cited_answer_grammar(["x1", "F"])


def test_none_is_taken_out_of_the_answer_and_remembered() -> None:
    flt = CitationFilter(KNOWN.__contains__)
    text = flt.feed("Nothing about her food. [none]") + flt.finish()
    assert text == "Nothing about her food. " and flt.declared_none and flt.cited == []
    other = CitationFilter(KNOWN.__contains__)
    assert other.feed("Berlin [F1].") == "Berlin [F1]." and not other.declared_none


def test_the_period_a_question_names() -> None:
    assert named_period("Where did Bob teach in 2020?") == "2020"
    assert named_period("Where did Alice work in 2023-05?") == "2023-05"
    assert named_period("Between 2019 and 2020?") is None and named_period("Where now?") is None
    assert named_period("Order 120201 arrived") is None
    assert period_bounds("2020") == (datetime(2020, 1, 1, tzinfo=UTC), datetime(2021, 1, 1, tzinfo=UTC))
    assert period_bounds("2023-12") == (datetime(2023, 12, 1, tzinfo=UTC), datetime(2024, 1, 1, tzinfo=UTC))
    assert period_bounds("June") is None and period_bounds(None) is None


def test_only_a_reply_that_begins_with_none_declines() -> None:
    declined = CitationFilter(KNOWN.__contains__)
    assert declined.feed(" [no") == " " and not declined.declined and not declined.spoke
    declined.feed("ne] Anything after it.")
    assert declined.declined and declined.spoke
    stopped = CitationFilter(KNOWN.__contains__)
    assert stopped.feed("Berlin, as she said. [none]") == "Berlin, as she said. "
    assert stopped.declared_none and not stopped.declined, "text first: an answer without a citation"
    sic = CitationFilter(KNOWN.__contains__)
    sic.feed("[sic] [none]")
    assert sic.spoke and not sic.declined, "an ordinary bracket is text"
    cited = CitationFilter(KNOWN.__contains__)
    cited.feed("[F1] [none]")
    assert not cited.spoke and not cited.declined


def test_the_first_mark_says_whether_an_answer_declined() -> None:
    declined = CitationFilter(KNOWN.__contains__)
    declined.feed("Nothing says so. [none] Though Berlin [F1].")
    assert declined.first_mark == "none" and declined.cited == ["F1"]
    cited = CitationFilter(KNOWN.__contains__)
    cited.feed("Lisbon [F9], then [sic] Berlin [F1]. [none]")
    assert cited.first_mark == "cited", "a bracket of unshown ids and ordinary brackets decide nothing"
    assert CitationFilter(KNOWN.__contains__).first_mark is None


def test_modes_and_options_are_checked() -> None:
    assert ask_mode(None) == DEFAULT_MODE and ask_mode("agent") == "agent"
    with pytest.raises(UsageError, match="context, agent, auto"):
        ask_mode("fast")
    with pytest.raises(UsageError, match="one_call_tokens"):
        AskOptions(one_call_tokens=0)
    assert AskOptions(max_steps=0).max_steps == 0, "auto without the agent's fallback"
