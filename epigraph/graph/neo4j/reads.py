"""The Neo4j store's reads: episodes by uuid, time or mention, facts by uuid or endpoints, mention
counts, the mentions of entities, the six text / vector searches (the policy is in ``search``) and the
graph's stats. ``Neo4jStore`` delegates each of these methods here (the connection passed in; a vector
search gets its index's dimension).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TypeVar

from ..entity_time import bounded
from ..model import Entity, Episode, EpisodeStatus, Fact, Mention, to_utc
from ..store import ANY_ENTITY, ANY_FACT, CURRENT, EntityFilter, FactFilter, Hit, StoreStats, TimeFilter
from . import convert, entity_time, search
from . import cypher as q
from . import cypher_edit as qe
from . import cypher_entity_time as qt
from . import cypher_search as qs
from .connection import Connection
from .filters import episode_params, fact_params, narrowings

T = TypeVar("T", Entity, Fact)


def _unique(values: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(values))


def _in_order(items: list[T], uuids: Sequence[str]) -> list[T]:
    """``items`` in the order of ``uuids`` (first occurrence); missing ones skipped."""
    by_uuid = {item.uuid: item for item in items}
    return [by_uuid[u] for u in _unique(uuids) if u in by_uuid]


async def get_episode(conn: Connection, group_id: str, uuid: str) -> Episode | None:
    records = await conn.read(q.GET_EPISODE, {"group_id": group_id, "uuid": uuid})
    return convert.episode_from(records[0]["ep"]) if records else None


async def episodes(
    conn: Connection,
    group_id: str,
    *,
    since: datetime | None = None,
    until: datetime | None = None,
    status: EpisodeStatus | None = None,
    limit: int = 100,
    newest_first: bool = True,
) -> list[Episode]:
    if limit <= 0:
        return []
    params = {
        "group_id": group_id,
        "since": None if since is None else to_utc(since),
        "until": None if until is None else to_utc(until),
        "status": None if status is None else EpisodeStatus(status).value,
        "limit": limit,
    }
    statement = q.EPISODES_NEWEST if newest_first else q.EPISODES_OLDEST
    return [convert.episode_from(r["ep"]) for r in await conn.read(statement, params)]


async def episodes_mentioning(
    conn: Connection, group_id: str, entity_uuid: str, limit: int = 100, time: TimeFilter = CURRENT
) -> list[Episode]:
    if limit <= 0:
        return []
    params = {"group_id": group_id, "entity_uuid": entity_uuid, "limit": limit, **episode_params(time)}
    return [convert.episode_from(r["ep"]) for r in await conn.read(q.EPISODES_MENTIONING, params)]


async def episodes_around(
    conn: Connection, group_id: str, uuids: Sequence[str], window: int = 1, time: TimeFilter = CURRENT
) -> list[Episode]:
    if not uuids or window <= 0:
        return []
    params = {"group_id": group_id, "uuids": list(dict.fromkeys(uuids)), "window": window}
    params.update(episode_params(time))
    found = [convert.episode_from(r["ep"]) for r in await conn.read(q.EPISODES_AROUND, params)]
    return sorted(found, key=lambda e: (e.reference_time, e.created_at, e.uuid))


async def get_facts(conn: Connection, group_id: str, uuids: Sequence[str]) -> list[Fact]:
    if not uuids:
        return []
    records = await conn.read(q.GET_FACTS, {"group_id": group_id, "uuids": _unique(uuids)})
    return _in_order([convert.fact_from(r["fact"]) for r in records], uuids)


async def facts_between(
    conn: Connection, group_id: str, a_uuid: str, b_uuid: str, flt: FactFilter = ANY_FACT
) -> list[Fact]:
    params = {"group_id": group_id, "a": a_uuid, "b": b_uuid, **fact_params(flt)}
    return [convert.fact_from(r["fact"]) for r in await conn.read(q.FACTS_BETWEEN, params)]


async def facts_around(
    conn: Connection, group_id: str, entity_uuids: Sequence[str], flt: FactFilter = ANY_FACT, limit: int = 200
) -> list[Fact]:
    if not entity_uuids or limit <= 0:
        return []
    params = {"group_id": group_id, "uuids": _unique(entity_uuids), "limit": limit, **fact_params(flt)}
    return [convert.fact_from(r["fact"]) for r in await conn.read(q.FACTS_AROUND, params)]


async def mention_counts(
    conn: Connection, group_id: str, entity_uuids: Sequence[str], time: TimeFilter = CURRENT
) -> dict[str, int]:
    counts = dict.fromkeys(entity_uuids, 0)
    if not counts:
        return counts
    if bounded(time):
        return await entity_time.mention_counts(conn, group_id, list(counts), time)
    params = {"group_id": group_id, "uuids": list(counts)}
    counts.update({r["uuid"]: int(r["n"]) for r in await conn.read(q.MENTION_COUNTS, params)})
    return counts


async def search_entities_text(
    conn: Connection, group_ids: Sequence[str], query: str, limit: int = 10, flt: EntityFilter = ANY_ENTITY
) -> list[Hit[Entity]]:
    pairs = await search.fulltext(
        conn, qt.SEARCH_ENTITIES_TEXT, index=q.ENTITY_TEXT_INDEX, fields=q.ENTITY_TEXT_FIELDS,
        group_ids=group_ids, text=query, limit=limit, uuid_of=lambda item: item["uuid"],
        params=entity_time.search_params(flt),
    )  # fmt: skip
    hits = [Hit(convert.entity_from(item), score) for item, score in pairs]
    return await entity_time.hits_as_of(conn, hits, flt.time)


async def search_facts_text(
    conn: Connection, group_ids: Sequence[str], query: str, limit: int = 10, flt: FactFilter = ANY_FACT
) -> list[Hit[Fact]]:
    pairs = await search.fulltext(
        conn, qs.SEARCH_FACTS_TEXT, index=q.FACT_TEXT_INDEX, fields=q.FACT_TEXT_FIELDS,
        group_ids=group_ids, text=query, limit=limit, uuid_of=lambda item: item["props"]["uuid"],
        params=fact_params(flt),
    )  # fmt: skip
    return [Hit(convert.fact_from(item), score) for item, score in pairs]


async def search_episodes_text(
    conn: Connection, group_ids: Sequence[str], query: str, limit: int = 10, time: TimeFilter = CURRENT
) -> list[Hit[Episode]]:
    pairs = await search.fulltext(
        conn, qs.SEARCH_EPISODES_TEXT, index=q.EPISODE_TEXT_INDEX, fields=q.EPISODE_TEXT_FIELDS,
        group_ids=group_ids, text=query, limit=limit, uuid_of=lambda item: item["uuid"],
        params=episode_params(time),
    )  # fmt: skip
    return [Hit(convert.episode_from(item), score) for item, score in pairs]


async def search_entities_vector(
    conn: Connection,
    group_ids: Sequence[str],
    vector: Sequence[float],
    limit: int = 10,
    flt: EntityFilter = ANY_ENTITY,
    *,
    index_dim: int | None,
) -> list[Hit[Entity]]:
    pairs = await search.vector(
        conn, qt.SEARCH_ENTITIES_VECTOR, qt.SCAN_ENTITIES_VECTOR, index=q.ENTITY_VECTOR_INDEX,
        index_dim=index_dim, group_ids=group_ids, query=vector,
        limit=limit, embedding_of=lambda item: item["name_embedding"], uuid_of=lambda item: item["uuid"],
        params=entity_time.search_params(flt),
    )  # fmt: skip
    hits = [Hit(convert.entity_from(item), score) for item, score in pairs]
    return await entity_time.hits_as_of(conn, hits, flt.time)


async def search_facts_vector(
    conn: Connection,
    group_ids: Sequence[str],
    vector: Sequence[float],
    limit: int = 10,
    flt: FactFilter = ANY_FACT,
    *,
    index_dim: int | None,
) -> list[Hit[Fact]]:
    pairs = await search.vector(
        conn, qs.SEARCH_FACTS_VECTOR, qs.SCAN_FACTS_VECTOR, index=q.FACT_VECTOR_INDEX,
        index_dim=index_dim, group_ids=group_ids, query=vector,
        limit=limit, embedding_of=lambda item: item["props"]["text_embedding"],
        uuid_of=lambda item: item["props"]["uuid"], params=fact_params(flt),
        narrowings=narrowings(flt.time),
    )  # fmt: skip
    return [Hit(convert.fact_from(item), score) for item, score in pairs]


async def search_episodes_vector(
    conn: Connection,
    group_ids: Sequence[str],
    vector: Sequence[float],
    limit: int = 10,
    time: TimeFilter = CURRENT,
    *,
    index_dim: int | None,
) -> list[Hit[Episode]]:
    pairs = await search.vector(
        conn, qs.SEARCH_EPISODES_VECTOR, qs.SCAN_EPISODES_VECTOR, index=q.EPISODE_VECTOR_INDEX,
        index_dim=index_dim, group_ids=group_ids, query=vector,
        limit=limit, embedding_of=lambda item: item["content_embedding"],
        uuid_of=lambda item: item["uuid"], params=episode_params(time),
    )  # fmt: skip
    return [Hit(convert.episode_from(item), score) for item, score in pairs]


async def stats(conn: Connection, group_id: str | None = None) -> StoreStats:
    params = {"group_id": group_id, **fact_params(ANY_FACT)}
    return convert.stats_from((await conn.read(q.STATS, params, what="stats"))[0])


async def mentions(conn: Connection, group_id: str, entity_uuids: Sequence[str]) -> list[Mention]:
    if not entity_uuids:
        return []
    params = {"group_id": group_id, "uuids": _unique(entity_uuids)}
    return [convert.mention_from(group_id, r) for r in await conn.read(qe.MENTIONS_OF, params)]
