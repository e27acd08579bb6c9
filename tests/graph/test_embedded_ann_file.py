"""The embedded store's saved approximate index (graph/embedded/ann_file.py): written next to the database,
read again on the next open instead of built, set right for rows written since; a removed or changed
vector deletes the file at its commit and an index that lost one is not written again; a stale or
damaged file is set right or built again, never trusted."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest

from epigraph.graph.embedded import EmbeddedStore, ann
from epigraph.graph.embedded.ann_file import SavedIndexes, fingerprints
from epigraph.graph.embedded.db import Db
from epigraph.graph.model import Fact
from epigraph.graph.store import EpisodeWrite
from tests.support.ann_world import FACTS, T0, clustered, top, write_facts
from tests.support.stores import DIM

pytestmark = pytest.mark.skipif(not ann.AVAILABLE, reason="usearch is not installed (epigraph[ann])")

SIZE = 100  # exact_below: the facts have an index, the entities and episodes none
ROWS = 10 * FACTS  # five times ann.CANDIDATES: a search takes the index's candidates, not every row


@pytest.fixture
async def saved(tmp_path: Path, group: str) -> AsyncIterator[tuple[str, np.ndarray]]:
    """A closed store whose facts' index was saved, and the vectors of its facts."""
    path = str(tmp_path / "graph.db")
    store = EmbeddedStore(path, exact_below=SIZE)
    await store.setup(embedding_dim=DIM)
    vectors = clustered(np.random.default_rng(11), ROWS, DIM)
    await write_facts(store, group, vectors)
    assert await store.prepare_vectors([group]) == 1
    await store.close()
    yield path, vectors


@asynccontextmanager
async def opened(path: str, group: str) -> AsyncIterator[EmbeddedStore]:
    """The store on ``path`` with the group's indexes ready (read or built), closed at the end."""
    store = EmbeddedStore(path, exact_below=SIZE)
    try:
        await store.prepare_vectors([group])
        yield store
    finally:
        await store.close()


def facts_file(path: str, group: str) -> Path:
    found = SavedIndexes(path).path("facts", group)
    assert found is not None
    return found


def adopted_at_once(path: str, group: str) -> bool:
    """Whether a fresh open searches the facts through an index from its first search (no build)."""
    db = Db(path, create=False, exact_below=SIZE)
    try:
        index = db.vector_index("facts", group)
        assert index is not None
        return index.saved and index.approximate() is not None
    finally:
        db.close()


async def answers(path: str, group: str, queries: np.ndarray, exact_below: int | None) -> list[list[str]]:
    store = EmbeddedStore(path, exact_below=exact_below)
    try:
        return [await top(store, group, q) for q in queries]
    finally:
        await store.close()


async def test_a_saved_index_is_read_again_instead_of_built(
    saved: tuple[str, np.ndarray], group: str
) -> None:
    path, _ = saved
    assert facts_file(path, group).exists()
    assert not SavedIndexes(path).exists("entities", group)  # too few rows for an index
    assert adopted_at_once(path, group)
    queries = clustered(np.random.default_rng(12), 10, DIM)
    assert await answers(path, group, queries, SIZE) == await answers(path, group, queries, None)


async def test_rows_written_since_are_added_and_the_file_kept(
    saved: tuple[str, np.ndarray], group: str
) -> None:
    path, _ = saved
    more = clustered(np.random.default_rng(13), 30, DIM)
    async with opened(path, group) as store:
        await write_facts(store, group, more[:10])  # new rows only
        assert facts_file(path, group).exists()
        assert (await top(store, group, more[3]))[0] == "fact 3"  # the new one (its vector exactly)
    assert adopted_at_once(path, group)  # written again at close, with the new rows
    with np.load(facts_file(path, group)) as data:
        assert len(data["keys"]) == ROWS + 10


async def test_a_fact_rewritten_with_its_own_vector_keeps_the_file(
    saved: tuple[str, np.ndarray], group: str
) -> None:
    """A fact ended (invalid_at set) is written again with the same vector: nothing left the index."""
    path, _ = saved
    async with opened(path, group) as store:
        query = clustered(np.random.default_rng(14), 1, DIM)[0]
        [hit] = await store.search_facts_vector([group], query.tolist(), 1)
        await rewrite(store, group, hit.item.model_copy(update={"invalid_at": T0 + timedelta(days=1)}))
        assert facts_file(path, group).exists()
    assert adopted_at_once(path, group)


