"""The embedded store's approximate vector index (graph/embedded/ann.py, usearch): on a small group its
answers are brute force's; on a larger synthetic group recall@10 against brute force is at least 0.95;
rows written, changed or removed while it is built, or after, are searched as they are now; a deleted
episode's facts and a forgotten subject leave it, and no saved index holds her; a reopened store
answers the same (its saved index: test_embedded_ann_file.py)."""

from __future__ import annotations

import os
import threading
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest

from epigraph.graph.embedded import EmbeddedStore, ann
from epigraph.graph.embedded.vectors import VectorIndex
from epigraph.graph.store import EVERYTHING, FactFilter
from epigraph.graph.temporal import TimeFilter
from epigraph.testing import HashEmbedder
from tests.support.ann_world import FACTS, T0, clustered, top, write_facts
from tests.support.forget_world import NAME, applied, build, found_in_files, preview, request
from tests.support.stores import DIM

pytestmark = pytest.mark.skipif(not ann.AVAILABLE, reason="usearch is not installed (epigraph[ann])")


def keys(index: VectorIndex, query: np.ndarray, *, exact: bool = False, first: int = 10) -> list[str]:
    return [key for key, _ in next(index.ranked(query, first, exact=exact))][:first]


def ready(index: VectorIndex) -> None:
    building = index.indexing()
    assert building is not None
    building.result()
    assert index.approximate() is not None


def test_a_small_group_is_searched_exactly_and_the_index_finds_the_same() -> None:
    rng = np.random.default_rng(1)
    data = clustered(rng, 200)
    below, above = VectorIndex(64, exact_below=201), VectorIndex(64, exact_below=100)
    for i, row in enumerate(data):
        below.upsert(f"k{i:04d}", row)
        above.upsert(f"k{i:04d}", row)
    assert below.indexing() is None and below.approximate() is None  # below the size: brute force only
    ready(above)
    for query in clustered(rng, 20):
        assert keys(above, query) == keys(above, query, exact=True) == keys(below, query)


def test_a_group_the_index_would_walk_whole_is_searched_exactly() -> None:
    """Asked for as many candidates as there are rows, a graph walk can only miss some (a CI machine's
    index once missed one of 200 rows): such a search is brute force's, whatever the index holds."""
    rng = np.random.default_rng(1)
    index = VectorIndex(64, exact_below=100)
    for i, row in enumerate(clustered(rng, 200)):
        index.upsert(f"k{i:04d}", row)
    ready(index)
    built = index.approximate()
    assert built is not None
    for query in clustered(rng, 5):
        best = keys(index, query, exact=True)
        built.remove(int(best[0][1:]))  # as a walk that misses it; labels follow the order of insertion
        assert keys(index, query) == best


def test_recall_at_10_on_a_larger_group_is_at_least_095() -> None:
    rng = np.random.default_rng(2)
    index = VectorIndex(64, exact_below=1_000)
    for i, row in enumerate(clustered(rng, 20_000)):
        index.upsert(f"k{i:05d}", row)
    ready(index)
    queries = clustered(rng, 50)
    recall = [len(set(keys(index, q)) & set(keys(index, q, exact=True))) / 10 for q in queries]
    assert float(np.mean(recall)) >= 0.95


MOVED = np.random.default_rng(30).standard_normal(64) * 10


def changed(index: VectorIndex, data: np.ndarray) -> None:
    """Rows added (the matrix outgrows the one the build reads), one changed, some removed (the last
    rows move into their places)."""
    for i in range(300, 500):
        index.upsert(f"k{i:04d}", data[i])
    index.upsert("k0007", MOVED)
    for i in range(100, 150):
        index.remove(f"k{i:04d}")


def test_rows_changed_while_the_index_is_built_are_searched_as_they_are_now() -> None:
    """The build (a daemon thread) waits for the held lock while rows are added, changed and removed:
    the index ready afterwards knows each as it is now."""
    rng = np.random.default_rng(3)
    data = clustered(rng, 500)
    index = VectorIndex(64, exact_below=100)
    for i, row in enumerate(data[:300]):
        index.upsert(f"k{i:04d}", row)
    ann.ONE_BUILD.acquire()  # the build waits for it
    try:
        building = index.indexing()
        assert building is not None
        builders = [t for t in threading.enumerate() if t.name == "epigraph-ann"]
        assert builders and all(t.daemon for t in builders)  # a process done does not wait for it
        changed(index, data)
    finally:
        ann.ONE_BUILD.release()
    building.result()
    built = index.approximate()
    assert built is not None and len(built) == len(index) == 450
    assert keys(index, MOVED, first=1) == ["k0007"]
    for i in (0, 299, 300, 499):
        expected = MOVED if i == 7 else data[i]
        assert keys(index, expected, first=1) == [f"k{i:04d}"]
    for i in range(100, 150):
        assert f"k{i:04d}" not in keys(index, data[i], first=50)
    index.remove("k0300")  # after the build: out of the index at once
    assert "k0300" not in keys(index, data[300], first=50)


