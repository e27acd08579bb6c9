"""Entities in time in the Neo4j store: ``graph.entity_time``'s rules over Cypher.

The entity searches put :func:`~epigraph.graph.neo4j.cypher_entity_time.exists_pred` in their
statements; the other reads fetch their entities as stored, read the episodes that mention them
(:func:`mentioned`, only when the filter has a bound) and apply ``entity_time.entity_as_of`` and
``mentions_passing``, as the embedded store does (``graph.embedded.entity_time``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..entity_time import (
    Mentioned,
    bounded,
    by_group,
    entities_as_of,
    hits_then,
    mentions_passing,
    named_then,
)
from ..model import Entity
from ..store import EntityFilter, Hit, TimeFilter
from . import convert
from . import cypher_entity_time as qt
from .connection import Connection
from .filters import entity_params, episode_params


def search_params(flt: EntityFilter) -> dict[str, Any]:
    """The parameters of an entity search's statement: its labels and its time bounds."""
    return {**entity_params(flt), **episode_params(flt.time)}


async def mentioned(conn: Connection, group_id: str, uuids: Sequence[str]) -> dict[str, list[Mentioned]]:
    """The episodes mentioning each of the group's entities ``uuids``, by entity uuid."""
    params = {"group_id": group_id, "uuids": sorted(set(uuids))}
    found: dict[str, list[Mentioned]] = {}
    for r in await conn.read(qt.MENTIONED, params, what="mentioned"):
        said, recorded = convert.from_micros(r["said"]), convert.from_micros(r["recorded"])
        found.setdefault(r["uuid"], []).append(Mentioned(said, recorded, r["text"] or ""))
    return found


async def as_of(conn: Connection, group_id: str, entities: list[Entity], time: TimeFilter) -> list[Entity]:
    """``entity_time.entities_as_of`` over the group's ``entities`` (unchanged without a bound)."""
    if not bounded(time) or not entities:
        return entities
    return entities_as_of(entities, await mentioned(conn, group_id, [e.uuid for e in entities]), time)


async def hits_as_of(conn: Connection, hits: list[Hit[Entity]], time: TimeFilter) -> list[Hit[Entity]]:
    """Entity hits (of any groups) as they were under ``time``."""
    if not bounded(time):
        return hits
    then: dict[tuple[str, str], Entity] = {}
    for group_id, mine in by_group(h.item for h in hits).items():
        then.update(((e.group_id, e.uuid), e) for e in await as_of(conn, group_id, mine, time))
    return hits_then(hits, then)


async def by_names_as_of(
    conn: Connection, group_id: str, found: dict[str, list[Entity]], time: TimeFilter
) -> dict[str, list[Entity]]:
    """An ``entities_by_names`` answer as it was under ``time``."""
    if not bounded(time):
        return found
    unique = list({e.uuid: e for es in found.values() for e in es}.values())
    return named_then(found, {e.uuid: e for e in await as_of(conn, group_id, unique, time)})


async def mention_counts(
    conn: Connection, group_id: str, uuids: Sequence[str], time: TimeFilter
) -> dict[str, int]:
    """Mentions by the episodes passing ``time`` (a bound is required: without one the store counts in
    its statement)."""
    found = await mentioned(conn, group_id, uuids)
    return {uuid: mentions_passing(found.get(uuid, ()), time) for uuid in uuids}
