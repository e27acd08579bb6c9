"""Bare names resolved without a model (``NameOptions.bare_names``): "the kids" a speaker says are
the speaker's, a bare name is the speaker's own thing the graph holds, a bare one-word noun is the one
longer name of the graph it heads; with several such names, or the option off, it stays a new entity."""

from __future__ import annotations

from epigraph.episodes.events import EpisodeResult
from epigraph.episodes.inputs import EpisodeInput
from epigraph.graph.embedded import EmbeddedStore
from epigraph.graph.model import Entity
from epigraph.ingestion.ingestor import Ingestor
from epigraph.pipeline.names.bare import head_target, kin_owned, speakers_own, unowned
from epigraph.pipeline.options import FactOptions, IngestOptions, NameOptions
from epigraph.testing import HashEmbedder
from tests.support.world import F, Turn, World

T0, T1, T2 = "2023-05-08T13:56:00Z", "2023-05-08T14:00:00Z", "2023-05-08T14:05:00Z"
SWIM = "Melanie: Yep, Caroline. I'm off to go swimming with the kids. Talk to you soon!"
GROUP = "Caroline: I went to a LGBTQ support group yesterday and it was so powerful."
HELPFUL = "Melanie: So cool you found such a helpful group. What's it done for you?"
STARTING = "Jon: Lost my job, so I'm gonna take a shot at starting my own business."
GOING = "Jon: The business is going well, I signed a lease."
DANCE = "Jon: I joined a dance group last week."


def _entity(name: str, *aliases: str) -> Entity:
    return Entity(uuid=name, group_id="g", name=name, aliases=list(aliases))


def test_the_rules_on_names() -> None:
    assert kin_owned("kids", SWIM, "Melanie") == "Melanie's kids"
    assert kin_owned("kids", "Melanie: Kids these days!", "Melanie") == "kids", "no 'the kids' said"
    assert kin_owned("swimming", SWIM, "Melanie") == "swimming", "not a relative"
    assert kin_owned("kids", SWIM, None) == "kids", "no speaker"
    assert speakers_own("business", "Jon") == "Jon's business"
    assert speakers_own("Gina's business", "Jon") is None, "owned already"
    assert speakers_own("Paris", "Jon") is None, "a proper noun is its own name"
    support, dance = _entity("LGBTQ support group"), _entity("dance group")
    assert head_target("group", "Melanie", [support]) is support
    assert head_target("groups", "Melanie", [support]) is support, "plural alike"
    assert head_target("group", "Melanie", [support, dance]) is None, "two groups: which one"
    mine = _entity("Melanie's group")
    assert head_target("group", "Melanie", [support, mine]) is mine, "of several, the speaker's own"
    assert head_target("support group", "Melanie", [support]) is None, "one word only"
    one = _entity("dance")
    assert head_target("dances", "Jon", [dance, one]) is one, "the same word first"
    yours = "Gina: Sorry about your job Jon, but starting your own business sounds awesome!"
    assert unowned("Gina's business", yours, "Gina") == "business", "the message says 'your'"
    assert unowned("Gina's team", "Gina: my team won first place", "Gina") == "Gina's team"
    assert unowned("Gina's team", "Gina: our team won first place", "Gina") == "Gina's team"
    assert unowned("Jon's business", yours, "Gina") == "Jon's business", "only the speaker's"
    assert unowned("Melanie's kids", SWIM, "Melanie") == "Melanie's kids", "the kids are hers"


async def _one(
    store: EmbeddedStore, embedder: HashEmbedder, text: str, names: list[str], line: F
) -> EpisodeResult:
    """One message ingested with ``bare_names`` on, the model naming ``names`` and stating ``line``."""
    world = World({text: Turn(names, [line])})
    options = IngestOptions(names=NameOptions(bare_names=True), facts=FactOptions(resolve=False))
    return await Ingestor(store, world.llm(), embedder, options).add_episode(
        EpisodeInput(text, group_id="g", reference_time=T0)
    )


