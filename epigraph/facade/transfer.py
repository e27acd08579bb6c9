"""Export and load (:mod:`epigraph.transfer`), as ``kg.transfer`` (or ``kg.group("alice").transfer``):
groups as a JSON Lines dump (docs/dump-format.md), and a dump into this graph's store. Both need a
store with the whole-groups role (``graph.store_roles.WholeGroups``; load also reads corrections and derived
views: ``TransferStore``): :class:`~epigraph.errors.StoreRoleMissing` otherwise."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Sequence
from contextlib import aclosing
from functools import partial
from pathlib import Path

from ..errors import GroupNotFound, InputError
from ..graph.placeholders import WHAT
from ..graph.roles import optional, role
from ..graph.store import TransferStore
from ..graph.store_roles import RedactionVault, WholeGroups
from ..transfer import Dump, LoadReport, export_lines, load
from ..transfer.files import read_dump, write_dump
from .parts import Graph, opened


class Transfer:
    """The handle's group (or others named) written out as a dump, and a dump loaded in."""

    def __init__(self, graph: Graph, group_id: str) -> None:
        self._graph, self.group_id = graph, group_id

    async def _groups(self, groups: str | Sequence[str] | None) -> list[str]:
        """The groups named (default: the handle's; ``"*"``: every one), each one the store holds
        (GroupNotFound for one it holds nothing of: no empty dump of a mistyped name)."""
        known = await role(self._graph.store, WholeGroups, feature="export").groups()
        if groups == "*":
            return known
        chosen = [self.group_id] if groups is None else [groups] if isinstance(groups, str) else groups
        for group_id in chosen:
            if group_id not in known:
                raise GroupNotFound(group_id, known)
        return list(dict.fromkeys(chosen))

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
        store = role(g.store, TransferStore, feature="load")
        return await load(store, g.embedder, dump, into=into, admit=partial(_admit, g, dump))


async def _admit(graph: Graph, dump: Dump, source: str, target: str) -> None:
    """Under the redaction policy a dump holding a value it replaces is refused (InputError naming the
    file, line and field); the placeholders a dump holds are reserved in the target group's vault
    (whatever the policy), so the group never numbers a new value as one of them."""
    redactor = graph.ingestor.redactor
    if redactor is not None:
        for line, field, text in dump.texts(source):
            found = redactor.spans(text)
            if found:
                raise InputError(
                    f"holds {WHAT[found[0].kind]}, which the redaction policy replaces: with it on, a dump "
                    "is loaded only without personal data (load it with the policy off, or ingest its "
                    "episodes again with it on); nothing was written",
                    file=dump.source, line=line, field=field,
                )  # fmt: skip
    if optional(graph.store, RedactionVault) is not None:
        texts = (text for _, _, text in dump.texts(source))
        await graph.ingestor.vault("loading a dump").reserve(target, texts)
