"""Two ingestion queues on one store never run one episode at once (issue 31): each claims an episode
before running it; one claimed by another live owner is waited for, then skipped once done, and run only
if its owner's claim lapsed (a crashed process). Real SQLite files (one connection per queue: another
process's), the scripted world, LLM calls counted per episode.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import pytest

from epigraph.episodes.events import EntityExtracted, EpisodeDone, EpisodeWaiting, ProgressEvent
from epigraph.episodes.inputs import EpisodeInput
from epigraph.errors import LLMUnavailable
from epigraph.graph.embedded import EmbeddedStore
from epigraph.graph.model import Episode, EpisodeStatus
from epigraph.graph.store import EpisodeWrite
from epigraph.ingestion.claims import Leases, holding
from epigraph.ingestion.ingestor import Ingestor
from epigraph.testing import HashEmbedder, ScriptedLLM, ScriptedReply
from tests.support.world import T0, F, Turn, World, episode_of

NAMES = ["Alice", "Bob", "Carol", "Dave", "Erin", "Frank", "Grace", "Heidi"]
TEXTS = [f"{a} met {b}." for a, b in zip(NAMES[::2], NAMES[1::2], strict=True)]
WORLD = World(
    {t: Turn(t[:-1].split(" met "), [F(*t[:-1].split(" met "), "KNOWS", t.replace("met", "knows"))])
     for t in TEXTS},
    latency=0.05,  # every reply takes a while: two queues started together overlap on every episode
)  # fmt: skip


def quick() -> Leases:
    """A queue's own claims (its own owner): a minute long, looked at again every 20 ms when held."""
    return Leases(poll_s=0.02)


def runs(*llms: ScriptedLLM) -> Counter[str]:
    """Episode text -> how many times an extraction ran on it, over ``llms``."""
    return Counter(episode_of(c.variables) for llm in llms for c in llm.calls_for("extract_entities"))


@pytest.fixture
async def stores(tmp_path: Path, embedder: HashEmbedder) -> AsyncIterator[list[EmbeddedStore]]:
    """Two connections to one file: two processes' stores."""
    path = str(tmp_path / "graph.db")
    pair = [EmbeddedStore(path), EmbeddedStore(path)]
    for store in pair:
        await store.setup(embedder.dim)
    yield pair
    for store in pair:
        await store.close()


async def _ingest(queue: Ingestor, items: list[dict[str, object]]) -> list[ProgressEvent]:
    return [event async for event in queue.ingest(items)]


async def test_two_queues_on_one_file_spend_each_episodes_calls_once(
    stores: list[EmbeddedStore], embedder: HashEmbedder
) -> None:
    items = [
        {"content": t, "reference_time": T0 + timedelta(minutes=i), "group": "g"} for i, t in enumerate(TEXTS)
    ]
    llms = [WORLD.llm(), WORLD.llm()]
    queues = [Ingestor(store, llm, embedder, leases=quick()) for store, llm in zip(stores, llms, strict=True)]
    first, second = await asyncio.gather(*(_ingest(q, items) for q in queues))
    assert runs(*llms) == Counter(TEXTS)  # today both queues ran every episode: each text counted twice
    for uuid in {e.episode_uuid for e in first}:
        done = [e.result for e in (*first, *second) if isinstance(e, EpisodeDone) and e.episode_uuid == uuid]
        assert len(done) == 2 and sorted(r.skipped for r in done if r) == [
            False,
            True,
        ]  # ran once, skipped once
    assert any(isinstance(e, EpisodeWaiting) for e in (*first, *second))  # one found the other's claim
    stats = await stores[0].stats("g")
    assert (stats.episodes, stats.facts) == (len(TEXTS), len(TEXTS))


async def test_a_crashed_owners_claim_lapses_and_the_episode_then_runs_once(
    stores: list[EmbeddedStore], embedder: HashEmbedder
) -> None:
    store = stores[0]
    episode = Episode(group_id="g", content=TEXTS[0], reference_time=T0)
    await store.save_episode(episode)
    await store.claim_episode("g", episode.uuid, "crashed-process", 0.3)  # it died without releasing
    llm, events = WORLD.llm(), list[ProgressEvent]()
    result = await Ingestor(store, llm, embedder, leases=quick()).process(episode, emit=events.append)
    waited = [e for e in events if isinstance(e, EpisodeWaiting)]
    assert len(waited) == 1 and waited[0].owner == "crashed-process"
    first_step = next(i for i, e in enumerate(events) if isinstance(e, EntityExtracted))
    assert events.index(waited[0]) < first_step  # nothing ran while the claim was live
    assert result.ok and not result.skipped and runs(llm) == {TEXTS[0]: 1}
    # the run released its claim: another owner takes it at once
    claim = await stores[1].claim_episode("g", episode.uuid, "next", 60)
    assert claim is not None and claim.owner == "next"


async def test_an_episode_a_live_owner_finishes_is_skipped_without_a_call(
    stores: list[EmbeddedStore], embedder: HashEmbedder
) -> None:
    other, mine = stores
    episode = Episode(group_id="g", content=TEXTS[0], reference_time=T0)
    await other.save_episode(episode)
    await other.claim_episode("g", episode.uuid, "other-process", 60)
    llm, events = WORLD.llm(), asyncio.Queue[ProgressEvent]()
    queue = Ingestor(mine, llm, embedder, leases=quick())
    waiting = asyncio.create_task(queue.process(episode, emit=events.put_nowait))
    while not isinstance(await asyncio.wait_for(events.get(), 30), EpisodeWaiting):
        pass
    done = episode.model_copy(update={"status": EpisodeStatus.DONE})  # the other process finishes it
    assert await other.write_episode(EpisodeWrite(episode=done, unless_done=True))
    await other.release_episode("g", episode.uuid, "other-process")
    result = await asyncio.wait_for(waiting, 30)
    assert result.skipped and result.ok and llm.calls == []


async def test_a_run_longer_than_its_claim_keeps_it_and_releases_it_at_the_end(
    stores: list[EmbeddedStore],
) -> None:
    store, other = stores
    episode = Episode(group_id="g", content=TEXTS[0], reference_time=T0)
    await store.save_episode(episode)
    leases = Leases(seconds=1.5)  # renewed every 0.5 s
    assert (await store.claim_episode("g", episode.uuid, leases.owner, leases.seconds)) is not None
    async with holding(store, episode, leases):
        for _ in range(4):  # 4 s: well past the claim's own length
            await asyncio.sleep(1.0)
            claim = await other.claim_episode("g", episode.uuid, "other", 60)
            assert claim is not None and claim.owner == leases.owner
    claim = await other.claim_episode("g", episode.uuid, "other", 60)
    assert claim is not None and claim.owner == "other"


async def test_a_failed_run_releases_its_claim(stores: list[EmbeddedStore], embedder: HashEmbedder) -> None:
    store = stores[0]
    broken = ScriptedLLM({"*": ScriptedReply(error=LLMUnavailable("upstream 503"))})
    result = await Ingestor(store, broken, embedder, leases=quick()).add_episode(
        EpisodeInput(TEXTS[0], group_id="g", reference_time=T0), raise_on_failure=False
    )
    assert result.episode.status == EpisodeStatus.FAILED
    claim = await stores[1].claim_episode("g", result.episode.uuid, "other", 60)
    assert claim is not None and claim.owner == "other"
