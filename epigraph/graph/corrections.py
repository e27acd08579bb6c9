"""Corrections by hand: the stored record of a change a person made to the graph, exact to undo.

A :class:`Correction` holds the records it changes as they were (``before``) and as they are after it
(``after``): entities and facts by uuid, and the mentions it removes (``before.mentions``) and adds
(``after.mentions``). A record only in ``before`` is deleted, one only in ``after`` is created. So every
operation (add, retire, edit or delete a fact; merge or rename entities) is one shape, a store applies
any of them the same way (``CorrectionWrites.apply_correction``), and undoing one is applying it backwards
(``after`` -> ``before``), itself recorded as a correction that names the one it ``undoes``.

A store applies a correction only while the graph still holds ``before`` (:func:`conflict`): the records
it names must be stored as they were read (their summaries and embeddings aside: a summary is rewritten
by every episode that touches the entity, an embedding follows its text), the ones it creates must not
exist, the mentions it removes must exist and the ones it adds must not, and an entity it deletes must
have no facts or mentions beyond the ones it lists. Otherwise nothing is written and the store raises
:class:`~epigraph.errors.ConflictError` saying which record changed.

Stores keep a correction without embeddings (:meth:`Correction.stored`): they are derived from the texts
the correction keeps, and an undo embeds again what it re-creates.

A fact retired by hand records ``invalidated_by`` with both ids set to the correction's uuid (no episode
or fact retired it); a fact added by hand cites no episode and carries ``attributes["source"]``, the
person who added it, and ``attributes["correction"]``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence, Set
from dataclasses import dataclass
from enum import StrEnum
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from ..errors import StoreError
from .model import Entity, Fact, GroupId, Mention, UtcDatetime, Uuid, new_uuid, records_problem, utc_now

AUTHOR_RE = re.compile(r"[a-z][a-z0-9_-]{0,31}:[^\x00-\x1f\x7f-\x9f]{1,128}")
"""Who made a correction: ``kind:name``, e.g. ``person:alice`` (a person, not an episode or a model)."""
AUTHOR_GIVEN = r"^(?:[a-z][a-z0-9_-]{0,31}:)?[^\u0000-\u001f\u007f-\u009f]{1,128}$"
"""What :func:`author_of` takes (a JSON Schema pattern too): ``kind:name``, or a bare name (a person)."""

CORRECTION_PREFIX = "correction:"
"""Every correction's uuid starts with it, so an ``invalidated_by`` naming one is told from an episode."""


def check_author(value: str) -> str:
    if not AUTHOR_RE.fullmatch(value):
        raise ValueError(
            f"author must be kind:name with a lowercase kind, e.g. 'person:alice' (at most 128 characters "
            f"after the colon, no control characters), got {value[:80]!r}"
        )
    return value


def author_of(name: str) -> str:
    """``name`` as an author: ``person:NAME`` unless it already says its kind (``team:data``); every
    string of :data:`AUTHOR_GIVEN` is one."""
    return check_author(name if AUTHOR_RE.fullmatch(name) else f"person:{name}")


Author = Annotated[str, AfterValidator(check_author)]


def new_correction_uuid() -> str:
    return CORRECTION_PREFIX + new_uuid()


class CorrectionOp(StrEnum):
    ADD_FACT = "add_fact"
    RETIRE_FACT = "retire_fact"
    EDIT_FACT = "edit_fact"
    DELETE_FACT = "delete_fact"
    MERGE_ENTITIES = "merge_entities"
    RENAME_ENTITY = "rename_entity"
    UNDO = "undo"


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class GraphSlice(_Frozen):
    """Records on one side of a correction: entities and facts as they are on that side, and the
    mentions that exist only on that side (``before``: removed; ``after``: added)."""

    entities: list[Entity] = Field(default_factory=list)
    facts: list[Fact] = Field(default_factory=list)
    mentions: list[Mention] = Field(default_factory=list)

    def without_embeddings(self) -> GraphSlice:
        return GraphSlice(
            entities=[e.model_copy(update={"name_embedding": None}) for e in self.entities],
            facts=[f.model_copy(update={"text_embedding": None}) for f in self.facts],
            mentions=list(self.mentions),
        )


