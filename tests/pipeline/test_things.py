"""Names that are things (``NameOptions.things``): a name is kept only when it is the speaker or a noun
phrase of its message; a clause, a question, an adjective or a time expression is refused and counted."""

from __future__ import annotations

import pytest

from epigraph.episodes.inputs import EpisodeInput
from epigraph.errors import ConfigError
from epigraph.graph.embedded import EmbeddedStore
from epigraph.ingestion.ingestor import Ingestor
from epigraph.pipeline.names.things import NounPhrases, ThingCheck, message_words
from epigraph.pipeline.options import IngestOptions, NameOptions, small_model_options
from epigraph.testing import HashEmbedder
from tests.support.world import F, Turn, World

T0 = "2023-05-08T13:56:00Z"
SWIM = "Melanie: Yep, Caroline. I'm off to go swimming with the kids. Talk to you soon!"
TRIP = "Evan: Nice! Where did you go? The views of the trails are amazing, I went there last year."
EDU = "Caroline: Gonna continue my edu and check out career options, which is pretty exciting!"
COLORS = "Caroline: Wow, Melanie! The colors really blend nicely. That's awesome."


def _checks() -> list[ThingCheck]:
    checks: list[ThingCheck] = [message_words()]
    try:
        from epigraph.pipeline.names.tagging import noun_phrases

        checks.append(noun_phrases())
    except ConfigError:  # spaCy's model not installed: the word lists alone
        pass
    return checks


@pytest.mark.parametrize("check", _checks(), ids=lambda c: type(c.tagger).__name__)  # type: ignore[attr-defined]
@pytest.mark.parametrize(
    ("message", "speaker", "name", "kept"),
    [
        (SWIM, "Melanie", "Melanie", True),  # the speaker
        (SWIM, "Melanie", "Melanie's kids", True),  # a speaker's possessive of "the kids"
        (SWIM, "Melanie", "swimming", True),  # a gerund: an activity
        (SWIM, "Melanie", "Melanie's car", False),  # no car in the message ("care" is not a car)
        (EDU, "Caroline", "Caroline's edu", True),
        (EDU, "Caroline", "career options", True),
        (TRIP, "Evan", "where did you go", False),  # a question
        (TRIP, "Evan", "views of the trails are amazing", False),  # a clause
        (TRIP, "Evan", "last year", False),  # a time expression
        (TRIP, "Evan", "trails", True),
        (COLORS, "Caroline", "colors", True),
        (COLORS, "Caroline", "mental health support for those withsimilarissues", False),  # not its words
    ],
)
def test_a_name_is_a_noun_phrase_of_its_message(
    check: ThingCheck, message: str, speaker: str, name: str, kept: bool
) -> None:
    assert (check.refusal(name, message, speaker) is None) is kept


def _tagger_check() -> ThingCheck:
    """The tagger's check, or the test skipped when spaCy's model is not installed."""
    tagging = pytest.importorskip("epigraph.pipeline.names.tagging")
    try:
        check: ThingCheck = tagging.noun_phrases()
    except ConfigError:
        pytest.skip("spaCy's English model is not installed")
    return check


def test_the_tagger_refuses_adjectives_and_verbs_the_word_lists_cannot_tell() -> None:
    check = _tagger_check()
    assert check.refusal("awesome", COLORS, "Caroline") == "'awesome' is an adjective"
    assert check.refusal("blend", COLORS, "Caroline") == "'blend' is a verb"
    assert message_words().refusal("blend", COLORS, "Caroline") is None, "a word list takes it for a noun"
    assert check.refusal("Caroline's education", EDU, "Caroline") is None, "owned, and 'edu' shortens it"


def test_the_tagger_refuses_a_predicate_and_keeps_the_same_noun_said_of_a_thing() -> None:
    check = _tagger_check()
    counselor = "Melanie: You'd be a great counselor! Your empathy will help the people you work with."
    assert check.refusal("counselor", counselor, "Melanie") == (
        "'counselor' is a predicate (what something is said to be, not a thing)"
    )
    passion = "Jon: I've been into dancing since I was a kid and it's been my passion and escape."
    assert check.refusal("Jon's passion", passion, "Jon") is not None
    assert check.refusal("escape", passion, "Jon") is not None, "joined to a predicate"
    assert check.refusal("dancing", passion, "Jon") is None
    assert check.refusal("empathy", counselor, "Melanie") is None, "the subject of a sentence"
    hired = "Ann: My counselor is great. I'd be a counselor too."
    assert check.refusal("counselor", hired, "Ann") is None, "a thing where it is said once"
    assert check.refusal("Rome", "Ann: The best city is Rome.", "Ann") is None, "a proper noun stays"


async def test_a_refused_name_is_counted_and_its_facts_dropped(
    store: EmbeddedStore, embedder: HashEmbedder
) -> None:
    world = World(
        {
            TRIP: Turn(
                ["Evan", "where did you go", "trails"],
                [
                    F("where did you go", "Evan", "IS_NOT_BAD", "where did you go is not bad for Evan."),
                    F("Evan", "trails", "WENT_TO", "Evan went to the trails."),
                ],
            )
        }
    )
    options = IngestOptions(names=NameOptions(things=message_words()))
    result = await Ingestor(store, world.llm(), embedder, options).add_episode(
        EpisodeInput(TRIP, group_id="g", reference_time=T0)
    )
    assert sorted(e.name for e in result.entities) == ["Evan", "trails"]
    assert result.report.names_refused == 1
    assert any("'where did you go' is a question" in w for w in result.report.warnings)
    assert [f.text for f in result.facts] == ["Evan went to the trails."]
    assert result.report.dropped_lines == 1, "the line whose end is no entity of the episode"
    assert any("is no entity of the episode" in w for w in result.report.warnings)


async def test_off_by_default_and_on_for_the_small_model(
    store: EmbeddedStore, embedder: HashEmbedder
) -> None:
    assert IngestOptions().names.things is None
    assert isinstance(small_model_options().names.things, NounPhrases)
    world = World({TRIP: Turn(["Evan", "where did you go"])})
    result = await Ingestor(store, world.llm(), embedder).add_episode(
        EpisodeInput(TRIP, group_id="g", reference_time=T0)
    )
    assert "where did you go" in [e.name for e in result.entities] and result.report.names_refused == 0
