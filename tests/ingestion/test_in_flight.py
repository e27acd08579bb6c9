"""Episodes in flight (``IngestOptions.in_flight``, ``ingestion/lookahead.py``): a group's next episodes run
ahead while one is committed, each committed in order, so the graph is the one of one episode at a time.

The scripted world has what depends on the episodes before: names said again (an exact match only once the
first is committed), an alias the resolve call merges, a fact said again, moves that retire the previous
city (a contradiction whose candidate is committed after the run ahead began). Each store (embedded and
Neo4j) gets one group ingested one at a time and one with episodes in flight; the two graphs are compared
record by record.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import replace
from datetime import timedelta

import pytest

from epigraph.episodes.events import EpisodeDone, EpisodeUpdated
from epigraph.episodes.inputs import EpisodeInput
from epigraph.graph.model import EpisodeStatus
from epigraph.graph.store import GraphStore
from epigraph.ingestion.claims import Leases
from epigraph.ingestion.ingestor import Ingestor
from epigraph.pipeline.options import FactOptions, IngestOptions
from epigraph.testing import HashEmbedder
from tests.support.group_graph import group_records as _graph
from tests.support.stores import DIM
from tests.support.world import T0, F, Turn, World, episode_of

TURNS = {
    "Ann: I live in Oslo with Bo.": Turn(
        ["Ann", "Oslo", "Bo"],
        [
            F("Ann", "Oslo", "LIVES_IN", "Ann lives in Oslo."),
            F("Ann", "Bo", "LIVES_WITH", "Ann lives with Bo."),
        ],
    ),
    "Bo: Ann and I adopted a cat, Mia.": Turn(
        ["Bo", "Ann", "Mia"],
        [F("Ann", "Mia", "OWNS", "Ann owns the cat Mia."), F("Bo", "Mia", "OWNS", "Bo owns Mia.")],
    ),
    "Ann: We moved to Rome.": Turn(["Ann", "Rome"], [F("Ann", "Rome", "LIVES_IN", "Ann lives in Rome.")]),
    "Bo: Annie loves Rome.": Turn(
        ["Bo", "Annie", "Rome"], [F("Annie", "Rome", "LOVES", "Annie loves Rome.")]
    ),
    "Ann: Mia is our cat.": Turn(["Ann", "Mia"], [F("Ann", "Mia", "OWNS", "Ann owns Mia.")]),
    "Ann: Now we live in Lisbon.": Turn(
        ["Ann", "Lisbon"], [F("Ann", "Lisbon", "LIVES_IN", "Ann lives in Lisbon.")]
    ),
    "Bo: Ann works at Acme.": Turn(
        ["Bo", "Ann", "Acme"], [F("Ann", "Acme", "WORKS_AT", "Ann works at Acme.")]
    ),
    "Ann: Acme moved me to Porto.": Turn(
        ["Ann", "Acme", "Porto"], [F("Ann", "Porto", "LIVES_IN", "Ann lives in Porto.")]
    ),
}
WORLD = World(
    TURNS,
    same_as={"Annie": "Ann"},
    duplicates={"Ann owns Mia.": ["Ann owns the cat Mia."]},
    contradicts={
        "Ann lives in Rome.": ["Ann lives in Oslo."],
        "Ann lives in Lisbon.": ["Ann lives in Rome."],
        "Ann lives in Porto.": ["Ann lives in Lisbon."],
    },
    latency=0.02,
)
OPTIONS = IngestOptions(facts=FactOptions(similarity_floor=0.0), in_flight=1)
"""Every fact on a shared endpoint is a candidate (the hash embedder's vectors mean nothing)."""


def _items(group_id: str) -> list[EpisodeInput]:
    return [
        EpisodeInput(c, T0 + timedelta(minutes=i), group_id=group_id, episode_id=f"turn-{i}")
        for i, c in enumerate(TURNS)
    ]


@pytest.mark.parametrize("in_flight", [3, 8])
async def test_episodes_in_flight_build_the_one_at_a_time_graph(
    any_store: GraphStore, group: str, in_flight: int
) -> None:
    """The group ingested one at a time, read, deleted, then ingested again with episodes in flight: the
    same records, ids included (they derive from the group and the episodes)."""
    store, embedder = any_store, HashEmbedder(dim=DIM)
    one_at_a_time = await Ingestor(store, WORLD.llm(), embedder, OPTIONS).add_episodes(_items(group))
    assert all(r.ok for r in one_at_a_time)
    expected = await _graph(store, group)
    await store.delete_group(group)  # type: ignore[attr-defined]
    llm = WORLD.llm()
    ingestor = Ingestor(store, llm, embedder, replace(OPTIONS, in_flight=in_flight))
    events = [e async for e in ingestor.ingest(_items(group))]

    got = await _graph(store, group)
    assert got == expected
    assert sum(f[7] for f in got["facts"]) == 3, "three moves, each retiring the city before"
    done = [e for e in events if isinstance(e, EpisodeDone)]
    assert [e.index for e in done] == list(range(len(TURNS))), "committed strictly in order"
    extracted = [episode_of(c.variables) for c in llm.calls_for("extract_entities")]
    assert sorted(extracted) == sorted(TURNS), "each episode extracted once: ahead, its reply used at commit"
    last = {e.index: e.result for e in events if isinstance(e, EpisodeDone | EpisodeUpdated) and e.result}
    reports = [r.report for r in last.values()]  # the batch's summaries charged to the last episode
    assert sum(r.calls_ahead for r in reports) >= len(TURNS) - 1, "replies of runs ahead used at commit"
    assert sum(r.llm_calls for r in reports) == len(llm.calls), "every call made is in some report"


async def test_a_run_ahead_leaves_nothing_when_its_batch_stops(
    any_store: GraphStore, group: str, other_group: str
) -> None:
    """A batch cancelled once its first episode is done: the episodes run ahead are left pending,
    unclaimed (another queue runs them at once) and with nothing of them in the graph."""
    store, embedder = any_store, HashEmbedder(dim=DIM)
    slow = replace(WORLD, latency=0.3)  # the first episode is done long before the last could be
    ingestor = Ingestor(store, slow.llm(), embedder, replace(OPTIONS, in_flight=4))
    first_done = asyncio.Event()

    async def consume() -> None:
        async for event in ingestor.ingest(_items(group)):
            if isinstance(event, EpisodeDone):
                first_done.set()

    batch = asyncio.create_task(consume())
    await first_done.wait()
    batch.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await batch
    stored = {e.content: e for e in await store.episodes(group, limit=20)}
    statuses = [stored[c].status for c in TURNS if c in stored]
    assert statuses[0] == EpisodeStatus.DONE and EpisodeStatus.PENDING in statuses
    assert statuses == sorted(statuses, key=lambda s: s != EpisodeStatus.DONE), "done ones first, in order"
    done = [c for c in TURNS if c in stored and stored[c].status == EpisodeStatus.DONE]
    ahead = [c for c in TURNS if c in stored and stored[c].status == EpisodeStatus.PENDING]
    for content in ahead:
        claim = await store.claim_episode(group, stored[content].uuid, "someone-else", 30.0)
        assert claim is not None and claim.owner == "someone-else", "its claim was released"
        await store.release_episode(group, stored[content].uuid, "someone-else")
    assert {m[0] for m in (await _graph(store, group))["mentions"]} == set(done), "nothing of the others"
    rest = await Ingestor(store, WORLD.llm(), embedder, OPTIONS).retry_failed(group)
    assert [r.episode.content for r in rest] == ahead and all(r.ok for r in rest)
    again = await Ingestor(store, WORLD.llm(), embedder, OPTIONS).add_episodes(_items(group))
    assert [r.skipped for r in again] == [c in stored for c in TURNS], "the rest run, nothing twice"
    assert [e.status for e in await store.episodes(group, limit=20)] == [EpisodeStatus.DONE] * len(TURNS)


async def test_a_drop_cut_short_still_stops_every_run_ahead(any_store: GraphStore, group: str) -> None:
    """A door gives up its runs ahead and is itself cancelled at the first wait (a Kafka lane cancelled
    in its ``finally``): every run ahead and claim renewal is stopped all the same, so their claims lapse
    and another owner takes the episodes (a renewal left running held them for as long as the process
    lived: the kill -9 test's hang)."""
    store, embedder = any_store, HashEmbedder(dim=DIM)
    leases = Leases(seconds=0.6, poll_s=0.05)  # renewed every 0.2 s while a run ahead lives
    slow = replace(WORLD, latency=5.0)  # every run ahead still in its first call when dropped
    ingestor = Ingestor(store, slow.llm(), embedder, replace(OPTIONS, in_flight=4), leases=leases)
    first, *later = [item.to_episode() for item in _items(group)[:4]]
    running = asyncio.create_task(ingestor.process(first, after=later))
    await asyncio.sleep(0.5)  # the first in its calls, the three after it claimed and run ahead
    running.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await running
    dropping = asyncio.create_task(ingestor.drop_ahead(later))
    await asyncio.sleep(0)
    dropping.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await dropping
    await asyncio.sleep(1.5)  # past a claim's length: a claim still renewed would be held now
    stored = {e.content: e for e in await store.episodes(group, limit=20)}
    for episode in later:
        uuid = stored[episode.content].uuid
        claim = await store.claim_episode(group, uuid, "someone-else", 30.0)
        assert claim is not None and claim.owner == "someone-else", f"{episode.content!r} is still held"
        assert stored[episode.content].status == EpisodeStatus.PENDING


def test_in_flight_must_be_a_whole_number_of_at_least_one() -> None:
    for wrong in (0, -2, 1.5, True):
        with pytest.raises(ValueError, match="in_flight"):
            IngestOptions(in_flight=wrong)  # type: ignore[arg-type]
