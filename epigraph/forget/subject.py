"""Whom a caller asks to forget: an entity named by its id, its name or an alias, and the spellings of
its name taken out of what stays.

A name or alias that denotes two entities is refused (:class:`~epigraph.errors.AmbiguousName`, listing
their ids), unless the caller gives the id. The spellings are the entity's name and aliases and the
caller's ``also`` (a nickname the graph never linked); a spelling that is also the name or an alias of an
entity that stays is not scrubbed (the other "Dana" keeps her name), and is counted in ``shared``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..errors import AmbiguousName, EntityNotFound, UsageError
from ..graph.model import Entity, normalize_name
from ..graph.store import GraphReads
from ..search.entity import find_entities


@dataclass(frozen=True, slots=True)
class Subject:
    """The entity to forget and the spellings to scrub."""

    entity: Entity
    names: tuple[str, ...]
    shared: int = 0
    """Spellings left in place: another entity of the group is called so too."""


async def find_subject(store: GraphReads, group_id: str, ref: str, also: Sequence[str] = ()) -> Subject:
    """The one entity ``ref`` (an id, a name or an alias) denotes in the group, with its spellings."""
    text = ref.strip()
    if not text:
        raise UsageError("forget names an entity by its id, its name or an alias; got an empty string")
    found = (await find_entities(store, group_id, [text])).get(text, [])
    if not found:
        raise EntityNotFound(text, group_id)
    if len(found) > 1:
        raise AmbiguousName(group_id, sorted(e.uuid for e in found))
    entity = found[0]
    spellings = list(dict.fromkeys(n for n in (entity.name, *entity.aliases, *also) if n.strip()))
    others = await store.entities_by_names(group_id, spellings)
    kept = [n for n in spellings if all(e.uuid == entity.uuid for e in others.get(n, []))]
    shared = {normalize_name(n) for n in spellings if n not in kept}
    return Subject(entity, tuple(kept), len(shared))
