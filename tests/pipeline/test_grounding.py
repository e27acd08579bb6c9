"""The hallucination check: names found nowhere in the episode or its context are dropped and reported."""

from __future__ import annotations

import pytest

from epigraph.episodes.inputs import EpisodeInput
from epigraph.graph.embedded import EmbeddedStore
from epigraph.ingestion.ingestor import Ingestor
from epigraph.language import plain_words as words
from epigraph.language import roots, stem
from epigraph.pipeline.names.grounding import Grounding, not_an_entity
from epigraph.pipeline.names.policy import GroundingPolicy
from epigraph.pipeline.options import IngestOptions, NameOptions
from epigraph.testing import HashEmbedder
from tests.support.world import F, Turn, World

T0 = "2023-05-08T13:56:00Z"
GREETING = "Caroline: Hey Mel! Good to see you! How have you been?"
MARRIED = "Melanie: 5 years already! Time flies- feels like just yesterday I put this dress on!"


@pytest.mark.parametrize(
    ("texts", "name", "grounded"),
    [
        ([GREETING], "Caroline", True),
        ([GREETING], "Mel", True),
        ([GREETING], "New York City", False),
        ([GREETING], "Sam", False),
        (["Evan: I just got back from a trip with my family."], "Prius", False),
        (["Evan: My new Prius is great."], "Prius", True),
        (["Melanie: My kids keep me busy.", "Melanie"], "Melanie's kids", True),
        (["Melanie: My kids keep me busy."], "Melanie's children", True),
        (["Caroline: I called my mom yesterday."], "Caroline's mother", True),
        (["Caroline: I called my mom yesterday."], "Caroline's sister", False),
        (["Caroline: I went to a support group for LGBTQ people."], "LGBTQ support group", True),
        (["Caroline: I went to a support group."], "LGBTQ support group", True),
        (["Caroline: I went to a meeting."], "LGBTQ support group", False),
        (["Caroline: I'll continue my edu."], "Caroline's education", True),
        (["Gina: Hey Jon! The store's doing great!"], "Gina's clothing store", True),
        (["Melanie: Hey Caroline! Anything new?"], "New York City", False),
        (["Melanie: Hey Caroline! Anything new?"], "Mel's house", False),
        (["Melanie: I painted a lake sunrise."], "painting", True),
        (["Jon: I moved to New York City."], "NYC", True),
        (["Jon: I moved to New York City."], "NY", True),
        (["Jon: I moved to Boston."], "NYC", False),
        (["Jon: hi"], "the", False),
        ([GREETING], "You", False),
        (["Jon: I love the Café Olé."], "cafe ole", True),
        (["Caroline: you were great", "Melanie: thanks!"], "Melanie", True),
        # a possessive or derived name whose parts are grounded: the owner by name, the thing by its family
        (["Caroline: How long have you been married?", MARRIED], "Melanie's wedding", True),
        ([MARRIED], "Melanie's wedding", False),  # no word of marriage: an invented event
        (["Caroline: How long have you been married?", MARRIED], "Sam's wedding", False),  # no Sam
        (["Caroline: How long have you been married?", MARRIED], "Melanie's funeral", False),
        (["Caroline: How long have you been married?", MARRIED], "Melanie's divorce", False),
        (["Jon: Woah, that pic's from when my dance crew won."], "dancing", True),
        (["Jon: We performed at the festival."], "Jon's performance", True),
        (["Jon: We played at the festival."], "Jon's performance", False),
        (["Gina: I graduated last spring!"], "Gina's graduation", True),
        (["Gina: My dad retired last year."], "Gina's dad's retirement", True),
        (["Gina: The shop is in a sorry state."], "Gina's station", False),
        (["Jon: I love anime."], "Jon's animal", False),
        (["Melanie: Taking care of ourselves is vital."], "self-care", True),
        (["Melanie: Taking care of the kids is vital."], "self-care", False),
        (["Gina: I was passing by."], "Gina's passion", False),
    ],
)
def test_names_are_grounded_in_the_text(texts: list[str], name: str, grounded: bool) -> None:
    assert Grounding(texts).grounded(name) is grounded


