"""Fulltext (BM25 over FTS5's postings) and vector (numpy cosine) search of the embedded store.

Scores follow the Protocol (higher is better): fulltext hits carry the BM25 score (``-bm25()`` in SQLite's
lower-is-better terms: ``terms``), vector hits the cosine similarity in ``[-1, 1]``.

Both rank candidates in memory over all groups' rows (text) or the group's rows (vectors) and read the
records of the best ones a block at a time with the caller's scope (groups, filters) applied in SQL:
a selective filter costs more blocks, never wrong results. Only the final hits are decoded.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Generic, TypeVar

import numpy as np

from ..model import Entity, Episode, Fact
from ..store import EntityFilter, FactFilter, Hit
from ..temporal import TimeFilter, latest_creation, latest_start
from .codec import ENTITIES, EPISODES, FACTS, Table, decode_entity, decode_episode, decode_fact, to_us_or_none
from .db import Db
from .entity_time import entity_clause, hits_as_of
from .fts import query_words
from .reads import IN_LIST, as_json, episode_clause, fact_clause
from .vectors import NO_TIMES, Kind, Times

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class _Spec(Generic[T]):
    """One searchable table: its rows and how they are decoded."""

    table: Table
    decode: Callable[[Sequence[Any]], T]


_ENTITIES = _Spec(ENTITIES, decode_entity)
_FACTS = _Spec(FACTS, decode_fact)
_EPISODES = _Spec(EPISODES, decode_episode)

Scope = tuple[str, str, list[Any]]
"""(JSON list of group ids, SQL condition on alias ``x``, its parameters)."""
Candidate = tuple[str, float, Sequence[Any]]
"""(uuid, score, undecoded record): records are decoded only once they made the result."""


def search_entities_text(
    db: Db, group_ids: Sequence[str], query: str, limit: int, flt: EntityFilter
) -> list[Hit[Entity]]:
    hits = _text_search(db, _ENTITIES, query, limit, group_ids, entity_clause(flt, "x"))
    with db.read() as conn:
        return hits_as_of(conn, hits, flt.time)


def search_facts_text(
    db: Db, group_ids: Sequence[str], query: str, limit: int, flt: FactFilter, now: datetime
) -> list[Hit[Fact]]:
    return _text_search(db, _FACTS, query, limit, group_ids, fact_clause(flt, now, "x"), _latest(flt, now))


def _latest(flt: FactFilter, now: datetime) -> Times:
    """The latest start and creation (epoch microseconds) a fact can have and pass ``flt``: the indexes
    skip the rows past them before any is read (``vectors.Times``)."""
    return to_us_or_none(latest_start(flt.time, now)), to_us_or_none(latest_creation(flt.time, now))


def search_episodes_text(
    db: Db, group_ids: Sequence[str], query: str, limit: int, time: TimeFilter
) -> list[Hit[Episode]]:
    return _text_search(db, _EPISODES, query, limit, group_ids, episode_clause(time, "x"))


def _scope(group_ids: Sequence[str], where: str, params: list[Any]) -> Scope:
    return as_json(sorted(set(group_ids))), where, params


def _in_scope(
    conn: sqlite3.Connection, spec: _Spec[T], key: str, keys: Sequence[object], scope: Scope
) -> dict[Any, Sequence[Any]]:
    """Undecoded records whose ``key`` column is in ``keys`` and that pass ``scope``, by key."""
    groups, where, params = scope
    sql = (
        f"SELECT x.{key}, {spec.table.select('x')} FROM {spec.table.name} AS x"
        f" WHERE x.{key} IN {IN_LIST} AND x.group_id IN {IN_LIST} AND {where}"
    )
    return {row[0]: row[1:] for row in conn.execute(sql, (json.dumps(list(keys)), groups, *params))}


def _hits(spec: _Spec[T], candidates: list[Candidate]) -> list[Hit[T]]:
    return [Hit(item=spec.decode(row), score=score) for _, score, row in candidates]


# --- fulltext -----------------------------------------------------------------------------------------


def _text_search(
    db: Db, spec: _Spec[T], query: str, limit: int, group_ids: Sequence[str],
    condition: tuple[str, list[Any]], latest: Times = NO_TIMES,
) -> list[Hit[T]]:  # fmt: skip
    """BM25 hits for ``query``'s words in the groups among rows passing ``condition``, best first
    (ranking rules: ``terms``); ``latest`` (facts only, as in :func:`_vector_search`) leaves the rows
    begun or recorded later out of the ranking."""
    words = query_words(query)
    if not words or limit <= 0 or not group_ids:
        return []
    scope = _scope(group_ids, *condition)
    found: list[Candidate] = []
    with db.read() as conn:
        index = db.term_index(spec.table.name)
        tokens = db.stemmer.tokens(conn, words)
        for block in index.ranked(tokens, limit, group_ids, latest):  # groups masked already: few misses
            rows = _in_scope(conn, spec, "id", [rowid for rowid, _ in block], scope)
            found += [(rows[i][0], score, rows[i]) for i, score in block if i in rows]
            if len(found) >= limit:
                break
    return _hits(spec, found[:limit])


# --- vectors ------------------------------------------------------------------------------------------


def search_entities_vector(
    db: Db, group_ids: Sequence[str], vector: Sequence[float], limit: int, flt: EntityFilter
) -> list[Hit[Entity]]:
    hits = _vector_search(db, "entities", _ENTITIES, group_ids, vector, limit, entity_clause(flt, "x"))
    return hits_as_of(db.conn, hits, flt.time)


def search_facts_vector(
    db: Db, group_ids: Sequence[str], vector: Sequence[float], limit: int, flt: FactFilter, now: datetime
) -> list[Hit[Fact]]:
    condition = fact_clause(flt, now, "x")
    return _vector_search(db, "facts", _FACTS, group_ids, vector, limit, condition, _latest(flt, now))


def search_episodes_vector(
    db: Db, group_ids: Sequence[str], vector: Sequence[float], limit: int, time: TimeFilter
) -> list[Hit[Episode]]:
    """Episodes by cosine of ``content_embedding``; episodes without one are not candidates."""
    condition = episode_clause(time, "x")
    return _vector_search(db, "episodes", _EPISODES, group_ids, vector, limit, condition)


def _vector_search(
    db: Db, kind: Kind, spec: _Spec[T], group_ids: Sequence[str], vector: Sequence[float], limit: int,
    condition: tuple[str, list[Any]], latest: Times = NO_TIMES,
) -> list[Hit[T]]:  # fmt: skip
    """Cosine top-``limit`` over the groups' vectors of ``kind``, among rows passing ``condition``: each
    group's matrix yields candidates best-first, read in blocks until ``limit`` passed. ``latest``
    (epoch microseconds, facts only: ``vectors.Times``) leaves the rows that began or were recorded later
    out of the blocks: part of ``condition`` checked in memory, so a search as of an early time, or of
    what was known then, reads few rows from SQLite."""
    if limit <= 0:
        return []
    query = np.asarray(vector, dtype=np.float32)
    found: list[Candidate] = []
    for group_id in sorted(set(group_ids)):
        index = db.vector_index(kind, group_id)
        if index is None:
            return []
        scope = _scope([group_id], *condition)
        mine: list[Candidate] = []
        for block in index.ranked(query, first=max(2 * limit, 16), latest=latest):
            rows = _in_scope(db.conn, spec, "uuid", [uuid for uuid, _ in block], scope)
            mine += [(uuid, score, rows[uuid]) for uuid, score in block if uuid in rows]
            if len(mine) >= limit:
                break
        found += mine[:limit]
    found.sort(key=lambda c: (-c[1], c[0]))
    return _hits(spec, found[:limit])
