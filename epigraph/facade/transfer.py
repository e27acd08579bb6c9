"""Export and load (:mod:`epigraph.transfer`), as ``kg.transfer`` (or ``kg.group("alice").transfer``):
groups as a JSON Lines dump (docs/dump-format.md), and a dump into this graph's store. Both need a
store with the whole-groups role (``graph.store.WholeGroups``; load also reads corrections and derived
views: ``TransferStore``): :class:`~epigraph.errors.StoreRoleMissing` otherwise."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Sequence
from contextlib import aclosing
from pathlib import Path

from ..graph.roles import role
from ..graph.store import TransferStore, WholeGroups
from ..transfer import Dump, LoadReport, export_lines, load
from ..transfer.files import read_dump, write_dump
from .parts import Graph, opened


class Transfer:
    """The handle's group (or others named) written out as a dump, and a dump loaded in."""

    def __init__(self, graph: Graph, group_id: str) -> None:
        self._graph, self.group_id = graph, group_id

    async def _groups(self, groups: str | Sequence[str] | None) -> list[str]:
        if groups is None:
            return [self.group_id]
        if groups == "*":
            return await role(self._graph.store, WholeGroups, feature='export of "*"').groups()
        return [groups] if isinstance(groups, str) else list(dict.fromkeys(groups))

    async def export_lines(
        self, *, groups: str | Sequence[str] | None = None, vectors: bool = False
    ) -> AsyncGenerator[str, None]:
        """The dump of ``groups`` (default: the handle's group; ``"*"``: every group) as JSON Lines, line
        by line, from one consistent read of the store (docs/dump-format.md); embeddings with
        ``vectors``."""
        g = await opened(self._graph)
        chosen = await self._groups(groups)
        store = role(g.store, WholeGroups, feature="export")
        lines = export_lines(store, chosen, vectors=vectors, embedder=g.embedder)
        async with aclosing(lines) as dump:
            async for line in dump:
                yield line

    async def export(
        self, path: str | Path, *, groups: str | Sequence[str] | None = None, vectors: bool = False
    ) -> dict[str, dict[str, int]]:
        """Write the dump of ``groups`` to ``path`` (``.gz``: compressed); the file appears only when it
        is complete. Returns the records written, per group and kind."""
        return await write_dump(self.export_lines(groups=groups, vectors=vectors), Path(path))

    async def load(self, source: str | Path | Dump, *, into: str | None = None) -> LoadReport:
        """Load a dump (a file, or one already read with ``epigraph.transfer.read``) into this graph's
        store: every line is checked first (InputError naming the line and field), every target group
        must be empty, and each group is written in one transaction. ``into``: load a one-group dump as
        that group (default: the groups the dump names). Embeddings are the dump's when it has this
        graph's embedder's, else computed."""
        g = await opened(self._graph)
        dump = source if isinstance(source, Dump) else await asyncio.to_thread(read_dump, Path(source))
        return await load(role(g.store, TransferStore, feature="load"), g.embedder, dump, into=into)
