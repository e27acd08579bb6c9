"""``epigraph index``: builds the group's approximate vector index, saves it next to the database, and a
second run reads it instead of building; a group too small for one, or a missing store, says so."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import numpy as np
import pytest

from epigraph.cli import main
from epigraph.config import Settings
from epigraph.graph.embedded import EmbeddedStore, ann
from epigraph.graph.embedded.ann_file import SavedIndexes
from tests.support.ann_world import clustered, write_facts
from tests.support.stores import DIM

Capsys = pytest.CaptureFixture[str]
ENV = {"EPIGRAPH_EMBEDDER": "hash", "HF_HUB_OFFLINE": "1", "EPIGRAPH_EXACT_BELOW": "100"}


def a_store(path: Path, group: str, facts: int) -> None:
    async def write() -> None:
        store = EmbeddedStore(str(path))
        await store.setup(embedding_dim=DIM)
        try:
            await write_facts(store, group, clustered(np.random.default_rng(3), facts, DIM))
        finally:
            await store.close()

    asyncio.run(write())


def index(capsys: Capsys, db: Path, group: str) -> tuple[int, dict[str, object]]:
    code = main(["--db", str(db), "--group", group, "--json", "index"], environ=ENV)
    return code, json.loads(capsys.readouterr().out)


@pytest.mark.skipif(not ann.AVAILABLE, reason="usearch is not installed (epigraph[ann])")
def test_index_builds_and_saves_the_groups_index_and_reads_it_again(tmp_path: Path, capsys: Capsys) -> None:
    db = tmp_path / "graph.db"
    a_store(db, "big", 200)  # 200 facts: an index at EPIGRAPH_EXACT_BELOW=100; 40 entities, 20 episodes
    code, out = index(capsys, db, "big")
    assert (code, out["indexes_ready"], out["group_id"]) == (0, 1, "big")
    saved = SavedIndexes(str(db)).path("facts", "big")
    assert saved is not None and saved.exists()
    written = saved.stat().st_mtime_ns
    code, out = index(capsys, db, "big")
    assert (code, out["indexes_ready"]) == (0, 1)
    assert saved.stat().st_mtime_ns == written  # read and adopted as it was: not written again


def test_a_group_too_small_for_an_index_is_searched_exactly(tmp_path: Path, capsys: Capsys) -> None:
    db = tmp_path / "graph.db"
    a_store(db, "small", 20)
    code, out = index(capsys, db, "small")
    assert code == 0 and not out["indexes_ready"]
    assert "exactly" in str(out["note"])
    assert not (tmp_path / "graph.db.ann").exists() or not any((tmp_path / "graph.db.ann").iterdir())


def test_index_of_a_missing_store_is_an_error_and_creates_nothing(tmp_path: Path, capsys: Capsys) -> None:
    code = main(["--db", str(tmp_path / "none.db"), "index"], environ=ENV)
    assert code == 1 and "none.db" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


def test_the_settings_default_is_the_stores() -> None:
    assert Settings().exact_below == ann.EXACT_BELOW