class Correction(_Frozen):
    """One change made by hand; see the module docstring."""

    uuid: Uuid = Field(default_factory=new_correction_uuid)
    group_id: GroupId
    operation: CorrectionOp
    author: Author
    created_at: UtcDatetime = Field(default_factory=utc_now)
    reason: str = Field(default="", max_length=2000)
    before: GraphSlice = Field(default_factory=GraphSlice)
    after: GraphSlice = Field(default_factory=GraphSlice)
    undoes: Uuid | None = None
    """The correction this one undid (``operation`` is then ``undo``)."""

    def subjects(self) -> list[str]:
        """Every entity and fact uuid it touches (fact endpoints included), sorted: what its history
        is found by."""
        found: set[str] = set()
        for side in (self.before, self.after):
            found.update(e.uuid for e in side.entities)
            for fact in side.facts:
                found.update((fact.uuid, fact.source_uuid, fact.target_uuid))
            found.update(m.entity_uuid for m in side.mentions)
        return sorted(found)

    def slice_records(self) -> Iterator[tuple[str, Entity | Fact | Mention]]:
        """Every record its slices hold, with where it is (``before.entities.0``): records of its group
        only, or a store would hold (and an undo write) another group's."""
        for side_name, side in (("before", self.before), ("after", self.after)):
            records: tuple[tuple[str, Sequence[Entity | Fact | Mention]], ...] = (
                ("entities", side.entities), ("facts", side.facts), ("mentions", side.mentions),
            )  # fmt: skip
            for kind, items in records:
                for i, record in enumerate(items):
                    yield f"{side_name}.{kind}.{i}", record

    def stored(self) -> Correction:
        """What a store keeps: the same correction without embeddings."""
        return self.model_copy(
            update={"before": self.before.without_embeddings(), "after": self.after.without_embeddings()}
        )

    def plan(self) -> Changes:
        """What applying it writes (after :meth:`check`)."""
        after_entities = {e.uuid for e in self.after.entities}
        after_facts = {f.uuid for f in self.after.facts}
        return Changes(
            entities=list(self.after.entities),
            facts=list(self.after.facts),
            add_mentions=list(self.after.mentions),
            remove_mentions=list(self.before.mentions),
            delete_facts=[f.uuid for f in self.before.facts if f.uuid not in after_facts],
            delete_entities=[e.uuid for e in self.before.entities if e.uuid not in after_entities],
        )

    def check(self) -> None:
        """Raise StoreError for what no store may apply, before anything is read or written: a record
        of another group, a uuid twice on one side, a mention both removed and added, a fact whose
        event time ends before it starts, or a fact or mention left pointing at a deleted entity."""
        sides = (("before", self.before), ("after", self.after))
        for side_name, side in sides:
            records = [*side.entities, *side.facts, *side.mentions]
            problem = records_problem(self.group_id, records, "the correction")
            if problem:
                raise StoreError(problem)
            for kind, keys in (
                ("entity", [e.uuid for e in side.entities]),
                ("fact", [f.uuid for f in side.facts]),
                ("mention", [mention_key(m) for m in side.mentions]),
            ):
                twice = _repeated(keys)
                if twice:
                    raise StoreError(f"{kind} {twice!r} is twice in the correction's {side_name}")
        both = {mention_key(m) for m in self.before.mentions} & {mention_key(m) for m in self.after.mentions}
        if both:
            raise StoreError(f"mention {sorted(both)[0]!r} is both removed and added by the correction")
        deleted = set(self.plan().delete_entities)
        for fact in self.after.facts:
            gone = deleted & {fact.source_uuid, fact.target_uuid}
            if gone:
                raise StoreError(f"fact {fact.uuid!r} would point at the deleted entity {min(gone)!r}")
        for mention in self.after.mentions:
            if mention.entity_uuid in deleted:
                raise StoreError(f"a mention would point at the deleted entity {mention.entity_uuid!r}")


@dataclass(frozen=True, slots=True)
class Changes:
    """The writes of one correction: upserts first, then the removals (facts before entities)."""

    entities: list[Entity]
    facts: list[Fact]
    add_mentions: list[Mention]
    remove_mentions: list[Mention]
    delete_facts: list[str]
    delete_entities: list[str]


def mention_key(mention: Mention) -> tuple[str, str]:
    return mention.episode_uuid, mention.entity_uuid


def _repeated(keys: Iterable[Any]) -> Any:
    seen: set[Any] = set()
    for key in keys:
        if key in seen:
            return key
        seen.add(key)
    return None


# Fields a correction's precondition ignores: rewritten by ingestion (summary) or derived (embeddings).
_ENTITY_VOLATILE = frozenset({"summary", "name_embedding"})
_FACT_VOLATILE = frozenset({"text_embedding"})


def comparable(record: Entity | Fact) -> dict[str, Any]:
    """The fields of ``record`` a correction's precondition compares."""
    exclude = _ENTITY_VOLATILE if isinstance(record, Entity) else _FACT_VOLATILE
    return record.model_dump(mode="json", exclude=set(exclude))