def test_roots_join_a_word_family_and_nothing_more() -> None:
    def meet(a: str, b: str) -> bool:
        return bool(roots(a) & roots(b))

    assert meet("dancing", "dance") and meet("danced", "dancer")
    assert meet("performance", "performed") and meet("performance", "perform")
    assert meet("marriage", "married") and meet("retirement", "retired") and meet("graduation", "graduated")
    assert not meet("plan", "plane") and not meet("message", "mess") and not meet("passion", "passing")
    assert not meet("station", "state") and not meet("animal", "anime")


def test_word_classes_and_feelings_are_no_entities() -> None:
    assert not_an_entity("Adjective") and not_an_entity(" verb ") and not_an_entity("Feeling")
    assert not not_an_entity("Person") and not not_an_entity(None) and not not_an_entity("Action figure")


def test_words_and_stems() -> None:
    assert words("Melanie's KIDS, café!") == ["melanie", "kids", "cafe"]
    assert [stem(w) for w in ("kids", "parties", "painting", "painted", "art")] == [
        "kid", "party", "paint", "paint", "art",
    ]  # fmt: skip


async def test_invented_entities_and_facts_are_dropped_and_reported(
    store: EmbeddedStore, embedder: HashEmbedder
) -> None:
    world = World(
        {
            GREETING: Turn(
                ["Caroline", "Sam", "New York City"],
                [F("Sam", "New York City", "LIVES_IN", "Sam lives in New York City.")],
            ),
            "Evan: I just got back from a trip with my family.": Turn(
                ["Evan", "Evan's family"],
                [
                    F("Evan", "Prius", "WORKS_AT", "Evan works at Prius."),
                    F("Evan", "Evan's family", "TRAVELED_WITH", "Evan travelled with Evan's family."),
                ],
            ),
        }
    )
    ingestor = Ingestor(store, world.llm(), embedder)
    first = await ingestor.add_episode(EpisodeInput(GREETING, group_id="g", reference_time=T0))
    second = await ingestor.add_episode(
        EpisodeInput("Evan: I just got back from a trip with my family.", group_id="g", reference_time=T0)
    )
    assert first.ok and second.ok, "a hallucination is dropped, never a failure"
    assert [e.name for e in first.entities] == ["Caroline"]
    assert first.facts == [] and first.report.dropped_lines == 2, "Sam and New York City"
    assert any("'New York City'" in w and "hallucinated" in w for w in first.report.warnings)
    assert [f.text for f in second.facts] == ["Evan travelled with Evan's family."]
    assert second.report.dropped_lines == 1
    assert any("Evan works at Prius" in w and "'Prius'" in w for w in second.report.warnings)
    assert not (await store.entities_by_names("g", ["Prius", "New York City", "Sam"]))["Sam"]


async def test_a_name_from_the_context_window_is_kept(store: EmbeddedStore, embedder: HashEmbedder) -> None:
    first, second = "Caroline: Melanie, I joined a choir!", "Melanie: That's wonderful, so proud of you!"
    world = World(
        {
            first: Turn(["Caroline", "Melanie", "choir"]),
            second: Turn(
                ["Melanie", "Caroline"],
                [F("Melanie", "Caroline", "PROUD_OF", "Melanie is proud of Caroline.")],
            ),
        }
    )
    ingestor = Ingestor(store, world.llm(), embedder)
    await ingestor.add_episode(EpisodeInput(first, group_id="g", reference_time=T0))
    result = await ingestor.add_episode(
        EpisodeInput(second, group_id="g", reference_time="2023-05-08T14:00:00Z")
    )
    assert [f.text for f in result.facts] == ["Melanie is proud of Caroline."]
    assert result.report.dropped_lines == 0


