"""Scoped invalidation, ordering within a session, duplicates, removal with provenance."""

from __future__ import annotations

from datetime import timedelta

from epigraph.episodes.inputs import EpisodeInput
from epigraph.graph.embedded import EmbeddedStore
from epigraph.graph.store import EVERYTHING, FactFilter
from epigraph.ingestion.ingestor import Ingestor
from epigraph.pipeline.options import FactOptions, IngestOptions
from epigraph.testing import HashEmbedder
from tests.support.world import T0, F, Turn, World

LONDON = "Bob: I live in London."
EVERY_SCOPED_FACT = IngestOptions(facts=FactOptions(similarity_floor=0.0))
"""HashEmbedder's vectors carry no meaning ("lives in Paris" / "moved to Berlin" share no word), so the
tests of invalidation mechanics show the model every fact in scope; tests/pipeline/test_probes.py ranks
by meaning with the real model."""
PARIS = "Alice: I live in Paris."


async def _facts(store: EmbeddedStore, names: list[str]) -> dict[str, object]:
    found = await store.entities_by_names("g", names)
    ids = sorted({e.uuid for matches in found.values() for e in matches})
    return {f.text: f for f in await store.facts_around("g", ids, FactFilter(time=EVERYTHING))}


async def test_a_fact_sharing_no_endpoint_is_never_invalidated(
    store: EmbeddedStore, embedder: HashEmbedder
) -> None:
    """The incumbent's failure: group-wide candidates let unrelated facts retire each other."""

    def contradict_everything(request):  # type: ignore[no-untyped-def]
        import json

        facts = request.variables["facts"]
        decisions = [{"id": f["id"], "contradicts": [c["id"] for c in f["candidates"]]} for f in facts]
        return json.dumps({"entities": [], "facts": decisions})

    world = World(
        {
            LONDON: Turn(["Bob", "London"], [F("Bob", "London", "LIVES_IN", "Bob lives in London.")]),
            PARIS: Turn(["Alice", "Paris"], [F("Alice", "Paris", "LIVES_IN", "Alice lives in Paris.")]),
        },
        overrides={"resolve_episode": contradict_everything},
    )
    llm = world.llm()
    ingestor = Ingestor(store, llm, embedder)
    await ingestor.add_episode(EpisodeInput(LONDON, group_id="g", reference_time=T0))
    result = await ingestor.add_episode(
        EpisodeInput(PARIS, group_id="g", reference_time=T0 + timedelta(days=1))
    )

    assert result.invalidated == []
    assert not llm.calls_for("resolve_episode"), "Bob's fact is not even a candidate for Alice's"
    bob = (await _facts(store, ["Bob"]))["Bob lives in London."]
    assert (bob.invalid_at, bob.expired_at, bob.invalidated_by) == (None, None, None)  # type: ignore[attr-defined]


async def test_a_later_turn_of_the_same_session_retires_an_earlier_one(
    store: EmbeddedStore, embedder: HashEmbedder
) -> None:
    considering = "Caroline is considering the agency."
    chose = "Caroline chose the agency."
    world = World(
        {
            "Caroline: I'm looking into an agency.": Turn(
                ["Caroline", "agency"],
                [F("Caroline", "agency", "CONSIDERING", considering, "2024-03-01T12:00:00Z")],
            ),
            "Caroline: I chose it!": Turn(
                ["Caroline", "agency"], [F("Caroline", "agency", "CHOSE", chose, "2024-03-01T12:00:00Z")]
            ),
        },
        contradicts={chose: [considering]},
    )
    ingestor = Ingestor(store, world.llm(), embedder)
    _, second = [
        await ingestor.add_episode(EpisodeInput(c, group_id="g", reference_time=T0)) for c in world.turns
    ]  # one session: the same reference time

    assert [f.text for f in second.invalidated] == [considering]
    retired = second.invalidated[0]
    chose_fact = next(f for f in second.facts if f.text == chose)
    assert retired.invalidated_by is not None
    assert retired.invalidated_by.fact_uuid == chose_fact.uuid
    assert retired.invalidated_by.episode_uuid == second.episode.uuid
    assert retired.expired_at is not None
    stored = await _facts(store, ["Caroline"])
    assert stored[considering].invalidated_by == retired.invalidated_by  # type: ignore[attr-defined]
    assert stored[chose].invalidated_by is None  # type: ignore[attr-defined]


