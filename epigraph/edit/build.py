"""Each correction by hand, built from the stored graph as a :class:`Draft`: the records as they are
(``before``) and as the person wants them (``after``). A record whose name or text changes, or that is
new, comes without an embedding; the :class:`~epigraph.edit.editor.Editor` embeds it and rewrites the
summaries the change affects before the store applies it (``graph.corrections``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import Enum
from typing import Any, Final

from pydantic import ValidationError

from ..errors import ConflictError, UsageError
from ..graph.corrections import Correction, CorrectionOp, GraphSlice, comparable
from ..graph.model import Entity, Fact, Invalidation, Mention, normalize_name, to_utc
from ..graph.store import EditStore, FactFilter, GraphReads
from ..graph.temporal import EVERYTHING, revert_invalidation
from .refs import EntityRef, entity_name, relation_name, require_correction, require_entity, require_fact
from .refs import resolve_entity as resolve_entity

ALL_FACTS = 1_000_000
"""Read every fact of an entity (a merge moves them all; the store refuses one that gained more)."""


class _Unset(Enum):
    UNSET = "unset"


UNSET: Final = _Unset.UNSET
"""A time left as it is (``None`` clears it)."""
MaybeTime = datetime | str | None | _Unset


@dataclass(frozen=True, slots=True)
class Who:
    """Who makes the correction, why, when (its ``created_at``) and its uuid (known before it is built:
    a fact retired by hand names it)."""

    author: str
    reason: str
    now: datetime
    uuid: str


@dataclass(frozen=True, slots=True)
class Draft:
    correction: Correction
    fixed_summaries: frozenset[str] = frozenset()
    """Entities whose summary the draft sets itself (an undo restores the exact earlier one)."""


def _correction(
    who: Who,
    group_id: str,
    operation: CorrectionOp,
    before: GraphSlice,
    after: GraphSlice,
    undoes: str | None = None,
) -> Correction:
    return Correction(
        uuid=who.uuid, group_id=group_id, operation=operation, author=who.author, created_at=who.now,
        reason=who.reason, before=before, after=after, undoes=undoes,
    )  # fmt: skip


def _time(value: datetime | str | None, what: str) -> datetime | None:
    if value is None:
        return None
    try:
        parsed = to_utc(value)
    except ValueError:
        parsed = None
    if not isinstance(parsed, datetime):
        raise UsageError(f"{what}: not an ISO date or datetime: {value!r}")
    return parsed


def _fact(values: dict[str, Any], what: str) -> Fact:
    """A fact from ``values`` with every check of the model; UsageError saying which one failed."""
    try:
        return Fact.model_validate(values)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "fact"
        message = str(first.get("msg")).removeprefix("Value error, ")
        raise UsageError(f"{what}: {where}: {message}") from None


def retired(fact: Fact, at: datetime, who: Who) -> Fact:
    """``fact`` ended at ``at`` (event time), retired now by the correction (``who.uuid`` names it as
    both the fact and the episode that retired it: no episode did)."""
    if fact.expired_at is not None:
        raise UsageError(f"fact {fact.uuid!r} was already retired at {fact.expired_at.isoformat()}")
    if fact.valid_at is not None and at < fact.valid_at:
        raise UsageError(
            f"fact {fact.uuid!r} starts at {fact.valid_at.isoformat()}: it cannot end before, "
            f"at {at.isoformat()}"
        )
    if fact.invalid_at is not None and at > fact.invalid_at:
        raise UsageError(
            f"fact {fact.uuid!r} already ends at {fact.invalid_at.isoformat()}; correct its dates instead"
        )
    invalidation = Invalidation(
        fact_uuid=who.uuid, episode_uuid=who.uuid, previous_invalid_at=fact.invalid_at
    )
    return fact.model_copy(update={"invalid_at": at, "expired_at": who.now, "invalidated_by": invalidation})


# --- facts -----------------------------------------------------------------------------------------------


async def add_fact(
    store: GraphReads,
    group_id: str,
    who: Who,
    source: EntityRef,
    relation: str,
    target: EntityRef,
    *,
    text: str | None,
    valid_at: datetime | str | None,
    invalid_at: datetime | str | None,
    create: bool,
    retires: Sequence[str],
) -> Draft:
    """A fact between two entities (found by uuid, name or alias; created when ``create``), citing no
    episode, with ``attributes["source"]`` the author, stated now (an undated one starts now, as one said
    in an episode starts when it was said); the facts in ``retires`` end where it starts."""
    ends = [await _endpoint(store, group_id, ref, create, who.now) for ref in (source, target)]
    (src, _), (dst, _) = ends
    if src.uuid == dst.uuid or (
        normalize_name(src.name) == normalize_name(dst.name) and all(n for _, n in ends)
    ):
        raise UsageError(f"a fact joins two entities; both ends are {src.name!r}")
    name = relation_name(relation)
    wording = " ".join((text or "").split()) or f"{src.name} {name.lower().replace('_', ' ')} {dst.name}"
    fact = _fact(
        {
            "group_id": group_id, "source_uuid": src.uuid, "target_uuid": dst.uuid, "relation": name,
            "text": wording, "episodes": [], "valid_at": _time(valid_at, "valid_at"),
            "invalid_at": _time(invalid_at, "invalid_at"), "created_at": who.now, "stated_at": who.now,
            "attributes": {"source": who.author, "correction": who.uuid},
        },
        "the new fact",
    )  # fmt: skip
    old = [await require_fact(store, group_id, uuid) for uuid in dict.fromkeys(retires)]
    ended = [retired(f, fact.valid_at or who.now, who) for f in old]
    created = [entity for entity, new in ends if new]
    before = GraphSlice(facts=old)
    after = GraphSlice(entities=created, facts=[fact, *ended])
    return Draft(_correction(who, group_id, CorrectionOp.ADD_FACT, before, after))


async def _endpoint(
    store: GraphReads, group_id: str, ref: EntityRef, create: bool, now: datetime
) -> tuple[Entity, bool]:
    """The entity ``ref`` names and whether it is new (created: ``create`` and no entity has the name)."""
    if create and isinstance(ref, str):
        found = await resolve_entity(store, group_id, ref)
        if found is not None:
            return found, False
        return Entity(group_id=group_id, name=entity_name(ref), created_at=now), True
    return await require_entity(store, group_id, ref), False


async def retire_fact(
    store: GraphReads, group_id: str, who: Who, uuid: str, at: datetime | str | None
) -> Draft:
    """The fact ended at ``at`` (default: now), as the graph learns now."""
    fact = await require_fact(store, group_id, uuid)
    end = _time(at, "at") or who.now
    before, after = GraphSlice(facts=[fact]), GraphSlice(facts=[retired(fact, end, who)])
    return Draft(_correction(who, group_id, CorrectionOp.RETIRE_FACT, before, after))


async def edit_fact(
    store: GraphReads,
    group_id: str,
    who: Who,
    uuid: str,
    *,
    text: str | None,
    relation: str | None,
    valid_at: MaybeTime,
    invalid_at: MaybeTime,
) -> Draft:
    """The fact with a corrected text, relation or event time, in place (the correction keeps the old)."""
    fact = await require_fact(store, group_id, uuid)
    updates: dict[str, Any] = {}
    if text is not None and " ".join(text.split()) != fact.text:
        updates.update(text=" ".join(text.split()), text_embedding=None)
    if relation is not None and relation_name(relation) != fact.relation:
        updates["relation"] = relation_name(relation)
    for key, value in (("valid_at", valid_at), ("invalid_at", invalid_at)):
        if value is not UNSET:
            when = _time(value, key)
            if when != getattr(fact, key):
                updates[key] = when
    if not updates:
        raise UsageError(f"fact {uuid!r} already says that: nothing to change")
    edited = _fact({**fact.model_dump(), **updates}, f"fact {uuid!r}")
    before, after = GraphSlice(facts=[fact]), GraphSlice(facts=[edited])
    return Draft(_correction(who, group_id, CorrectionOp.EDIT_FACT, before, after))


async def delete_fact(store: GraphReads, group_id: str, who: Who, uuid: str) -> Draft:
    """The fact removed; the facts it retired come back (as when its episode is deleted)."""
    fact = await require_fact(store, group_id, uuid)
    around = await store.facts_around(
        group_id, [fact.source_uuid, fact.target_uuid], FactFilter(time=EVERYTHING), limit=ALL_FACTS
    )
    retired_by = [f for f in around if f.invalidated_by is not None and f.invalidated_by.fact_uuid == uuid]
    before = GraphSlice(facts=[fact, *retired_by])
    after = GraphSlice(facts=[revert_invalidation(f) for f in retired_by])
    return Draft(_correction(who, group_id, CorrectionOp.DELETE_FACT, before, after))


# --- entities -------------------------------------------------------------------------------------------


async def merge_entities(
    store: GraphReads, group_id: str, who: Who, keep: EntityRef, merge: EntityRef
) -> Draft:
    """``merge`` folded into ``keep``: its name and aliases become aliases, its labels and attributes
    join, its facts and mentions move, and it is deleted."""
    kept, gone = await require_entity(store, group_id, keep), await require_entity(store, group_id, merge)
    if kept.uuid == gone.uuid:
        raise UsageError(f"{kept.name!r} and {gone.name!r} are the same entity ({kept.uuid})")
    facts = await store.facts_around(group_id, [gone.uuid], FactFilter(time=EVERYTHING), limit=ALL_FACTS)
    moved = [
        f.model_copy(update={
            "source_uuid": kept.uuid if f.source_uuid == gone.uuid else f.source_uuid,
            "target_uuid": kept.uuid if f.target_uuid == gone.uuid else f.target_uuid,
        })
        for f in facts
    ]  # fmt: skip
    mentions = await store.mentions(group_id, [gone.uuid])
    known = {m.episode_uuid for m in await store.mentions(group_id, [kept.uuid])}
    added = [
        Mention(group_id=group_id, episode_uuid=m.episode_uuid, entity_uuid=kept.uuid)
        for m in mentions
        if m.episode_uuid not in known
    ]
    names = {normalize_name(n) for n in (kept.name, *kept.aliases)}
    aliases = list(kept.aliases)
    for name in (gone.name, *gone.aliases):
        if normalize_name(name) not in names:
            names.add(normalize_name(name))
            aliases.append(name)
    merged = kept.model_copy(update={
        "aliases": aliases,
        "labels": list(dict.fromkeys([*kept.labels, *gone.labels])),
        "attributes": {**gone.attributes, **kept.attributes},
    })  # fmt: skip
    before = GraphSlice(entities=[kept, gone], facts=facts, mentions=mentions)
    after = GraphSlice(entities=[merged], facts=moved, mentions=added)
    return Draft(_correction(who, group_id, CorrectionOp.MERGE_ENTITIES, before, after))


async def rename_entity(
    store: GraphReads, group_id: str, who: Who, ref: EntityRef, new_name: str, *, keep_alias: bool
) -> Draft:
    """The entity under a new name; the old one stays an alias (``keep_alias``)."""
    entity = await require_entity(store, group_id, ref)
    name = entity_name(new_name)
    if name == entity.name:
        raise UsageError(f"entity {entity.uuid!r} is already named {name!r}: nothing to change")
    norm = normalize_name(name)
    clash = [e for e in (await store.entities_by_names(group_id, [name]))[name] if e.uuid != entity.uuid]
    if clash:
        raise UsageError(
            f"{name!r} already names {clash[0].name!r} ({clash[0].uuid}) in group {group_id!r}: merge the "
            "two entities instead"
        )
    aliases = [a for a in entity.aliases if normalize_name(a) != norm]
    old = normalize_name(entity.name)
    if keep_alias and old != norm and old not in {normalize_name(a) for a in aliases}:
        aliases.append(entity.name)
    renamed = entity.model_copy(update={"name": name, "aliases": aliases, "name_embedding": None})
    before, after = GraphSlice(entities=[entity]), GraphSlice(entities=[renamed])
    return Draft(_correction(who, group_id, CorrectionOp.RENAME_ENTITY, before, after))


# --- undo -----------------------------------------------------------------------------------------------


async def undo(store: EditStore, group_id: str, who: Who, uuid: str) -> Draft:
    """The correction ``uuid`` applied backwards, while the graph still holds what it wrote (its records
    as it left them, summaries and embeddings aside); ConflictError saying what changed otherwise.

    An entity gets back its exact earlier summary unless its summary changed since (then it is
    written anew); a record keeps its embedding where its name or text is the same."""
    done = await require_correction(store, group_id, uuid)
    history = (
        await store.corrections(group_id, subject=done.subjects()[0], limit=ALL_FACTS)
        if done.subjects()
        else []
    )
    later = [c for c in history if c.undoes == uuid]
    if later:
        raise UsageError(f"correction {uuid!r} was already undone by {later[0].uuid!r} ({later[0].author})")
    sides = (done.before, done.after)
    entity_uuids = list(dict.fromkeys(e.uuid for side in sides for e in side.entities))
    fact_uuids = list(dict.fromkeys(f.uuid for side in sides for f in side.facts))
    entities = {e.uuid: e for e in await store.get_entities(group_id, entity_uuids)}
    facts = {f.uuid: f for f in await store.get_facts(group_id, fact_uuids)}
    current: dict[str, Entity | Fact] = {**entities, **facts}
    wrote: list[Entity | Fact] = [*done.after.entities, *done.after.facts]
    for record in wrote:
        now = current.get(record.uuid)
        kind = type(record).__name__.lower()
        if now is None:
            raise ConflictError(f"cannot undo {uuid}: {kind} {record.uuid!r} is no longer in the group")
        if comparable(now) != comparable(record):
            raise ConflictError(
                f"cannot undo {uuid}: {kind} {record.uuid!r} changed since (a later episode or correction); "
                "undo the later change first, or correct it by hand"
            )
    written = {r.uuid for r in wrote}
    removed: list[Entity | Fact] = [*done.before.entities, *done.before.facts]
    for old in removed:
        if old.uuid not in written and old.uuid in current:
            raise ConflictError(f"cannot undo {uuid}: {old.uuid!r} exists again")
    after_summary = {e.uuid: e.summary for e in done.after.entities}
    fixed: set[str] = set()
    restored_entities = []
    for entity in done.before.entities:
        now_entity = entities.get(entity.uuid)
        if now_entity is None or now_entity.summary == after_summary.get(entity.uuid, now_entity.summary):
            fixed.add(entity.uuid)
        else:
            entity = entity.model_copy(update={"summary": now_entity.summary})
        same_name = now_entity is not None and now_entity.name == entity.name
        vector = now_entity.name_embedding if same_name and now_entity is not None else None
        restored_entities.append(entity.model_copy(update={"name_embedding": vector}))
    restored_facts = []
    for fact in done.before.facts:
        now_fact = facts.get(fact.uuid)
        vector = now_fact.text_embedding if now_fact is not None and now_fact.text == fact.text else None
        restored_facts.append(fact.model_copy(update={"text_embedding": vector}))
    before = GraphSlice(
        entities=[entities[e.uuid] for e in done.after.entities],
        facts=[facts[f.uuid] for f in done.after.facts],
        mentions=list(done.after.mentions),
    )
    after = GraphSlice(entities=restored_entities, facts=restored_facts, mentions=list(done.before.mentions))
    correction = _correction(who, group_id, CorrectionOp.UNDO, before, after, undoes=uuid)
    return Draft(correction, frozenset(fixed))


async def last_merge_into(store: EditStore, group_id: str, ref: EntityRef) -> Correction:
    """The latest merge into the entity ``ref`` that is not undone yet (what ``unmerge`` undoes)."""
    entity = await require_entity(store, group_id, ref)
    history = await store.corrections(group_id, subject=entity.uuid, limit=ALL_FACTS)
    undone = {c.undoes for c in history if c.undoes}
    for correction in history:
        kept = correction.after.entities[:1]
        if (
            correction.operation == CorrectionOp.MERGE_ENTITIES
            and correction.uuid not in undone
            and kept
            and kept[0].uuid == entity.uuid
        ):
            return correction
    raise UsageError(f"nothing was merged into {entity.name!r} ({entity.uuid}) that is not undone yet")
