"""The Editor: corrections by hand, settled and applied.

Each operation builds a :class:`~epigraph.edit.build.Draft` from the stored graph, embeds what is new or
renamed, rewrites the summaries of the entities whose believed facts change (composed for small
entities, the model's ``summarize_entities`` for the others, as ingestion does; composed when there is no
model or it fails), and has the store apply it (``CorrectionWrites.apply_correction``: checked against the
graph in the same transaction). When the graph changed between the reads and the write (an episode of the
group ingested meanwhile), the store refuses and the operation is built again from the new state, up to
``ATTEMPTS`` times.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable, Sequence
from contextlib import AbstractAsyncContextManager, nullcontext
from datetime import datetime

from ..embed import Embedder
from ..errors import ConflictError, LLMError
from ..graph.corrections import Correction, GraphSlice, new_correction_uuid
from ..graph.derived import compose_summary
from ..graph.model import Entity, Fact, utc_now
from ..graph.store import EditStore
from ..graph.temporal import is_current
from ..pipeline.metering import MeteredEmbedder, MeteredLLM, ReportBuilder
from ..pipeline.options import IngestOptions
from ..pipeline.summaries import current_facts, summarize
from ..prompts.protocol import LLM
from . import build
from .build import Draft, MaybeTime, Who
from .refs import EntityRef

log = logging.getLogger("epigraph.edit")

ATTEMPTS = 3
"""Builds of one correction before a change of the graph under it is reported (ConflictError)."""

Build = Callable[[Who], Awaitable[Draft]]
GroupLock = Callable[[str], AbstractAsyncContextManager[object]]
"""The lock a group's changes are made under (the ingestion queue's: a correction never runs beside one
of the group's episodes in this process); none by default."""


def _no_lock(_: str) -> AbstractAsyncContextManager[object]:
    return nullcontext()