def test_the_word_lists_are_a_policy() -> None:
    """Synonyms and not-an-entity types come from the options' policy: replaced, emptied or kept."""
    mom = ["Caroline: I called my mom yesterday."]
    assert Grounding(mom).grounded("Caroline's mother")  # the default synonyms
    assert not Grounding(mom, synonyms=()).grounded("Caroline's mother")
    doctor = Grounding(["Caroline: saw the GP today."], synonyms=(frozenset({"gp", "doctor", "physician"}),))
    assert doctor.grounded("Caroline's doctor")
    assert not Grounding(["Caroline: saw the GP today."]).grounded("Caroline's doctor")
    assert not not_an_entity("Adjective", frozenset()) and not_an_entity("Mood", frozenset({"mood"}))
    with pytest.raises(ValueError, match="lower-case single words"):
        GroundingPolicy(synonyms=(frozenset({"Mom", "mother"}),))


async def test_the_check_and_its_lists_switch_off(store: EmbeddedStore, embedder: HashEmbedder) -> None:
    world = World(
        {
            GREETING: Turn(
                ["Caroline", "Sam"],
                [F("Sam", "Caroline", "KNOWS", "Sam knows Caroline.")],
            )
        }
    )
    words_only = IngestOptions(
        names=NameOptions(grounding=GroundingPolicy(synonyms=(), not_entity_types=frozenset()))
    )
    kept = await Ingestor(store, world.llm(), embedder, words_only).add_episode(
        EpisodeInput(GREETING, group_id="words", reference_time=T0)
    )
    assert sorted(e.name for e in kept.entities) == ["Caroline"] and kept.report.dropped_lines == 1, "Sam"
    unchecked = await Ingestor(
        store, world.llm(), embedder, IngestOptions(names=NameOptions(grounding=None))
    ).add_episode(EpisodeInput(GREETING, group_id="off", reference_time=T0))
    assert sorted(e.name for e in unchecked.entities) == ["Caroline", "Sam"]
    assert [f.text for f in unchecked.facts] == ["Sam knows Caroline."]
    assert unchecked.report.dropped_lines == 0


async def test_the_name_vetoes_are_a_policy(store: EmbeddedStore, embedder: HashEmbedder) -> None:
    """``never_same`` keeps "Caroline's kids" from ever being offered as "Melanie's kids"; without the
    veto the names are plausible duplicates, the model is asked, and its (wrong) answer merges them."""
    first, second = "Melanie: my kids love painting.", "Caroline: my kids love it too."
    world = World(
        {first: Turn(["Melanie", "Melanie's kids"]), second: Turn(["Caroline", "Caroline's kids"])},
        same_as={"Caroline's kids": "Melanie's kids"},
    )
    for group, options in (
        ("veto", IngestOptions()),
        ("free", IngestOptions(names=NameOptions(never_same=None))),
    ):
        ingestor = Ingestor(store, world.llm(), embedder, options)
        await ingestor.add_episode(EpisodeInput(first, group_id=group, reference_time=T0))
        await ingestor.add_episode(
            EpisodeInput(second, group_id=group, reference_time="2023-05-08T14:00:00Z")
        )
    found = await store.entities_by_names("veto", ["Caroline's kids"])
    assert [e.name for e in found["Caroline's kids"]] == ["Caroline's kids"]
    merged = await store.entities_by_names("free", ["Caroline's kids"])
    assert [e.name for e in merged["Caroline's kids"]] == ["Melanie's kids"]


async def test_a_combined_replys_names_line_adds_the_entities_no_fact_names(
    store: EmbeddedStore, embedder: HashEmbedder
) -> None:
    """extract_combined ends with the message's names, in a fact or not: each becomes an entity of the
    episode, "my X" the speaker's, and a name the message never says is dropped like any other."""
    text = "Ann: I moved to Oslo and my kids love the fjord tours."
    reply = "[Ann] moved to [Oslo]\nNames: Oslo; fjord tours; kids; Atlantis"
    world = World({}, overrides={"extract_combined": lambda request: reply})
    result = await Ingestor(store, world.llm(), embedder, IngestOptions(mode="combined")).add_episode(
        EpisodeInput(text, group_id="g", reference_time=T0)
    )
    assert result.ok and [f.text for f in result.facts] == ["Ann moved to Oslo"]
    assert sorted(e.name for e in result.entities) == ["Ann", "Ann's kids", "Oslo", "fjord tours"]
    assert any("'Atlantis'" in w and "hallucinated" in w for w in result.report.warnings)
