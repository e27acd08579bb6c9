"""Three ``epigraph worker`` processes on a real Kafka and a real Neo4j, 8 groups x 40 episodes, the LLM
the scripted city world behind the local test server: one worker is killed with ``kill -9`` mid-run and
a worker started later takes its partitions over. Every episode is written exactly once (logged ``done``
by at most one worker; a run cut after its write landed is found done and skipped by the next owner), in
its group's order: every group's graph (facts retired by later moves included, every episode ``done``)
equals the graph one process builds from the same episodes."""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from bench.shared.scale_harness import (
    CityWorld,
    WorkerProcess,
    canonical,
    create_topic,
    episodes,
    publish,
    wait_for,
    worker_env,
)
from bench.shared.serve_harness import LLM_KEY, LLMThread
from epigraph.client import KnowledgeGraph, store_from_settings
from epigraph.config import Settings
from epigraph.episodes.inputs import EpisodeInput
from tests.support.kafka import neo4j_uri, one_group_a_partition

pytestmark = [pytest.mark.neo4j, pytest.mark.kafka]

GROUPS, PER_GROUP = 8, 40


def _done(workers: list[WorkerProcess], event: str = "episode.done") -> list[str]:
    return [e["uuid"] for w in workers for e in w.events(event)]


def _finished(workers: list[WorkerProcess]) -> set[str]:
    """Episodes a worker wrote, or found written (skipped): one whose run was cancelled after its write
    had landed (a rebalance's abandon, a kill) is logged by the next owner as skipped."""
    return set(_done(workers)) | set(_done(workers, "episode.skipped"))


def _reference(url: str, items: list[EpisodeInput], groups: list[str], out: dict[str, Any]) -> None:
    """The single-process graph: the same episodes through one Ingestor, each group in order, in memory;
    and the first group's episodes in reverse order (``backwards``: the dump must see the difference)."""

    async def build() -> None:
        settings = Settings(db_path=":memory:", llm_base_url=url, llm_api_key=LLM_KEY,  # type: ignore[arg-type]
                            llm_model="fake-model", embedder="hash")  # fmt: skip
        backwards = [replace(i, group_id="backwards") for i in reversed(items) if i.group_id == groups[0]]
        async with KnowledgeGraph(settings) as kg:
            for item in [*items, *backwards]:
                assert (await kg.ingestor.process(item.to_episode())).ok
            for group in [*groups, "backwards"]:
                out[group] = await canonical(kg.store, group)

    asyncio.run(build())


async def _kafka_graph(uri: str, groups: list[str]) -> dict[str, Any]:
    store = store_from_settings(Settings.from_env(neo4j_uri=uri))
    try:
        return {group: await canonical(store, group) for group in groups}
    finally:
        await store.close()


def test_workers_survive_kill_9_and_a_late_joiner_and_build_the_single_process_graph(
    kafka_bootstrap: str, tmp_path: Path
) -> None:
    uri, run = neo4j_uri(), uuid.uuid4().hex[:8]
    topic, members = f"episodes-{run}", f"workers-{run}"
    groups = one_group_a_partition(f"k{run}", GROUPS)  # a topic of GROUPS partitions: each worker has work
    items = episodes(groups, PER_GROUP)
    total = len(items)
    with LLMThread(CityWorld()) as llm:
        asyncio.run(create_topic(kafka_bootstrap, topic, GROUPS))
        asyncio.run(publish(kafka_bootstrap, topic, items))
        reference: dict[str, Any] = {}
        builder = threading.Thread(target=_reference, args=(llm.url, items, groups, reference))
        builder.start()
        env = worker_env(llm.url, uri, EPIGRAPH_CLAIM_SECONDS="10")  # the killed one's claims lapse in 10 s
        workers = [
            WorkerProcess(env, tmp_path / f"worker{i}.log", kafka_bootstrap, topic, members) for i in range(3)
        ]
        try:
            workers[0].start(), workers[1].start()
            wait_for(
                lambda: len(workers[0].events("episode.done")) >= 10, 300, "worker 0 to write 10 episodes"
            )
            workers[0].kill()
            at_kill = len(_finished(workers))
            workers[2].start()
            wait_for(lambda: len(_finished(workers)) >= total, 900, f"{total} episodes done")
        finally:
            for worker in workers:
                worker.stop()
            builder.join(300)

    assert 10 <= at_kill < total, "the kill must land mid-run"
    done = Counter(_done(workers))
    assert set(done.values()) == {1}, "an episode was written twice"
    assert len(_finished(workers)) == total
    assert workers[2].events("partitions.assigned") and workers[2].events("episode.done"), "no takeover"
    assert not any(w.events("episode.dead_lettered") for w in workers)
    assert reference["backwards"]["facts"] != reference[groups[0]]["facts"], "the dump cannot see order"
    graph = asyncio.run(_kafka_graph(uri, groups))
    for group in groups:
        assert graph[group] == reference[group], group
        assert graph[group]["counts"][0] == PER_GROUP