@dataclass(frozen=True, slots=True)
class StoredState:
    """What a store read, inside the correction's transaction, to check its precondition."""

    entities: Mapping[str, Entity]
    """The stored entities among those the correction names (before or after)."""
    facts: Mapping[str, Fact]
    """The stored facts among those it names."""
    mentions: Set[tuple[str, str]]
    """The (episode, entity) pairs stored among those it removes or adds."""
    attached: Mapping[str, Set[str]]
    """For each entity it deletes: the facts (uuids) and mentions (``mention:<episode>``) it has."""


def attached_mention(episode_uuid: str) -> str:
    """How a mention is named in :attr:`StoredState.attached`."""
    return f"mention:{episode_uuid}"


@dataclass(frozen=True, slots=True)
class Lookups:
    """What a store reads for a correction's precondition (then :func:`stored_state`)."""

    entities: list[str]
    """Every entity uuid the correction names (get them)."""
    facts: list[str]
    """Every fact uuid it names (get them)."""
    mentioned: list[str]
    """The entities whose mentions to read: those of the mentions it names, and those it deletes."""
    deleted: list[str]
    """The entities it deletes (read every fact touching them)."""

    @classmethod
    def of(cls, correction: Correction) -> Lookups:
        sides = (correction.before, correction.after)
        deleted = correction.plan().delete_entities
        named = [*correction.before.mentions, *correction.after.mentions]
        return cls(
            entities=sorted({e.uuid for side in sides for e in side.entities}),
            facts=sorted({f.uuid for side in sides for f in side.facts}),
            mentioned=sorted({m.entity_uuid for m in named} | set(deleted)),
            deleted=sorted(deleted),
        )


def stored_state(
    lookups: Lookups,
    entities: Iterable[Entity],
    facts: Iterable[Fact],
    mentions: Iterable[Mention],
    touching: Iterable[tuple[str, str]],
) -> StoredState:
    """The :class:`StoredState` of what a store read for ``lookups``: the entities, facts and mentions,
    and ``touching``, the (entity uuid, fact uuid) pairs of the facts touching the deleted entities."""
    attached: dict[str, set[str]] = {uuid: set() for uuid in lookups.deleted}
    keys: set[tuple[str, str]] = set()
    for mention in mentions:
        keys.add(mention_key(mention))
        if mention.entity_uuid in attached:
            attached[mention.entity_uuid].add(attached_mention(mention.episode_uuid))
    for entity_uuid, fact_uuid in touching:
        if entity_uuid in attached:
            attached[entity_uuid].add(fact_uuid)
    return StoredState(
        entities={e.uuid: e for e in entities},
        facts={f.uuid: f for f in facts},
        mentions=keys,
        attached=attached,
    )


def conflict(correction: Correction, stored: StoredState) -> str | None:
    """Why ``correction`` may not be applied to the graph as ``stored`` (``None``: it may)."""
    before_entities = {e.uuid: e for e in correction.before.entities}
    before_facts = {f.uuid: f for f in correction.before.facts}
    named: list[tuple[str, Mapping[str, Entity | Fact], Mapping[str, Entity | Fact], list[str]]] = [
        ("entity", before_entities, stored.entities, [e.uuid for e in correction.after.entities]),
        ("fact", before_facts, stored.facts, [f.uuid for f in correction.after.facts]),
    ]
    for kind, before, now, created in named:
        for uuid, record in before.items():
            current = now.get(uuid)
            if current is None:
                return f"{kind} {uuid!r} is no longer in the group"
            if comparable(current) != comparable(record):
                changed = _changed_fields(comparable(record), comparable(current))
                return f"{kind} {uuid!r} changed since it was read ({', '.join(changed)})"
        for uuid in created:
            if uuid not in before and uuid in now:
                return f"{kind} {uuid!r} already exists"
    for mention in correction.before.mentions:
        if mention_key(mention) not in stored.mentions:
            return f"episode {mention.episode_uuid!r} no longer mentions entity {mention.entity_uuid!r}"
    for mention in correction.after.mentions:
        if mention_key(mention) in stored.mentions:
            return f"episode {mention.episode_uuid!r} already mentions entity {mention.entity_uuid!r}"
    for uuid, attached in stored.attached.items():
        listed = set(before_facts)
        listed.update(
            attached_mention(m.episode_uuid) for m in correction.before.mentions if m.entity_uuid == uuid
        )
        extra = sorted(attached - listed)
        if extra:
            what = extra[0].replace("mention:", "a mention by episode ", 1)
            return f"entity {uuid!r} gained {what!r} since it was read"
    return None


def _changed_fields(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    return sorted(key for key in old.keys() | new.keys() if old.get(key) != new.get(key))


# --- reading one ----------------------------------------------------------------------------------------
