"""A store that is unavailable for a moment while an episode runs (found by bench/robustness/fault.py's
``neo4j_restart``: a read failed while the Neo4j server's database was starting, the episode was saved
``failed``, the group's later episodes ran, and the retried episode then landed after them: a move
retired by an earlier one). The episode is not the cause: it stays ``pending``, the batch stops with the
store's error itself, nothing of the group runs ahead of it, and a second run completes them in order,
with the graph an uninterrupted run builds.

The store is a real SQLite file behind a delegating double that fails one read on cue (the outage).
"""

from __future__ import annotations

import contextlib
from dataclasses import replace
from datetime import timedelta
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from epigraph.episodes.inputs import EpisodeInput
from epigraph.errors import StoreUnavailable
from epigraph.graph.embedded import EmbeddedStore
from epigraph.graph.model import EpisodeStatus
from epigraph.graph.store import EVERYTHING, FactFilter, GraphStore
from epigraph.ingestion.ingestor import Ingestor
from epigraph.pipeline.options import FactOptions, IngestOptions
from epigraph.testing import HashEmbedder
from tests.support.world import T0, F, Turn, World

MOVES = ["Alice: I moved to Paris.", "Alice: I moved to Lisbon.", "Alice: I moved to Oslo."]
CITY = {m: m.removesuffix(".").rsplit(" ", 1)[1] for m in MOVES}
OPTIONS = IngestOptions(facts=FactOptions(similarity_floor=0.0), in_flight=1)
"""One at a time: the outage meets the episode's own run (with episodes in flight it may meet a run
ahead instead, whose failure costs nothing: ``test_an_outage_during_runs_ahead_...``)."""


class OutageStore:
    """``store`` as it is, except that the first ``facts_around`` after :meth:`fail_next_read` raises
    StoreUnavailable (a database that is starting), as the Neo4j store does then."""

    def __init__(self, store: GraphStore) -> None:
        self._store, self._armed = store, False

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    def fail_next_read(self) -> None:
        self._armed = True

    async def facts_around(self, *args: Any, **kwargs: Any) -> Any:
        if self._armed:
            self._armed = False
            raise StoreUnavailable("neo4j read failed: DatabaseUnavailable (the database is starting)")
        return await self._store.facts_around(*args, **kwargs)


def _world(outage: OutageStore | None) -> World:
    turns = {
        m: Turn(["Alice", CITY[m]], [F("Alice", CITY[m], "LIVES_IN", f"Alice lives in {CITY[m]}.")])
        for m in MOVES
    }
    contradicts = {f"Alice lives in {CITY[b]}.": [f"Alice lives in {CITY[a]}."] for a, b in pairwise(MOVES)}
    world = World(turns=turns, contradicts=contradicts)
    if outage is not None:
        once = [True]

        def outage_during_lisbon(request: Any) -> str:
            if "Lisbon" in str(request.variables) and once and once.pop():
                outage.fail_next_read()  # the next read of this episode's first run fails
            return world.extract_facts(request.variables)

        world.overrides["extract_facts"] = outage_during_lisbon
    return world


def _items() -> list[EpisodeInput]:
    return [
        EpisodeInput(m, T0 + timedelta(minutes=i), group_id="g", episode_id=f"move-{i}")
        for i, m in enumerate(MOVES)
    ]


async def _graph(store: Any) -> list[tuple[Any, ...]]:
    found = await store.entities_by_names("g", ["Alice"])
    ids = [e.uuid for e in found["Alice"]]
    facts = await store.facts_around("g", ids, FactFilter(time=EVERYTHING))
    return sorted((f.text, f.valid_at, f.invalid_at, f.expired_at is not None) for f in facts)


async def test_a_store_outage_leaves_the_episode_pending_and_its_group_in_order(tmp_path: Path) -> None:
    embedder = HashEmbedder(dim=64)
    async with EmbeddedStore(str(tmp_path / "ref.db")) as ref_store:
        await ref_store.setup(embedder.dim)
        reference = Ingestor(ref_store, _world(None).llm(), embedder, OPTIONS)
        assert all(r.ok for r in await reference.add_episodes(_items()))
        expected = await _graph(ref_store)
    async with EmbeddedStore(str(tmp_path / "g.db")) as real:
        await real.setup(embedder.dim)
        store = OutageStore(real)
        ingestor = Ingestor(store, _world(store).llm(), embedder, OPTIONS)  # type: ignore[arg-type]
        with pytest.raises(StoreUnavailable, match="DatabaseUnavailable"):
            await ingestor.add_episodes(_items())
        status = {e.content: e.status for e in await real.episodes("g", limit=10)}
        assert status[MOVES[0]] == EpisodeStatus.DONE
        assert status[MOVES[1]] == EpisodeStatus.PENDING  # not failed: the store failed, not the episode
        assert status.get(MOVES[2]) != EpisodeStatus.DONE  # nothing of the group ran ahead of it
        assert all(r.ok for r in await ingestor.add_episodes(_items()))
        assert await _graph(real) == expected


async def test_an_outage_during_runs_ahead_fails_nothing_and_keeps_the_group_in_order(tmp_path: Path) -> None:
    """Episodes in flight (``in_flight=4``): the failed read meets a run ahead (its failure is dropped, the
    commit reads again) or a commit (the error raised, the episode pending); either way no episode is
    failed, none is done after a pending one, and once run again the graph is the one-at-a-time graph."""
    embedder = HashEmbedder(dim=64)
    ahead = replace(OPTIONS, in_flight=4)
    async with EmbeddedStore(str(tmp_path / "ref.db")) as ref_store:
        await ref_store.setup(embedder.dim)
        assert all(
            r.ok
            for r in await Ingestor(ref_store, _world(None).llm(), embedder, OPTIONS).add_episodes(_items())
        )
        expected = await _graph(ref_store)
    async with EmbeddedStore(str(tmp_path / "g.db")) as real:
        await real.setup(embedder.dim)
        store = OutageStore(real)
        ingestor = Ingestor(store, _world(store).llm(), embedder, ahead)  # type: ignore[arg-type]
        with contextlib.suppress(StoreUnavailable):
            await ingestor.add_episodes(_items())
        episodes = sorted(await real.episodes("g", limit=10), key=lambda e: e.created_at)
        statuses = [e.status for e in episodes]
        assert EpisodeStatus.FAILED not in statuses
        assert statuses == sorted(statuses, key=lambda s: s != EpisodeStatus.DONE), "done ones first"
        assert all(r.ok for r in await ingestor.add_episodes(_items()))
        assert await _graph(real) == expected
