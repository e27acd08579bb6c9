"""``epigraph serve``'s retention passes (``service.retention_passes``): while the server runs, every
group's policy is applied at start and then every ``retention_every`` seconds; a group without a policy,
or whose episodes are all young enough, is left as it is."""

from __future__ import annotations

import asyncio
from pathlib import Path

from epigraph import KnowledgeGraph, Settings
from epigraph.graph.embedded import EmbeddedStore
from epigraph.serve import Keys, Limits
from epigraph.serve.intake import GroupRegistry, Intake
from epigraph.serve.service import ServerState, running
from epigraph.testing import HashEmbedder
from tests.support.forget_world import build


async def test_the_server_applies_every_groups_retention_on_its_schedule(tmp_path: Path) -> None:
    store = EmbeddedStore(str(tmp_path / "g.db"))
    kg = KnowledgeGraph(Settings(retention_every=0.05), store=store, embedder=HashEmbedder(dim=64))
    async with kg:
        for group in ("old", "kept", "none"):
            await build(store, group, kg.embedder)  # its episodes were said in March 2024
        await kg.group("old").forget.set_retention(30)
        await kg.group("kept").forget.set_retention(36_500)
        state = ServerState(kg, Keys({}), Limits(), Intake(kg, GroupRegistry(None)))
        async with running(state, close_graph=False):
            for _ in range(600):  # a pass at start, then every 50 ms
                if not await kg.group("old").episodes():
                    break
                await asyncio.sleep(0.05)
            await asyncio.sleep(0.2)  # a few passes more: nothing left to forget, no record written
        assert await kg.group("old").episodes() == []
        [record] = await kg.group("old").forget.history()
        assert record.call == "retention" and record.counts["episodes_deleted"] == 3
        for group in ("kept", "none"):
            assert (
                len(await kg.group(group).episodes()) == 3
                and await kg.group(group).forget.history() == []
            )
