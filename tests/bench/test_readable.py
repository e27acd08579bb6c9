"""bench/quality/readable.py: a fact's sentence reads when it names both ends, repeats no word sequence, ends
on a complete clause and takes most of its content words from its message or the speakers' names; each
check fails on the model's real failures (sentences from the recorded live replies) and passes on a
careful sentence."""

from __future__ import annotations

import pytest

from bench.quality.readable import readable

SPEAKERS = ("Caroline", "Melanie")
WENT = "Caroline: I went to a LGBTQ support group yesterday and it was so powerful."


def test_a_sentence_said_as_the_message_says_it_reads() -> None:
    assert readable("Caroline went to a LGBTQ support group yesterday", ["Caroline"],
                    ["LGBTQ support group"], WENT, SPEAKERS) == []  # fmt: skip


@pytest.mark.parametrize(
    ("sentence", "source", "target", "message", "failed"),
    [
        # names one end only (the bracket went into another word)
        ("edu and career options are exciting", "Caroline's edu", "career options",
         "Gonna continue my edu and check out career options, which is pretty exciting!", ["ends"]),
        # a name said twice
        ("Caroline was so happy and thankful Caroline for all the support", "Caroline", "support",
         "I was so happy and thankful for all the support.", ["repeats"]),
        # a phrase said twice
        ("Door Dash is Gina's business, and Jon's business is Gina's business", "Door Dash",
         "Jon's business", "Sorry about your business! I lost my job at Door Dash.", ["repeats"]),
        # a word twice in a row
        ("dance was Jon's dance dance", "dance", "Jon's dance", "I love dance, it's my passion.",
         ["repeats"]),
        # the owner said twice: a reply's wording stuck to a name as a possessive
        ("Jon definitely wants to see his Jon's moves next Friday", "Jon", "Jon's moves",
         "Yeah definitely! Wanna see my moves next Fri? Can't wait!", ["repeats"]),
        # cut off on a conjunction, and on a preposition
        ("Caroline feels courage to embrace herself and support group is where she feels supported and",
         "Caroline", "support group", "The support group has made me feel accepted and given me "
         "courage to embrace myself.", ["cut"]),
        ("understanding is based on empathy and will help the people you work with", "understanding",
         "empathy", "Your empathy and understanding will really help the people you work with.", ["cut"]),
        # made up around the names (an alias names the group)
        ("group is located in Melanie house", "LGBTQ support group|group", "Melanie",
         "Wow, love that painting! So cool you found such a helpful group.", ["words"]),
    ],
)  # fmt: skip
def test_each_check_fails_on_the_failure_it_names(
    sentence: str, source: str, target: str, message: str, failed: list[str]
) -> None:
    speakers = ("Caroline", "Melanie", "Jon", "Gina")
    assert readable(sentence, source.split("|"), target.split("|"), f"X: {message}", speakers) == failed


def test_an_owner_said_again_as_an_owner_and_a_possessive_named_by_what_it_owns_read() -> None:
    message = "Melanie: I'm swamped with the kids & work."
    assert readable("Melanie is swamped with Melanie's kids", ["Melanie"], ["Melanie's kids"], message,
                    SPEAKERS) == []  # fmt: skip
    assert readable("Melanie is swamped with her kids", ["Melanie"], ["Melanie's kids"], message,
                    SPEAKERS) == []  # fmt: skip


def test_an_alias_names_an_end_and_endings_and_shortenings_count_as_the_messages_words() -> None:
    message = "Caroline: Gonna continue my edu and check out career options!"
    assert readable("Caroline continues her education", ["Caroline"], ["Caroline's edu", "education"],
                    message, SPEAKERS) == []  # fmt: skip


def test_common_words_said_twice_and_a_phrasal_verbs_particle_at_the_end_are_english() -> None:
    message = "Caroline: My friends are my rocks, they motivate me and give me the strength to push on."
    sentence = "Caroline's friends have been there and have been her strength to push on"
    assert readable(sentence, ["Caroline's friends"], ["strength"], message, SPEAKERS) == []


def test_both_ends_must_be_named_at_different_places() -> None:
    message = "Melanie: The kids love the beach."
    assert readable("Melanie's kids love the beach", ["Melanie's kids"], ["kids"], message, SPEAKERS) == [
        "ends"
    ], "one run of words names one end"
    assert (
        readable("Melanie's kids love the beach", ["Melanie"], ["Melanie's kids"], message, SPEAKERS) == []
    ), "the owner and what it owns"