async def test_names_of_one_reply_for_one_thing_are_one_entity(
    store: EmbeddedStore, embedder: HashEmbedder
) -> None:
    jon = "Jon: Thanks! Finishing up choreography to perform at a festival next month."
    line = F("Jon", "choreography", "FINISHING", "Jon is finishing up choreography.")
    result = await _one(store, embedder, jon, ["Jon", "Jon's choreography", "choreography"], line)
    assert sorted(e.name for e in result.entities) == ["Jon", "choreography"], "one, not Jon's"
    (fact,) = result.facts
    assert fact.target_uuid == next(e.uuid for e in result.entities if e.name == "choreography")
    stories = "Caroline: The transgender stories were so inspiring!"
    line = F("Caroline", "stories", "FOUND", "Caroline found the stories inspiring.")
    result = await _one(store, embedder, stories, ["Caroline", "stories", "transgender stories"], line)
    (told,) = [e for e in result.entities if e.name != "Caroline"]
    assert (told.name, told.aliases) == ("transgender stories", ["stories"]), "the bare noun it heads"
    assert result.facts[0].target_uuid == told.uuid


async def test_the_kids_are_the_speakers(store: EmbeddedStore, embedder: HashEmbedder) -> None:
    line = F("Melanie", "kids", "SWIMS_WITH", "Melanie is off to go swimming with the kids.")
    result = await _one(store, embedder, SWIM, ["Melanie", "kids", "swimming"], line)
    names = {e.uuid: e.name for e in result.entities}
    assert "Melanie's kids" in names.values() and "kids" not in names.values()
    (fact,) = result.facts
    assert names[fact.target_uuid] == "Melanie's kids", "the fact line's 'kids' is the same entity"


async def test_a_bare_name_is_the_speakers_own_or_the_one_it_heads(
    store: EmbeddedStore, embedder: HashEmbedder
) -> None:
    world = World(
        {
            STARTING: Turn(
                ["Jon", "business"], [F("Jon", "business", "STARTING", "Jon is starting a business.")]
            ),
            GOING: Turn(["Jon", "business"], [F("Jon", "business", "RUNS", "Jon's business is going well.")]),
            GROUP: Turn(
                ["Caroline", "LGBTQ support group"],
                [F("Caroline", "LGBTQ support group", "WENT_TO", "Caroline went to a LGBTQ support group.")],
            ),
            HELPFUL: Turn(
                ["Melanie", "group"], [F("Melanie", "group", "LIKES", "Melanie finds the group helpful.")]
            ),
        }
    )
    ingestor = Ingestor(
        store,
        world.llm(),
        embedder,
        IngestOptions(names=NameOptions(bare_names=True), facts=FactOptions(resolve=False)),
    )
    first = await ingestor.add_episode(EpisodeInput(STARTING, group_id="g", reference_time=T0))
    (business,) = [e for e in first.entities if e.name == "Jon's business"]  # "my own business"
    second = await ingestor.add_episode(EpisodeInput(GOING, group_id="g", reference_time=T1))
    assert business.uuid in {e.uuid for e in second.entities}, "Jon's bare 'business' is his"
    assert {f.target_uuid for f in second.facts} == {business.uuid}
    await ingestor.add_episode(EpisodeInput(GROUP, group_id="g", reference_time=T1))
    helpful = await ingestor.add_episode(EpisodeInput(HELPFUL, group_id="g", reference_time=T2))
    (group,) = [e for e in helpful.entities if e.name != "Melanie"]
    assert (group.name, group.aliases) == ("LGBTQ support group", ["group"])
    assert {f.target_uuid for f in helpful.facts} == {group.uuid}


async def test_without_the_option_or_with_two_candidates_a_bare_name_is_new(
    store: EmbeddedStore, embedder: HashEmbedder
) -> None:
    world = World(
        {
            GROUP: Turn(["Caroline", "LGBTQ support group"]),
            DANCE: Turn(["Jon", "dance group"]),
            HELPFUL: Turn(["Melanie", "group"]),
            SWIM: Turn(["Melanie", "kids"]),
        }
    )
    ingestor = Ingestor(
        store,
        world.llm(),
        embedder,
        IngestOptions(names=NameOptions(bare_names=True), facts=FactOptions(resolve=False)),
    )
    for i, text in enumerate((GROUP, DANCE, HELPFUL)):
        result = await ingestor.add_episode(EpisodeInput(text, group_id="g", reference_time=T0))
        assert i < 2 or "group" in {e.name for e in result.entities}, "two groups: neither is it"
    off = Ingestor(store, world.llm(), embedder, IngestOptions(facts=FactOptions(resolve=False)))
    result = await off.add_episode(EpisodeInput(SWIM, group_id="h", reference_time=T0))
    assert "kids" in {e.name for e in result.entities}
