"""``Ingestor.finish_batch``: how the Kafka worker ends a lane's batch of episodes run one at a time with
``process`` (``scale/worker.py``'s ``_end_batch``). Episodes whose entities want a model summary in
``batch`` mode leave them owed; ending the batch pays what each of its groups owes, charged to the
group's last episode that ran, then runs the after-batch work. Marks a killed run left (a crashed
worker's) are paid when the group's episodes come again, though they are skipped. Real SQLite."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta

from epigraph.episodes.events import EpisodeResult, EpisodeUpdated, ProgressEvent, SummaryUpdated
from epigraph.episodes.inputs import EpisodeInput
from epigraph.graph.embedded import EmbeddedStore
from epigraph.graph.model import Episode
from epigraph.ingestion.ingestor import Ingestor
from epigraph.pipeline.options import IngestOptions, SummaryOptions
from epigraph.prompts.protocol import LLM
from epigraph.testing import HashEmbedder
from tests.support.meetings import MET_BOB, MET_FOUR, WORLD, ticking
from tests.support.world import T0

BATCH = IngestOptions(summaries=SummaryOptions(mode="batch"), clock=ticking())


class AfterBatchSeen:
    """An ``AfterBatch`` that keeps the episodes it was given."""

    def __init__(self) -> None:
        self.given: list[list[str]] = []

    async def __call__(self, llm: LLM, results: Sequence[EpisodeResult]) -> Sequence[ProgressEvent]:
        self.given.append([r.episode.content for r in results])
        return []

    async def after_removal(self, llm: LLM, episode: Episode) -> None:
        self.given.append([f"removed: {episode.content}"])


async def run(ingestor: Ingestor, group_id: str, *texts: str) -> list[EpisodeResult]:
    """``texts`` as the worker's lane runs them: each through ``process``, a day apart."""
    items = [
        EpisodeInput(t, group_id=group_id, reference_time=T0 + timedelta(days=i)) for i, t in enumerate(texts)
    ]
    return [await ingestor.process(item.to_episode()) for item in items]


async def summary(store: EmbeddedStore, group_id: str, name: str) -> str:
    [found] = (await store.entities_by_names(group_id, [name]))[name]
    return found.summary


async def test_ending_a_batch_pays_what_each_group_owes_then_runs_the_after_batch_work() -> None:
    store, seen = EmbeddedStore(":memory:"), AfterBatchSeen()
    await store.setup(embedding_dim=64)
    ingestor = Ingestor(store, WORLD.llm(), HashEmbedder(dim=64), BATCH, after_batch=seen)
    results = [*await run(ingestor, "g", MET_BOB, MET_FOUR), *await run(ingestor, "h", MET_BOB, MET_FOUR)]
    [alice_g] = await store.owed_summaries("g")
    [alice_h] = await store.owed_summaries("h")
    assert not (await summary(store, "g", "Alice")).startswith("Alice: "), "composed until paid"

    events = await ingestor.finish_batch(results)

    assert await store.owed_summaries("g") == [] and await store.owed_summaries("h") == []
    for group_id in ("g", "h"):
        paid = await summary(store, group_id, "Alice")
        assert paid.startswith("Alice: ") and "Alice met Bob." in paid, "the model's summary"
    assert {(e.group_id, e.entity_uuid) for e in events if isinstance(e, SummaryUpdated)} == {
        ("g", alice_g),
        ("h", alice_h),
    }
    charged = [e for e in events if isinstance(e, EpisodeUpdated)]
    assert [(e.group_id, e.episode_uuid) for e in charged] == [
        ("g", results[1].episode.uuid),
        ("h", results[3].episode.uuid),
    ]
    for event in charged:
        assert event.result is not None
        calls = event.result.episode.report.llm_calls
        stored = await store.get_episode(event.group_id, event.episode_uuid)
        assert stored is not None and stored.report.llm_calls == calls > results[1].report.llm_calls
    assert seen.given == [[MET_BOB, MET_FOUR, MET_BOB, MET_FOUR]]


async def test_marks_a_killed_run_left_are_paid_when_its_episodes_come_again() -> None:
    store = EmbeddedStore(":memory:")
    await store.setup(embedding_dim=64)
    crashed = Ingestor(store, WORLD.llm(), HashEmbedder(dim=64), BATCH)
    await run(crashed, "g", MET_BOB, MET_FOUR)  # its batch never ended
    assert len(await store.owed_summaries("g")) == 1

    next_owner = Ingestor(store, WORLD.llm(), HashEmbedder(dim=64), BATCH)
    again = await run(next_owner, "g", MET_BOB, MET_FOUR)
    assert all(r.skipped for r in again), "redelivered: done already"
    await next_owner.finish_batch(again)

    assert await store.owed_summaries("g") == []
    assert (await summary(store, "g", "Alice")).startswith("Alice: ")


async def test_a_removal_refreshes_what_it_left_stale_and_hands_the_episode_to_the_after_batch_work() -> None:
    """Removal's upkeep goes through the queue: the episode is gone, its entities' summaries written
    again, and the queue's after-batch work is told which episode went (``overview.Upkeep`` resets its
    conversation), once, after the removal."""
    store, seen = EmbeddedStore(":memory:"), AfterBatchSeen()
    await store.setup(embedding_dim=64)
    ingestor = Ingestor(store, WORLD.llm(), HashEmbedder(dim=64), BATCH, after_batch=seen)
    bob, four = await run(ingestor, "g", MET_BOB, MET_FOUR)
    await ingestor.finish_batch([bob, four])

    removal = await ingestor.remove_episode("g", four.episode.uuid)

    assert await store.get_episode("g", four.episode.uuid) is None
    assert removal.deletion.touched_entities and "Alice" in {e.name for e in removal.entities}
    assert await summary(store, "g", "Alice") == "Alice met Bob."
    assert seen.given == [[MET_BOB, MET_FOUR], [f"removed: {MET_FOUR}"]]
