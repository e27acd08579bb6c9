"""Idempotency, failure and retry, partial replies, hallucinated ids."""

from __future__ import annotations

import pytest

from epigraph.errors import LLMUnavailable
from epigraph.graph.embedded import EmbeddedStore
from epigraph.graph.model import EpisodeStatus
from epigraph.ingestion.ingestor import Ingestor
from epigraph.ingestion.inputs import EpisodeInput
from epigraph.prompts.protocol import ChatRequest
from epigraph.testing import HashEmbedder, ScriptedReply

from .conftest import T0
from .world import F, Turn, World

OSLO = "Ann: I live in Oslo with Bo."
WORLD = {
    OSLO: Turn(
        ["Ann", "Oslo", "Bo"],
        [
            F("Ann", "Oslo", "LIVES_IN", "Ann lives in Oslo."),
            F("Ann", "Bo", "LIVES_WITH", "Ann lives with Bo."),
        ],
    )
}


async def test_the_same_episode_twice_changes_nothing(store: EmbeddedStore, embedder: HashEmbedder) -> None:
    world = World(dict(WORLD))
    llm = world.llm()
    ingestor = Ingestor(store, llm, embedder)
    first = await ingestor.add_episode(EpisodeInput(OSLO, group_id="g", reference_time=T0))
    calls, stats = len(llm.calls), await store.stats("g")
    again = await ingestor.add_episode(EpisodeInput(OSLO, group_id="g", reference_time=T0))

    assert again.skipped and again.episode.uuid == first.episode.uuid
    assert len(llm.calls) == calls
    assert await store.stats("g") == stats


async def test_a_caller_given_id_keys_idempotency(store: EmbeddedStore, embedder: HashEmbedder) -> None:
    world = World({**WORLD, "Ann: I live in Oslo with Bo!": WORLD[OSLO]})
    ingestor = Ingestor(store, world.llm(), embedder)
    first = await ingestor.add_episode(
        EpisodeInput(OSLO, group_id="g", reference_time=T0, episode_id="msg-1")
    )
    second = await ingestor.add_episode(
        EpisodeInput("Ann: I live in Oslo with Bo!", group_id="g", reference_time=T0, episode_id="msg-1")
    )
    assert second.skipped and second.episode.uuid == first.episode.uuid
    assert (await store.stats("g")).episodes == 1


async def test_a_failure_marks_the_episode_failed_leaves_no_graph_and_a_retry_completes(
    store: EmbeddedStore, embedder: HashEmbedder
) -> None:
    broken = {"on": True}

    def facts(request: ChatRequest) -> ScriptedReply:
        if broken["on"]:
            return ScriptedReply(error=LLMUnavailable("upstream 503 after 5 attempts"))
        return ScriptedReply(World(dict(WORLD)).extract_facts(request.variables))

    world = World(dict(WORLD), overrides={"extract_facts": facts})
    ingestor = Ingestor(store, world.llm(), embedder)
    with pytest.raises(LLMUnavailable):
        await ingestor.add_episode(EpisodeInput(OSLO, group_id="g", reference_time=T0))

    [episode] = await store.episodes("g")
    assert episode.status == EpisodeStatus.FAILED
    assert episode.error is not None and "503" in episode.error
    assert episode.report.llm_calls == 2, "the report of a failed run still says what it spent"
    stats = await store.stats("g")
    assert (stats.entities, stats.facts, stats.mentions) == (0, 0, 0)

    broken["on"] = False
    [retried] = await ingestor.retry_failed("g")
    assert retried.ok and retried.episode.uuid == episode.uuid
    assert retried.episode.created_at == episode.created_at
    stats = await store.stats("g")
    assert (stats.episodes, stats.entities, stats.facts, stats.mentions) == (1, 3, 2, 3)
    assert await ingestor.retry_failed("g") == []


async def test_add_episode_can_return_the_failure_instead_of_raising(
    store: EmbeddedStore, embedder: HashEmbedder
) -> None:
    world = World(
        dict(WORLD), overrides={"extract_entities": lambda r: ScriptedReply(error=LLMUnavailable("down"))}
    )
    result = await Ingestor(store, world.llm(), embedder).add_episode(
        EpisodeInput(OSLO, group_id="g", reference_time=T0), raise_on_failure=False
    )
    assert not result.ok and result.error == "LLMUnavailable: down"


async def test_a_truncated_reply_keeps_its_valid_lines_and_says_so(
    store: EmbeddedStore, embedder: HashEmbedder
) -> None:
    def cut(request: ChatRequest) -> ScriptedReply:
        full = World(dict(WORLD)).extract_entities(request.variables)
        return ScriptedReply(full[: full.rindex("\n") + 12], finish_reason="length")

    world = World(dict(WORLD), overrides={"extract_entities": cut})
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
        lines = World(dict(WORLD)).extract_facts(request.variables).splitlines()
        return "\n".join(["```json", lines[0], '{"source": "Ann", "oops"', lines[1], "```"])

    world = World(dict(WORLD), overrides={"extract_facts": noisy})
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


async def test_an_interrupted_episode_stays_pending_and_a_retry_completes_it(
    store: EmbeddedStore, embedder: HashEmbedder
) -> None:
    world = World(dict(WORLD), latency=0.05)
    ingestor = Ingestor(store, world.llm(), embedder)
    events = ingestor.ingest([{"content": OSLO, "reference_time": T0, "group": "g"}])
    async for event in events:
        if type(event).__name__ == "EpisodeSaved":
            break
    await events.aclose()  # type: ignore[attr-defined]

    [episode] = await store.episodes("g")
    assert episode.status == EpisodeStatus.PENDING
    assert (await store.stats("g")).facts == 0
    [result] = await ingestor.retry_failed("g")
    assert result.ok and (await store.stats("g")).facts == 2
