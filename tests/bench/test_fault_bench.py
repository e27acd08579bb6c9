"""bench/robustness/fault.py's harness on the embedded store, small: the ingesting child is killed (SIGKILL)
three times at random stages of its episodes, restarted each time, and the graph it ends with is the
reference graph, with nothing lost, duplicated or half-written and a sound SQLite file after every kill.
And the checks can fail: a store holding a record of an episode that is not done is reported half-written."""

from __future__ import annotations

import random
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bench.robustness import fault
from bench.robustness.fault_graph import snapshot
from bench.robustness.fault_harness import STAGES, KillLoop, start_world
from epigraph.graph.embedded import EmbeddedStore
from epigraph.graph.model import Entity, Episode, EpisodeStatus, Mention
from epigraph.graph.store import EpisodeWrite


@pytest.mark.parametrize("window", [False, True], ids=["one_at_a_time", "in_flight_4"])
def test_three_kills_on_the_embedded_store_lose_duplicate_and_half_write_nothing(
    tmp_path: Path, window: bool
) -> None:
    """Also with the child's episodes in flight (one batch, four at once: ``fault.windowed``): a kill
    lands among episodes run ahead and not committed."""
    world, llm = start_world()
    target = fault.embedded_target(tmp_path)
    with llm:
        loop = KillLoop(world, llm.url, tmp_path, episodes_per_round=6, rng=random.Random(3))
        tally = loop.run(
            fault.windowed(target) if window else target,
            kills=3,
            max_kills_per_round=3,
            uninterrupted=False,
        )
    assert tally.kills == 3
    assert sum(tally.per_stage[s] for s in STAGES) == 3
    assert (tally.lost, tally.duplicated, tally.half_written, tally.integrity_failures) == (0, 0, 0, 0)
    assert tally.diverged == 0, tally.problems
    assert tally.llm_calls >= tally.reference_llm_calls > 0


async def test_a_mention_by_an_episode_that_is_not_done_is_half_written(tmp_path: Path) -> None:
    when = datetime(2024, 1, 1, tzinfo=UTC)
    episode = Episode(
        group_id="g",
        uuid="00000000-0000-4000-8000-000000000001",
        content="Alice moved to Paris.",
        reference_time=when,
        status=EpisodeStatus.PENDING,
    )
    alice = Entity(group_id="g", uuid="00000000-0000-4000-9000-000000000001", name="Alice")
    async with EmbeddedStore(str(tmp_path / "g.db")) as store:
        await store.setup(4)
        mention = Mention(group_id="g", episode_uuid=episode.uuid, entity_uuid=alice.uuid)
        await store.write_episode(EpisodeWrite(episode=episode, entities=[alice], mentions=[mention]))
        found = await snapshot(store, "g")
    assert found.done == []
    assert any("not done" in p for p in found.half_written)
