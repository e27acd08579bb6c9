"""Partial replies, invalid lines, hallucinated ids, an unusable reply: what the pipeline keeps, reports."""

from __future__ import annotations

from epigraph.episodes.inputs import EpisodeInput
from epigraph.graph.embedded import EmbeddedStore
from epigraph.ingestion.ingestor import Ingestor
from epigraph.prompts.protocol import ChatRequest
from epigraph.testing import HashEmbedder, ScriptedReply
from tests.support.world import OSLO, OSLO_WORLD, T0, F, Turn, World


async def test_a_truncated_reply_keeps_its_valid_lines_and_says_so(
    store: EmbeddedStore, embedder: HashEmbedder
) -> None:
    def cut(request: ChatRequest) -> ScriptedReply:
        full = World(dict(OSLO_WORLD)).extract_entities(request.variables)
        return ScriptedReply(full[: full.rindex("\n") + 12], finish_reason="length")

    world = World(dict(OSLO_WORLD), overrides={"extract_entities": cut})
    result = await Ingestor(store, world.llm(), embedder).add_episode(
        EpisodeInput(OSLO, group_id="g", reference_time=T0)
    )

    assert result.ok
    assert sorted(e.name for e in result.entities) == ["Ann", "Oslo"]
    assert result.report.truncated and result.report.dropped_lines == 2, "the cut line, then Bo's fact"
    assert [f.text for f in result.facts] == ["Ann lives in Oslo."]
    assert any("extract_entities" in w and "token limit" in w for w in result.report.warnings)
    assert any("'Bo'" in w for w in result.report.warnings), "the fact about Bo is dropped, and said so"


async def test_invalid_lines_are_dropped_counted_and_the_rest_kept(
    store: EmbeddedStore, embedder: HashEmbedder
) -> None:
    def noisy(request: ChatRequest) -> str:
        lines = World(dict(OSLO_WORLD)).extract_facts(request.variables).splitlines()
        return "\n".join(["```json", lines[0], '{"source": "Ann", "oops"', lines[1], "```"])

    world = World(dict(OSLO_WORLD), overrides={"extract_facts": noisy})
    result = await Ingestor(store, world.llm(), embedder).add_episode(
        EpisodeInput(OSLO, group_id="g", reference_time=T0)
    )
    assert len(result.facts) == 2
    assert result.report.dropped_lines == 1 and not result.report.truncated


async def test_hallucinated_candidate_ids_are_rejected_and_reported(
    store: EmbeddedStore, embedder: HashEmbedder
) -> None:
    turns = {
        "Ann: I joined the LGBTQ support group.": Turn(
            ["Ann", "LGBTQ support group"],
            [F("Ann", "LGBTQ support group", "MEMBER_OF", "Ann joined the LGBTQ support group.")],
        ),
        "Ann: The group helps.": Turn(
            ["Ann", "support group"], [F("support group", "Ann", "HELPS", "The support group helps Ann.")]
        ),
        "Ann: I left the support group.": Turn(
            ["Ann", "LGBTQ support group"],
            [F("Ann", "LGBTQ support group", "LEFT", "Ann left the LGBTQ support group.")],
        ),
    }
    world = World(
        turns,
        overrides={
            "resolve_episode": lambda r: "\n".join(
                [f"{q['id']} 99" for q in r.variables["entities"]]
                + ["E9 E9.1"]
                + [f"{f['id']} ends 7.7" for f in r.variables["facts"]]
                + ["42 new"]
            ),
        },
    )
    ingestor = Ingestor(store, world.llm(), embedder)
    results = [await ingestor.add_episode(EpisodeInput(c, group_id="g", reference_time=T0)) for c in turns]

    assert any("'99'" in w and "not offered" in w for w in results[1].report.warnings)
    assert any("'E9'" in w and "not asked" in w for w in results[1].report.warnings)
    assert (await store.stats("g")).entities == 3, "the unmatched id leaves 'support group' a new entity"
    assert results[2].invalidated == []
    assert any("'7.7'" in w for w in results[2].report.warnings)
    assert any("'42'" in w for w in results[2].report.warnings)


async def test_an_unusable_reply_degrades_with_a_warning(
    store: EmbeddedStore, embedder: HashEmbedder
) -> None:
    turns = {
        "Ann: hi LGBTQ support group": Turn(["Ann", "LGBTQ support group"]),
        "Ann: the support group!": Turn(["Ann", "support group"]),
    }
    world = World(turns, overrides={"resolve_episode": lambda r: "I think it is probably the first one."})
    llm = world.llm()
    ingestor = Ingestor(store, llm, embedder)
    results = [await ingestor.add_episode(EpisodeInput(c, group_id="g", reference_time=T0)) for c in turns]
    assert results[1].ok
    assert len(llm.calls_for("resolve_episode")) == 1, "one call: a line reply is never re-asked"
    warnings = results[1].report.warnings
    assert any("resolve_episode: line 1 unusable" in w for w in warnings)
    assert any("no decision for E1; kept as new" in w for w in warnings)
    assert (await store.stats("g")).entities == 3, "the ambiguous entity is kept new"