async def test_a_changed_vector_deletes_the_file_and_the_index_is_not_written_again(
    saved: tuple[str, np.ndarray], group: str
) -> None:
    path, vectors = saved
    async with opened(path, group) as store:
        [hit] = await store.search_facts_vector([group], vectors[7].tolist(), 1)
        await rewrite(store, group, hit.item.model_copy(update={"text_embedding": (-vectors[7]).tolist()}))
        assert not facts_file(path, group).exists()  # at the commit
        assert "fact 7" not in await top(store, group, vectors[7])
        assert await store.prepare_vectors([group]) == 1
        assert not facts_file(path, group).exists()  # the index holds the old vector's bytes: not written
    assert not facts_file(path, group).exists()
    queries = np.vstack([vectors[:3], -vectors[7:8]])
    assert await answers(path, group, queries, SIZE) == await answers(path, group, queries, None)


async def test_a_file_holding_a_removed_or_changed_vector_is_set_right_and_deleted(
    saved: tuple[str, np.ndarray], group: str, tmp_path: Path
) -> None:
    """As after a crash between a commit and its file's deletion: the file is put back."""
    path, vectors = saved
    kept = tmp_path / "kept.npz"
    shutil.copy(facts_file(path, group), kept)
    store = EmbeddedStore(path, exact_below=SIZE)
    try:
        first_ten = [(await store.search_facts_vector([group], v.tolist(), 1))[0].item for v in vectors[:10]]
        removed = {fact.uuid for fact in first_ten}
        await store.delete_episode(group, first_ten[0].episodes[0])  # facts 0-9
        [hit] = await store.search_facts_vector([group], vectors[20].tolist(), 1)
        await rewrite(store, group, hit.item.model_copy(update={"text_embedding": (-vectors[20]).tolist()}))
    finally:
        await store.close()
    exact = EmbeddedStore(path, exact_below=None)
    try:
        [now] = await exact.search_facts_vector([group], (-vectors[20]).tolist(), 1)
    finally:
        await exact.close()
    shutil.copy(kept, facts_file(path, group))
    db = Db(path, create=False, exact_below=SIZE)
    try:
        index = db.vector_index("facts", group)
        assert index is not None and index.approximate() is not None  # read, set right, no build
        assert not index.saved and not facts_file(path, group).exists()  # the file's index is not this one
        [(first, _)] = next(index.ranked(-vectors[20], 1))
        assert first == now.item.uuid  # fact 20 where it is now: the file's label for it was dropped
        assert not removed & {key for q in vectors[:10] for key, _ in next(index.ranked(q, 10))}
    finally:
        db.close()


async def test_a_damaged_file_is_built_again(saved: tuple[str, np.ndarray], group: str) -> None:
    path, vectors = saved
    facts_file(path, group).write_bytes(b"not an index")
    assert not adopted_at_once(path, group)
    assert not facts_file(path, group).exists()
    async with opened(path, group) as store:
        assert await store.prepare_vectors([group]) == 1  # built, and saved again
        assert facts_file(path, group).exists()
    assert await answers(path, group, vectors[:5], SIZE) == await answers(path, group, vectors[:5], None)


def test_fingerprints_follow_the_bytes_of_each_row() -> None:
    rows = np.random.default_rng(15).standard_normal((50, 7)).astype(np.float32)
    prints = fingerprints(rows)
    assert len(set(prints.tolist())) == 50
    changed = rows.copy()
    changed[3, 6] = np.nextafter(changed[3, 6], np.float32(np.inf))  # one bit of one row
    assert [i for i in range(50) if fingerprints(changed)[i] != prints[i]] == [3]


async def rewrite(store: EmbeddedStore, group: str, fact: Fact) -> None:
    """Write ``fact`` again, with the episode it came from."""
    episode = await store.get_episode(group, fact.episodes[0])
    assert episode is not None
    await store.write_episode(EpisodeWrite(episode=episode, facts=[fact]))


def test_an_in_memory_database_saves_nothing() -> None:
    assert SavedIndexes(":memory:").path("facts", "g") is None
