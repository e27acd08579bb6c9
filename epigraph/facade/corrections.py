"""Corrections by hand (:mod:`epigraph.edit`), as methods of :class:`~epigraph.client.KnowledgeGraph`:
each names its author, is recorded with its reason and can be undone."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from ..edit import UNSET, Editor, EntityRef
from ..edit.build import MaybeTime
from ..edit.refs import entities_named
from ..errors import UsageError
from ..graph.corrections import Correction, author_of
from ..graph.store import StoreStats
from .parts import GraphParts


class CorrectionMethods(GraphParts):
    """Facts added, retired, edited or deleted by hand; entities merged, unmerged, renamed; undo; the
    log of corrections; a group deleted."""

    _editor: Editor | None = None

    @property
    def editor(self) -> Editor:
        if self._editor is None:
            lock = self.ingestor.group_lock  # a correction never runs beside one of the group's episodes
            self._editor = Editor(self.store, self.embedder, self.llm, self.options, lock=lock)
        return self._editor

    def _author(self, author: str | None) -> str:
        """``author`` (or ``EPIGRAPH_AUTHOR``) as ``kind:name``; a bare name is a person."""
        name = author or self.settings.author
        if not name:
            raise UsageError(
                "a correction names its author, a person (alice, or person:alice): pass author= (the CLI: "
                "--by; HTTP and MCP: author), or set EPIGRAPH_AUTHOR"
            )
        try:
            return author_of(name)
        except ValueError as exc:
            raise UsageError(str(exc)) from None

    async def add_fact(
        self,
        source: EntityRef,
        relation: str,
        target: EntityRef,
        *,
        text: str | None = None,
        valid_at: datetime | str | None = None,
        invalid_at: datetime | str | None = None,
        create: bool = False,
        retires: Sequence[str] = (),
        author: str | None = None,
        reason: str = "",
        group_id: str | None = None,
    ) -> Correction:
        """Add a fact between two entities named by uuid, name or alias (exactly; ``create`` makes the
        ones no entity is named so). It cites no episode: its source is ``author``, a person. The facts
        in ``retires`` end where it starts. Returns the stored correction (see :meth:`corrections`)."""
        await self.open()
        return await self.editor.add_fact(
            group_id or self.group_id, source, relation, target, author=self._author(author), text=text,
            valid_at=valid_at, invalid_at=invalid_at, create=create, retires=retires, reason=reason,
        )  # fmt: skip

    async def retire_fact(
        self,
        uuid: str,
        *,
        at: datetime | str | None = None,
        author: str | None = None,
        reason: str = "",
        group_id: str | None = None,
    ) -> Correction:
        """The fact stopped being true at ``at`` (default: now); the graph learns it now."""
        await self.open()
        return await self.editor.retire_fact(
            group_id or self.group_id, uuid, at=at, author=self._author(author), reason=reason
        )

    async def edit_fact(
        self,
        uuid: str,
        *,
        text: str | None = None,
        relation: str | None = None,
        valid_at: MaybeTime = UNSET,
        invalid_at: MaybeTime = UNSET,
        author: str | None = None,
        reason: str = "",
        group_id: str | None = None,
    ) -> Correction:
        """Correct a fact's text, relation or event time (``None`` clears a time) in place."""
        await self.open()
        return await self.editor.edit_fact(
            group_id or self.group_id, uuid, text=text, relation=relation, valid_at=valid_at,
            invalid_at=invalid_at, author=self._author(author), reason=reason,
        )  # fmt: skip

    async def delete_fact(
        self, uuid: str, *, author: str | None = None, reason: str = "", group_id: str | None = None
    ) -> Correction:
        """Delete a fact; the facts it retired come back. The correction keeps it (undo restores it)."""
        await self.open()
        return await self.editor.delete_fact(
            group_id or self.group_id, uuid, author=self._author(author), reason=reason
        )

    async def merge_entities(
        self,
        keep: EntityRef,
        merge: EntityRef,
        *,
        author: str | None = None,
        reason: str = "",
        group_id: str | None = None,
    ) -> Correction:
        """Fold ``merge`` into ``keep``: its names become aliases, its facts and mentions move, summaries
        are rewritten; :meth:`unmerge_entities` (or :meth:`undo`) takes it back exactly."""
        await self.open()
        return await self.editor.merge_entities(
            group_id or self.group_id, keep, merge, author=self._author(author), reason=reason
        )

    async def unmerge_entities(
        self, entity: EntityRef, *, author: str | None = None, reason: str = "", group_id: str | None = None
    ) -> Correction:
        """Undo the latest merge into ``entity`` that is not undone yet."""
        await self.open()
        return await self.editor.unmerge(
            group_id or self.group_id, entity, author=self._author(author), reason=reason
        )

    async def rename_entity(
        self,
        entity: EntityRef,
        new_name: str,
        *,
        keep_alias: bool = True,
        author: str | None = None,
        reason: str = "",
        group_id: str | None = None,
    ) -> Correction:
        """Rename an entity; its old name stays an alias unless ``keep_alias=False``."""
        await self.open()
        return await self.editor.rename_entity(
            group_id or self.group_id, entity, new_name, keep_alias=keep_alias, author=self._author(author),
            reason=reason,
        )  # fmt: skip

    async def undo(
        self, correction: str, *, author: str | None = None, reason: str = "", group_id: str | None = None
    ) -> Correction:
        """Apply a correction backwards, while the graph still holds what it wrote (ConflictError says
        what changed otherwise); recorded as a correction of its own."""
        await self.open()
        return await self.editor.undo(
            group_id or self.group_id, correction, author=self._author(author), reason=reason
        )

    async def corrections(
        self, *, entity: EntityRef | None = None, limit: int = 100, group_id: str | None = None
    ) -> list[Correction]:
        """The group's corrections by hand, newest first; with ``entity``, those that touched it (every
        entity the name denotes, when several share it)."""
        await self.open()
        group = group_id or self.group_id
        if entity is None:
            return await self.store.corrections(group, limit=limit)
        named = await entities_named(self.store, group, entity)
        found = [c for e in named for c in await self.store.corrections(group, subject=e.uuid, limit=limit)]
        unique = {c.uuid: c for c in found}.values()
        return sorted(unique, key=lambda c: (c.created_at, c.uuid), reverse=True)[:limit]

    async def delete_group(self, group_id: str | None = None) -> StoreStats:
        """Delete everything of a group (episodes, entities, facts, corrections) in one transaction;
        returns what it held. Not undoable: export it first (:meth:`export`)."""
        await self.open()
        group = group_id or self.group_id
        async with self.ingestor.group_lock(group):
            return await self.store.delete_group(group)