def test_a_group_that_shrinks_below_the_size_gives_its_index_up() -> None:
    index = VectorIndex(8, exact_below=50)
    for i, row in enumerate(np.random.default_rng(4).standard_normal((60, 8))):
        index.upsert(f"k{i}", row)
    ready(index)
    for i in range(20):
        index.remove(f"k{i}")
    assert index.approximate() is None and index.indexing() is None


# --- through the store ---------------------------------------------------------------------------------

@pytest.fixture
async def indexed(tmp_path: Path) -> AsyncIterator[EmbeddedStore]:
    store = EmbeddedStore(str(tmp_path / "graph.db"), exact_below=100)
    await store.setup(embedding_dim=DIM)
    yield store
    await store.close()


async def test_the_store_answers_through_the_index_as_brute_force_and_again_once_reopened(
    indexed: EmbeddedStore, group: str
) -> None:
    rng = np.random.default_rng(5)
    await write_facts(indexed, group, clustered(rng, FACTS, DIM))
    queries = clustered(rng, 10, DIM)
    assert await indexed.prepare_vectors([group]) == 1  # the facts' (100+ rows); entities and episodes fewer
    through_index = [await top(indexed, group, q) for q in queries]
    exact = EmbeddedStore(indexed.path, exact_below=None)  # the same file, brute force only
    try:
        assert [await top(exact, group, q) for q in queries] == through_index
        as_of = FactFilter(time=TimeFilter(as_of=T0 + timedelta(minutes=FACTS // 2)))
        assert [await top(exact, group, q, as_of) for q in queries] == [
            await top(indexed, group, q, as_of) for q in queries
        ]
    finally:
        await exact.close()
    await indexed.close()
    reopened = EmbeddedStore(indexed.path, exact_below=100)
    try:
        assert await reopened.prepare_vectors([group]) == 1
        assert [await top(reopened, group, q) for q in queries] == through_index
    finally:
        await reopened.close()


async def test_a_deleted_episodes_facts_leave_the_index(indexed: EmbeddedStore, group: str) -> None:
    rng = np.random.default_rng(6)
    vectors = clustered(rng, FACTS, DIM)
    episodes = await write_facts(indexed, group, vectors)
    assert await indexed.prepare_vectors([group]) == 1
    assert (await top(indexed, group, vectors[3]))[0] == "fact 3"
    await indexed.delete_episode(group, episodes[0].uuid)  # facts 0-9 were only its
    found = [text for k in range(10) for text in await top(indexed, group, vectors[k])]
    assert found and not {f"fact {k}" for k in range(10)} & set(found)


async def test_forgetting_through_the_index_leaves_her_nowhere(tmp_path: Path, group: str) -> None:
    """Every group of the forget world has an index (``exact_below=1``), saved before the forgetting: she
    is out of each, and no saved index holds her (those she was taken out of are not written again)."""
    embedder = HashEmbedder(dim=DIM)
    store = EmbeddedStore(str(tmp_path / "graph.db"), exact_below=1)
    try:
        await store.setup(embedding_dim=DIM)
        world = await build(store, group, embedder)
        assert await store.prepare_vectors([group]) >= 2
        assert len(list((tmp_path / "graph.db.ann").iterdir())) >= 2  # saved, her vectors in them
        vector = [float(x) for x in (await embedder.embed([NAME]))[0]]
        [hit] = await store.search_entities_vector([group], vector, limit=1)
        assert hit.item.uuid == world.zaria.uuid
        req = request(world)
        await store.forget(await applied(store, embedder, req, await preview(store, req)))
        assert await store.prepare_vectors([group]) >= 2
        entities = {h.item.uuid for h in await store.search_entities_vector([group], vector, limit=100)}
        facts = await store.search_facts_vector([group], vector, limit=100, flt=FactFilter(time=EVERYTHING))
        gone = {world.facts[name].uuid for name in ("married", "worked", "nurse")}
        assert world.zaria.uuid not in entities and entities
        assert facts and not gone & {h.item.uuid for h in facts}
    finally:
        await store.close()
    assert not any(found_in_files(Path(store.path)).values())
    assert set(os.listdir(tmp_path)) <= {"graph.db", "graph.db-wal", "graph.db-shm", "graph.db.ann"}
    saved = [np.load(p) for p in (tmp_path / "graph.db.ann").iterdir()]
    held = {key.decode() for data in saved for key in data["keys"].tolist()}
    assert not held & {world.zaria.uuid, *gone}
