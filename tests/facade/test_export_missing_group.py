"""Exporting a group the store holds nothing of is ``GroupNotFound``, on both stores: no empty dump of a
mistyped name (the file is not written); a group that holds something exports as before."""

from __future__ import annotations

from pathlib import Path

import pytest

from epigraph import GroupNotFound, KnowledgeGraph, NotFound
from epigraph.config import Settings
from epigraph.graph.store import GraphStore
from epigraph.testing import HashEmbedder
from tests.support.world import T0, World


async def test_a_group_not_in_the_store_is_not_exported(
    any_store: GraphStore, embedder: HashEmbedder, group: str, other_group: str, tmp_path: Path
) -> None:
    settings = Settings(db_path=":memory:")
    async with KnowledgeGraph(settings, store=any_store, llm=World().llm(), embedder=embedder) as kg:
        await kg.group(group).add_episode("Ann: I live in Oslo.", reference_time=T0)
        counts = await kg.group(group).transfer.export(tmp_path / "there.jsonl")
        assert counts[group]["episode"] == 1
        for handle, groups in ((kg.group(other_group), None), (kg.group(group), [group, other_group])):
            with pytest.raises(GroupNotFound) as missing:
                await handle.transfer.export(tmp_path / "missing.jsonl", groups=groups)
            assert isinstance(missing.value, NotFound) and missing.value.group_id == other_group
            assert f"no group {other_group!r} in the store" in str(missing.value)
            assert not (tmp_path / "missing.jsonl").exists()
