"""What a person names in a correction, resolved against the group: entities (a uuid, a name or an alias,
exactly), facts and corrections (by uuid), relations (free words made SCREAMING_SNAKE_CASE)."""

from __future__ import annotations

import re

from ..errors import CorrectionNotFound, EntityNotFound, FactNotFound, UsageError
from ..graph.corrections import Correction
from ..graph.model import Entity, Fact, check_relation, normalize_name
from ..graph.store import CorrectionReads, GraphReads
from ..search.entity import closest_names, find_entities

EntityRef = str | Entity
"""An entity as a person names it: its uuid, its name or an alias (exact, case-insensitive), or the
Entity itself (which must be of the correction's group)."""


async def resolve_entity(store: GraphReads, group_id: str, ref: EntityRef) -> Entity | None:
    """The one entity ``ref`` denotes in the group, or None when it denotes none.

    Raises UsageError when a name denotes several (pass a uuid) or an Entity of another group is given.
    """
    if isinstance(ref, Entity):
        if ref.group_id != group_id:
            raise UsageError(
                f"entity {ref.name!r} is in group {ref.group_id!r}, not {group_id!r}: corrections never "
                "cross groups"
            )
        ref = ref.uuid
    text = ref.strip()
    if not text:
        raise UsageError("an entity is named by a uuid, a name or an alias; got an empty string")
    found = (await find_entities(store, group_id, [text])).get(text, [])
    if len(found) > 1:
        listed = ", ".join(f"{e.name!r} ({e.uuid})" for e in found[:5])
        raise UsageError(f"{text!r} names {len(found)} entities in group {group_id!r}: {listed}; pass a uuid")
    return found[0] if found else None


async def entities_named(store: GraphReads, group_id: str, ref: EntityRef) -> list[Entity]:
    """Every entity ``ref`` denotes in the group (a name several share: all of them); EntityNotFound
    with the closest names when none."""
    if isinstance(ref, Entity):
        return [await require_entity(store, group_id, ref)]
    text = ref.strip()
    found = (await find_entities(store, group_id, [text])).get(text, []) if text else []
    if not found:
        raise EntityNotFound(ref, group_id, closest=await closest_names(store, [group_id], ref))
    return found


async def require_entity(store: GraphReads, group_id: str, ref: EntityRef) -> Entity:
    """:func:`resolve_entity`, or EntityNotFound with the closest names."""
    entity = await resolve_entity(store, group_id, ref)
    if entity is None:
        name = ref.name if isinstance(ref, Entity) else ref
        raise EntityNotFound(name, group_id, closest=await closest_names(store, [group_id], name))
    return entity


async def require_fact(store: GraphReads, group_id: str, uuid: str) -> Fact:
    found = await store.get_facts(group_id, [uuid])
    if not found:
        raise FactNotFound(uuid, group_id)
    return found[0]


async def require_correction(store: CorrectionReads, group_id: str, uuid: str) -> Correction:
    found = await store.get_correction(group_id, uuid)
    if found is None:
        raise CorrectionNotFound(uuid, group_id)
    return found


def relation_name(words: str) -> str:
    """A relation from free words: ``works at`` -> ``WORKS_AT`` (UsageError if nothing is left)."""
    name = re.sub(r"[^A-Za-z0-9]+", "_", words).strip("_").upper()
    try:
        return check_relation(name)
    except ValueError as exc:
        raise UsageError(f"relation {words!r}: {exc}") from None


def entity_name(text: str) -> str:
    """A name as given, outer whitespace removed; UsageError when nothing is left of it."""
    name = " ".join(text.split())
    if not normalize_name(name):
        raise UsageError(f"an entity name needs a letter or a digit, got {text!r}")
    return name