async def test_time_words_the_message_does_not_state_leave_the_fact_undated_and_are_reported(
    store: EmbeddedStore, embedder: HashEmbedder
) -> None:
    """What the 1.5B model did: "since 2019" and "last Monday" copied from the prompt's examples into a
    message that gives no time. With ``dates_stated_only`` (the local model's options) the date is left
    unknown (said in the report); the message's own time words still date their fact."""
    said = "Gina: Contemporary dance is so expressive. I started a class yesterday."
    world = World(
        {
            said: Turn(
                ["Gina", "contemporary dance", "class"],
                [
                    F("Gina", "contemporary dance", "LOVES", "Gina loves contemporary dance since 2019."),
                    F("Gina", "class", "STARTED", "Gina started class yesterday."),
                    F(
                        "class",
                        "contemporary dance",
                        "TEACHES",
                        "class teaches contemporary dance",
                        expression="last Monday",
                    ),
                ],
            )
        }
    )
    only_stated = IngestOptions(
        facts=FactOptions(dates_stated_only=True)
    )  # the local model's (small_model_options)
    result = await Ingestor(store, world.llm(), embedder, only_stated).add_episode(
        EpisodeInput(said, group_id="g", reference_time=T0)
    )
    dated = {f.text.split()[1]: f.valid_at for f in result.facts}
    assert dated == {
        "loves": None,
        "started": (T0 - timedelta(days=1)).replace(hour=0, minute=0),
        "teaches": None,
    }
    undated = [w for w in result.report.warnings if "left undated" in w]
    assert len(undated) == 2 and any("2019-01-01" in w for w in undated)
    async with EmbeddedStore(":memory:") as other:  # by default a model's dates are its own
        kept = await Ingestor(other, world.llm(), embedder).add_episode(
            EpisodeInput(said, group_id="g", reference_time=T0)
        )
    assert {f.text.split()[1]: f.valid_at.year for f in kept.facts if f.valid_at} == {
        "loves": 2019,
        "started": T0.year,
        "teaches": T0.year,
    }


async def test_moving_city_retires_the_old_city_through_a_shared_subject(
    store: EmbeddedStore, embedder: HashEmbedder
) -> None:
    world = World(
        {
            PARIS: Turn(["Alice", "Paris"], [F("Alice", "Paris", "LIVES_IN", "Alice lives in Paris.")]),
            "Alice: I moved to Berlin.": Turn(
                ["Alice", "Berlin"],
                [F("Alice", "Berlin", "MOVED_TO", "Alice moved to Berlin.", expression="last month")],
            ),
        },
        contradicts={"Alice moved to Berlin.": ["Alice lives in Paris."]},
    )
    ingestor = Ingestor(store, world.llm(), embedder, EVERY_SCOPED_FACT)
    await ingestor.add_episode(EpisodeInput(PARIS, group_id="g", reference_time=T0 - timedelta(days=400)))
    moved = await ingestor.add_episode(
        EpisodeInput("Alice: I moved to Berlin.", group_id="g", reference_time=T0)
    )

    assert [f.text for f in moved.invalidated] == ["Alice lives in Paris."]
    berlin = moved.facts[0]
    assert berlin.valid_at == (T0 - timedelta(days=29)).replace(hour=0, minute=0)  # "last month" -> Feb 1
    assert moved.invalidated[0].invalid_at == berlin.valid_at


async def test_a_fact_that_ended_before_it_was_said_retires_nothing(
    store: EmbeddedStore, embedder: HashEmbedder
) -> None:
    """No start date and an end before the episode: dating it from the episode would invert its interval."""
    berlin = "Alice lived in Berlin until 2020."
    world = World(
        {
            PARIS: Turn(["Alice", "Paris"], [F("Alice", "Paris", "LIVES_IN", "Alice lives in Paris.")]),
            "Alice: I lived in Berlin until 2020.": Turn(
                ["Alice", "Berlin"],
                [F("Alice", "Berlin", "LIVED_IN", berlin, invalid_at="2020-01-01T00:00:00Z")],
            ),
        },
        contradicts={berlin: ["Alice lives in Paris."]},
    )
    ingestor = Ingestor(store, world.llm(), embedder, EVERY_SCOPED_FACT)
    await ingestor.add_episode(EpisodeInput(PARIS, group_id="g", reference_time=T0 - timedelta(days=400)))
    said = await ingestor.add_episode(
        EpisodeInput("Alice: I lived in Berlin until 2020.", group_id="g", reference_time=T0)
    )

    assert said.invalidated == []
    assert any("no start date" in w and "Alice lives in Paris." in w for w in said.report.warnings)
    stored = await _facts(store, ["Alice"])
    paris, lived = stored["Alice lives in Paris."], stored[berlin]
    assert (paris.invalid_at, paris.expired_at, paris.invalidated_by) == (None, None, None)  # type: ignore[attr-defined]
    assert (lived.valid_at, lived.invalid_at.year) == (None, 2020)  # type: ignore[attr-defined]


