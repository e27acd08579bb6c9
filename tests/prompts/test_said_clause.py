"""prompts/said_clause.py: a fact's sentence is the message's clause naming both ends, in the speaker's
name; a question, or a message naming only one end, gives none (the model's sentence stays); the
decoders of the three extraction prompts keep the model's ends and relation and take the sentence."""

from __future__ import annotations

import pytest

from epigraph.prompts import extract_combined, extract_facts, extract_window
from epigraph.prompts.extraction import ExtractionInput, FactLine
from epigraph.prompts.said_clause import in_third_person, said_clause

WENT = "I went to a LGBTQ support group yesterday and it was so powerful."


@pytest.mark.parametrize(
    ("message", "source", "target", "said"),
    [
        (WENT, "Caroline", "LGBTQ support group", "Caroline went to a LGBTQ support group yesterday"),
        # the model wrote the ends the other way round: the message's order stays
        ("The support group has made me feel accepted and given me courage.", "Caroline", "support group",
         "The support group has made Caroline feel accepted"),
        # a possessive end is the speaker's "my"
        ("Busy week! I'm swamped with my kids & work.", "Melanie", "Melanie's kids",
         "Melanie is swamped with Melanie's kids"),
        # two clauses when no one names both
        ("My pottery class meets on Monday, at the community center.", "pottery class", "community center",
         "Caroline's pottery class meets on Monday, at the community center"),
    ],
)  # fmt: skip
def test_the_sentence_is_the_shortest_run_of_clauses_naming_both_ends(
    message: str, source: str, target: str, said: str
) -> None:
    assert said_clause(message, "Caroline" if "Melanie" not in source else "Melanie", source, target) == said


@pytest.mark.parametrize(
    ("message", "source", "target"),
    [
        ("Did you hear any inspiring stories?", "Melanie", "inspiring stories"),  # a question states nothing
        ("Wow, love that painting!", "Melanie", "painting"),  # the speaker is never named nor "I"
        ("I love my dog.", "Caroline", "cat"),  # the message names one end only
    ],
)
def test_no_clause_naming_both_ends_gives_none(message: str, source: str, target: str) -> None:
    assert said_clause(message, "Caroline", source, target) is None


def test_the_first_person_becomes_the_speaker_in_the_third_person() -> None:
    assert (
        in_third_person("I really love my kids, I'm happy, I have a dog and I went home. I’ll go.", "Mel")
        == "Mel really loves Mel's kids, Mel is happy, Mel has a dog and Mel went home. Mel will go."
    )


def _facts(items: list[object]) -> list[FactLine]:
    return [i for i in items if isinstance(i, FactLine)]


def test_each_extraction_prompt_takes_the_sentence_from_its_turn() -> None:
    data = ExtractionInput(**ExtractionInput.of(f"Caroline: {WENT}", "Caroline"), sentences_from_message=True)
    line = "[Caroline] went to [LGBTQ support group] and Caroline went to it yesterday"
    separate = extract_facts.GivenNameFactLines().decode(
        line,
        extract_facts.ExtractFactsInput(
            **data.model_dump(), entities=["Caroline", "LGBTQ support group"], sentences_from_message=True
        ),
    )
    combined = _facts(extract_combined.FactLines().decode(line, data))
    window = extract_window.ExtractWindowInput(
        sentences_from_message=True,
        turns=[extract_window.WindowTurn(speaker="Mel", message="Hi!"),
               extract_window.WindowTurn(speaker="Caroline", message=WENT)]
    )  # fmt: skip
    (turn,) = extract_window.WindowLines().decode(f"2 Caroline: {line}", window)
    for fact in (*separate, *combined, *_facts(turn.items)):
        assert (fact.source, fact.target, fact.relation) == ("Caroline", "LGBTQ support group", "went to")
        assert fact.fact == "Caroline went to a LGBTQ support group yesterday"


def test_without_the_option_the_models_sentence_stays() -> None:
    data = ExtractionInput(**ExtractionInput.of(f"Caroline: {WENT}", "Caroline"))
    (fact,) = _facts(extract_combined.FactLines().decode("[Caroline] went to [LGBTQ support group]", data))
    assert fact.fact == "Caroline went to LGBTQ support group"


def test_a_line_whose_ends_no_clause_names_keeps_the_models_sentence() -> None:
    data = ExtractionInput(
        **ExtractionInput.of("Melanie: Wow, love that painting!", "Melanie"), sentences_from_message=True
    )
    (fact,) = _facts(extract_combined.FactLines().decode("[Melanie] loves [painting]", data))
    assert fact.fact == "Melanie loves painting"
