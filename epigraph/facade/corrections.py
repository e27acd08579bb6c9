"""Corrections by hand (:mod:`epigraph.edit`), as ``kg.corrections`` (or ``kg.group("alice").corrections``):
each names its author, is recorded with its reason and can be undone. With the redaction policy on
(``IngestOptions.redact``) its words (a fact's text, a new name, the names of its entities, the reason)
are redacted into the group's vault first, as an episode's are: a phone number typed in a correction is
stored as its placeholder, the one the group's episodes use."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from ..edit import UNSET, Editor, EntityRef
from ..edit.build import MaybeTime
from ..edit.refs import entities_named, require_correction
from ..errors import UsageError
from ..graph.corrections import Correction, author_of
from ..graph.model import Entity
from ..graph.roles import role
from ..graph.store import CorrectionHistoryStore, CorrectionReads
from .parts import Graph, asked, editor_of, opened


class Corrections:
    """Facts added, retired, edited or deleted by hand; entities merged, unmerged, renamed; undo; the
    log of the group's corrections."""

    def __init__(self, graph: Graph, group_id: str) -> None:
        self._graph, self.group_id = graph, group_id

    async def _editor(self) -> Editor:
        return editor_of(await opened(self._graph))

    async def _words(self, *texts: str) -> list[str]:
        """``texts`` as the group's texts hold them: with the redaction policy on, each value it replaces
        written as its placeholder in the group's vault (a new value numbered)."""
        redactor = (await opened(self._graph)).ingestor.redactor
        return list(texts) if redactor is None else await redactor.texts(self.group_id, texts)

    async def _ref(self, ref: EntityRef) -> EntityRef:
        return ref if isinstance(ref, Entity) else (await self._words(ref))[0]

    def _author(self, author: str | None) -> str:
        """``author`` (or ``EPIGRAPH_AUTHOR``) as ``kind:name``; a bare name is a person."""
        name = author or self._graph.settings.author
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
    ) -> Correction:
        """Add a fact between two entities named by uuid, name or alias (exactly; ``create`` makes the
        ones no entity is named so). It cites no episode: its source is ``author``, a person. The facts
        in ``retires`` end where it starts. Returns the stored correction (see :meth:`history`)."""
        source, target = await self._ref(source), await self._ref(target)
        said, reason = await self._words(text or "", reason)
        text = said if text is not None else None
        return await (await self._editor()).add_fact(
            self.group_id, source, relation, target, author=self._author(author), text=text,
            valid_at=valid_at, invalid_at=invalid_at, create=create, retires=retires, reason=reason,
        )  # fmt: skip

    async def retire_fact(
        self,
        uuid: str,
        *,
        at: datetime | str | None = None,
        author: str | None = None,
        reason: str = "",
    ) -> Correction:
        """The fact stopped being true at ``at`` (default: now); the graph learns it now."""
        (reason,) = await self._words(reason)
        return await (await self._editor()).retire_fact(
            self.group_id, uuid, at=at, author=self._author(author), reason=reason
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
    ) -> Correction:
        """Correct a fact's text, relation or event time (``None`` clears a time) in place."""
        said, reason = await self._words(text or "", reason)
        text = said if text is not None else None
        return await (await self._editor()).edit_fact(
            self.group_id, uuid, text=text, relation=relation, valid_at=valid_at,
            invalid_at=invalid_at, author=self._author(author), reason=reason,
        )  # fmt: skip

    async def delete_fact(self, uuid: str, *, author: str | None = None, reason: str = "") -> Correction:
        """Delete a fact; the facts it retired come back. The correction keeps it (undo restores it)."""
        (reason,) = await self._words(reason)
        return await (await self._editor()).delete_fact(
            self.group_id, uuid, author=self._author(author), reason=reason
        )

    async def merge_entities(
        self,
        keep: EntityRef,
        merge: EntityRef,
        *,
        author: str | None = None,
        reason: str = "",
    ) -> Correction:
        """Fold ``merge`` into ``keep``: its names become aliases, its facts and mentions move, summaries
        are rewritten; :meth:`unmerge_entities` (or :meth:`undo`) takes it back exactly."""
        keep, merge = await self._ref(keep), await self._ref(merge)
        (reason,) = await self._words(reason)
        return await (await self._editor()).merge_entities(
            self.group_id, keep, merge, author=self._author(author), reason=reason
        )

    async def unmerge_entities(
        self, entity: EntityRef, *, author: str | None = None, reason: str = ""
    ) -> Correction:
        """Undo the latest merge into ``entity`` that is not undone yet."""
        entity = await self._ref(entity)
        (reason,) = await self._words(reason)
        return await (await self._editor()).unmerge(
            self.group_id, entity, author=self._author(author), reason=reason
        )

    async def rename_entity(
        self,
        entity: EntityRef,
        new_name: str,
        *,
        keep_alias: bool = True,
        author: str | None = None,
        reason: str = "",
    ) -> Correction:
        """Rename an entity; its old name stays an alias unless ``keep_alias=False``."""
        entity = await self._ref(entity)
        new_name, reason = await self._words(new_name, reason)
        return await (await self._editor()).rename_entity(
            self.group_id, entity, new_name, keep_alias=keep_alias, author=self._author(author),
            reason=reason,
        )  # fmt: skip

    async def undo(self, correction: str, *, author: str | None = None, reason: str = "") -> Correction:
        """Apply a correction backwards, while the graph still holds what it wrote (ConflictError says
        what changed otherwise); recorded as a correction of its own."""
        (reason,) = await self._words(reason)
        return await (await self._editor()).undo(
            self.group_id, correction, author=self._author(author), reason=reason
        )

    async def history(self, *, entity: EntityRef | None = None, limit: int = 100) -> list[Correction]:
        """The group's corrections by hand, newest first; with ``entity``, those that touched it (every
        entity the name denotes, when several share it)."""
        g = await opened(self._graph)
        store = role(g.store, CorrectionHistoryStore, feature="corrections")
        if entity is None:
            return await store.corrections(self.group_id, limit=limit)
        if isinstance(entity, str):
            entity = await asked(g, self.group_id, entity)
        named = await entities_named(store, self.group_id, entity)
        group = self.group_id
        found = [c for e in named for c in await store.corrections(group, subject=e.uuid, limit=limit)]
        unique = {c.uuid: c for c in found}.values()
        return sorted(unique, key=lambda c: (c.created_at, c.uuid), reverse=True)[:limit]

    async def get(self, uuid: str) -> Correction:
        """One correction in full; :class:`~epigraph.errors.NotFound` when the group has none so named."""
        store = role((await opened(self._graph)).store, CorrectionReads, feature="corrections")
        return await require_correction(store, self.group_id, uuid)