def llm_called(result, prompt: str) -> bool:  # type: ignore[no-untyped-def]
    return prompt in result.report.per_prompt


async def test_restated_facts_extend_provenance_instead_of_duplicating(
    store: EmbeddedStore, embedder: HashEmbedder
) -> None:
    world = World(
        {
            "Ann: I work at Acme.": Turn(
                ["Ann", "Acme"], [F("Ann", "Acme", "WORKS_AT", "Ann works at Acme.")]
            ),
            "Ann: Acme is my employer.": Turn(
                ["Ann", "Acme"], [F("Ann", "Acme", "WORKS_AT", "Acme employs Ann.")]
            ),
            "Ann: I work at Acme!": Turn(
                ["Ann", "Acme"], [F("Ann", "Acme", "WORKS_AT", "Ann works at Acme!")]
            ),
        },
        duplicates={"Acme employs Ann.": ["Ann works at Acme."]},
    )
    llm = world.llm()
    ingestor = Ingestor(store, llm, embedder)
    results = [
        await ingestor.add_episode(EpisodeInput(c, group_id="g", reference_time=T0)) for c in world.turns
    ]

    stats = await store.stats("g")
    assert stats.facts == 1
    fact = next(iter((await _facts(store, ["Ann"])).values()))
    assert fact.episodes == [r.episode.uuid for r in results]  # type: ignore[attr-defined]
    assert len(llm.calls_for("resolve_episode")) == 1, "the third restatement is a deterministic duplicate"


async def test_removing_an_episode_restores_what_it_retired_and_refreshes_summaries(
    store: EmbeddedStore, embedder: HashEmbedder
) -> None:
    world = World(
        {
            PARIS: Turn(["Alice", "Paris"], [F("Alice", "Paris", "LIVES_IN", "Alice lives in Paris.")]),
            "Alice: Berlin now.": Turn(
                ["Alice", "Berlin"], [F("Alice", "Berlin", "LIVES_IN", "Alice lives in Berlin.")]
            ),
        },
        contradicts={"Alice lives in Berlin.": ["Alice lives in Paris."]},
    )
    ingestor = Ingestor(store, world.llm(), embedder, IngestOptions(clock=lambda: T0 + timedelta(days=10)))
    await ingestor.add_episode(EpisodeInput(PARIS, group_id="g", reference_time=T0))
    berlin = await ingestor.add_episode(
        EpisodeInput("Alice: Berlin now.", group_id="g", reference_time=T0 + timedelta(days=1))
    )
    alice = (await store.entities_by_names("g", ["Alice"]))["Alice"][0]
    paris_entity = (await store.entities_by_names("g", ["Paris"]))["Paris"][0]
    assert alice.summary == "Alice lives in Berlin."
    assert paris_entity.summary == "", "a retired fact never lingers in a summary"

    removal = await ingestor.remove_episode("g", berlin.episode.uuid)

    assert removal.deletion.restored_facts == [berlin.invalidated[0].uuid]
    paris = (await _facts(store, ["Alice"]))["Alice lives in Paris."]
    assert paris.invalidated_by is None and paris.invalid_at is None  # type: ignore[attr-defined]
    alice = (await store.entities_by_names("g", ["Alice"]))["Alice"][0]
    assert alice.summary == "Alice lives in Paris."
    paris_entity = (await store.entities_by_names("g", ["Paris"]))["Paris"][0]
    assert paris_entity.summary == "Alice lives in Paris."
    assert {e.uuid for e in removal.entities} == {alice.uuid, paris_entity.uuid}