class Editor:
    """Corrections by hand on ``store`` (see the module docstring). ``llm`` may be None: summaries are
    then composed from the facts."""

    def __init__(
        self,
        store: EditStore,
        embedder: Embedder,
        llm: LLM | None = None,
        options: IngestOptions | None = None,
        lock: GroupLock = _no_lock,
    ) -> None:
        self.store, self.embedder, self.llm = store, embedder, llm
        self.options = options or IngestOptions()
        self.lock = lock

    # --- facts ------------------------------------------------------------------------------------------
    async def add_fact(
        self,
        group_id: str,
        source: EntityRef,
        relation: str,
        target: EntityRef,
        *,
        author: str,
        text: str | None = None,
        valid_at: datetime | str | None = None,
        invalid_at: datetime | str | None = None,
        create: bool = False,
        retires: Sequence[str] = (),
        reason: str = "",
    ) -> Correction:
        async def draft(who: Who) -> Draft:
            return await build.add_fact(
                self.store, group_id, who, source, relation, target, text=text, valid_at=valid_at,
                invalid_at=invalid_at, create=create, retires=retires,
            )  # fmt: skip

        return await self._apply(group_id, draft, author, reason)

    async def retire_fact(
        self, group_id: str, uuid: str, *, author: str, at: datetime | str | None = None, reason: str = ""
    ) -> Correction:
        return await self._apply(
            group_id, lambda who: build.retire_fact(self.store, group_id, who, uuid, at), author, reason
        )

    async def edit_fact(
        self,
        group_id: str,
        uuid: str,
        *,
        author: str,
        text: str | None = None,
        relation: str | None = None,
        valid_at: MaybeTime = build.UNSET,
        invalid_at: MaybeTime = build.UNSET,
        reason: str = "",
    ) -> Correction:
        async def draft(who: Who) -> Draft:
            return await build.edit_fact(
                self.store, group_id, who, uuid, text=text, relation=relation, valid_at=valid_at,
                invalid_at=invalid_at,
            )  # fmt: skip

        return await self._apply(group_id, draft, author, reason)

    async def delete_fact(self, group_id: str, uuid: str, *, author: str, reason: str = "") -> Correction:
        return await self._apply(
            group_id, lambda who: build.delete_fact(self.store, group_id, who, uuid), author, reason
        )

    # --- entities ---------------------------------------------------------------------------------------
    async def merge_entities(
        self, group_id: str, keep: EntityRef, merge: EntityRef, *, author: str, reason: str = ""
    ) -> Correction:
        return await self._apply(
            group_id, lambda who: build.merge_entities(self.store, group_id, who, keep, merge), author, reason
        )

    async def unmerge(self, group_id: str, ref: EntityRef, *, author: str, reason: str = "") -> Correction:
        """Undo the latest merge into the entity ``ref`` (or give :meth:`undo` the merge's uuid)."""
        merge = await build.last_merge_into(self.store, group_id, ref)
        return await self.undo(group_id, merge.uuid, author=author, reason=reason)

    async def rename_entity(
        self, group_id: str, ref: EntityRef, new_name: str, *, author: str, keep_alias: bool = True,
        reason: str = "",
    ) -> Correction:  # fmt: skip
        return await self._apply(
            group_id,
            lambda who: build.rename_entity(self.store, group_id, who, ref, new_name, keep_alias=keep_alias),
            author,
            reason,
        )

    async def undo(self, group_id: str, uuid: str, *, author: str, reason: str = "") -> Correction:
        return await self._apply(
            group_id, lambda who: build.undo(self.store, group_id, who, uuid), author, reason
        )

    # --- applying ---------------------------------------------------------------------------------------
    async def _apply(self, group_id: str, draft: Build, author: str, reason: str) -> Correction:
        for attempt in range(1, ATTEMPTS + 1):
            who = Who(author=author, reason=reason, now=self.options.clock(), uuid=new_correction_uuid())
            try:
                async with self.lock(group_id):
                    correction = await self._settle(await draft(who))
                    await self.store.apply_correction(correction)
            except ConflictError:
                if attempt == ATTEMPTS:
                    raise
                log.info("the graph changed under correction %s; building it again", who.uuid)
                continue
            return correction.stored()
        raise AssertionError("unreachable")

    async def _settle(self, draft: Draft) -> Correction:
        """The draft with its embeddings and the summaries its change affects."""
        correction = await self._embedded(draft.correction)
        before, after = await self._summaries(correction, draft.fixed_summaries)
        return correction.model_copy(update={"before": before, "after": after})

    async def _embedded(self, correction: Correction) -> Correction:
        """Embeddings for the ``after`` records without one (new, renamed or reworded)."""
        after = correction.after
        entities = [e for e in after.entities if e.name_embedding is None]
        facts = [f for f in after.facts if f.text_embedding is None]
        if not entities and not facts:
            return correction
        vectors = await self.embedder.embed([*(e.name for e in entities), *(f.text for f in facts)])
        rows = [[float(x) for x in row] for row in vectors]
        named = {e.uuid: rows[i] for i, e in enumerate(entities)}
        worded = {f.uuid: rows[len(entities) + i] for i, f in enumerate(facts)}
        slice_ = after.model_copy(update={
            "entities": [e.model_copy(update={"name_embedding": named.get(e.uuid, e.name_embedding)})
                         for e in after.entities],
            "facts": [f.model_copy(update={"text_embedding": worded.get(f.uuid, f.text_embedding)})
                      for f in after.facts],
        })  # fmt: skip
        return correction.model_copy(update={"after": slice_})

    async def _summaries(
        self, correction: Correction, fixed: frozenset[str]
    ) -> tuple[GraphSlice, GraphSlice]:
        """``before`` and ``after`` with the summaries of every entity whose believed facts change
        rewritten (an entity not in the correction yet joins it on both sides)."""
        changes, now = correction.plan(), utc_now()
        gone = set(changes.delete_entities)
        after_entities = {e.uuid: e for e in correction.after.entities}
        candidates = {e.uuid for e in correction.after.entities} - fixed
        for fact in (*correction.before.facts, *correction.after.facts):
            candidates.update({fact.source_uuid, fact.target_uuid} - gone - fixed)
        if not candidates:
            return correction.before, correction.after
        uuids = sorted(candidates)
        held = await current_facts(self.store, correction.group_id, uuids, now)
        stored = {e.uuid: e for e in await self.store.get_entities(correction.group_id, uuids)}
        wanted: list[tuple[Entity, list[Fact]]] = []
        for uuid in uuids:
            facts = _after_change(held[uuid], uuid, changes.facts, changes.delete_facts, now)
            new = uuid not in stored
            if new or _texts(facts) != _texts(held[uuid]):
                wanted.append((after_entities.get(uuid) or stored[uuid], facts))
        rewritten = dict(_changed(wanted, await self._summarize(wanted)))
        if not rewritten:
            return correction.before, correction.after
        joining = [stored[u] for u in rewritten if u not in after_entities]  # stored, untouched otherwise
        before = correction.before.model_copy(update={"entities": [*correction.before.entities, *joining]})
        entities = [*correction.after.entities, *joining]
        after = correction.after.model_copy(update={
            "entities": [e.model_copy(update={"summary": rewritten.get(e.uuid, e.summary)}) for e in entities]
        })  # fmt: skip
        return before, after

    async def _summarize(self, wanted: list[tuple[Entity, list[Fact]]]) -> dict[str, str]:
        if not wanted:
            return {}
        if self.llm is not None and self.options.summaries.mode != "off":
            report = ReportBuilder(MeteredLLM(self.llm), MeteredEmbedder(self.embedder))
            try:
                summaries, _ = await summarize(
                    self.llm, self.options.summaries, report, wanted, use_model=True
                )
                return summaries
            except LLMError as exc:
                log.warning("summaries of a correction composed: the model failed (%s)", type(exc).__name__)
        return {e.uuid: compose_summary(facts, self.options.summaries.compose_max) for e, facts in wanted}


def _changed(wanted: list[tuple[Entity, list[Fact]]], summaries: dict[str, str]) -> list[tuple[str, str]]:
    """(uuid, new summary) of the entities whose summary is new."""
    return [
        (e.uuid, summaries[e.uuid])
        for e, _ in wanted
        if e.uuid in summaries and summaries[e.uuid] != e.summary
    ]


def _after_change(
    held: Iterable[Fact], uuid: str, written: Iterable[Fact], deleted: Iterable[str], now: datetime
) -> list[Fact]:
    """The facts believed of entity ``uuid`` once the correction is applied."""
    gone = set(deleted)
    written = list(written)
    rewritten = {f.uuid for f in written}
    facts = {f.uuid: f for f in held if f.uuid not in gone and f.uuid not in rewritten}
    for fact in written:
        if uuid in (fact.source_uuid, fact.target_uuid) and is_current(fact, now):
            facts[fact.uuid] = fact
    return list(facts.values())


def _texts(facts: Iterable[Fact]) -> list[str]:
    return sorted(f.text for f in facts)
