"""Fulltext (FTS5 BM25) and vector (numpy cosine) search of the embedded store.

Scores follow the Protocol (higher is better): fulltext hits carry ``-bm25`` (SQLite's bm25() is
lower-is-better), vector hits the cosine similarity in ``[-1, 1]``.
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
from .codec import ENTITIES, EPISODES, FACTS, Table, decode_entity, decode_episode, decode_fact
from .db import Db
from .fts import RANK_WINDOW, informative_expression, query_terms
from .reads import IN_LIST, as_json, fact_clause, label_clause
from .vectors import Kind

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class _Spec(Generic[T]):
    """One searchable table: its rows, FTS5 index, vector kind, and how rows are ranked and decoded."""

    table: Table
    fts: str
    rank: str
    decode: Callable[[Sequence[Any]], T]


_ENTITIES = _Spec(ENTITIES, "entities_fts", "bm25(entities_fts, 10.0, 5.0, 1.0)", decode_entity)
"""bm25 column weights for (name, aliases, summary): a name match outranks a passing mention."""
_FACTS = _Spec(FACTS, "facts_fts", "bm25(facts_fts)", decode_fact)
_EPISODES = _Spec(EPISODES, "episodes_fts", "bm25(episodes_fts)", decode_episode)

Scope = tuple[str, str, list[Any]]
"""(JSON list of group ids, SQL condition on alias ``x``, its parameters)."""
Candidate = tuple[str, float, Sequence[Any]]
"""(uuid, score, undecoded record): records are decoded only once they made the result."""


def search_entities_text(
    conn: sqlite3.Connection, group_ids: Sequence[str], query: str, limit: int, flt: EntityFilter
) -> list[Hit[Entity]]:
    return _text_search(conn, _ENTITIES, query, limit, _scope(group_ids, *label_clause(flt, "x")))


def search_facts_text(
    conn: sqlite3.Connection, group_ids: Sequence[str], query: str, limit: int, flt: FactFilter, now: datetime
) -> list[Hit[Fact]]:
    return _text_search(conn, _FACTS, query, limit, _scope(group_ids, *fact_clause(flt, now, "x")))


def search_episodes_text(
    conn: sqlite3.Connection, group_ids: Sequence[str], query: str, limit: int
) -> list[Hit[Episode]]:
    return _text_search(conn, _EPISODES, query, limit, _scope(group_ids, "1", []))


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
    conn: sqlite3.Connection, spec: _Spec[T], query: str, limit: int, scope: Scope
) -> list[Hit[T]]:
    """BM25 hits for ``query`` within ``scope`` over the informative words (see ``fts``), best first;
    scores are ``-bm25``."""
    terms = query_terms(query)
    if not terms or limit <= 0 or scope[0] == "[]":
        return []
    expression = informative_expression(conn, spec.fts, terms)
    found = _ranked(conn, spec, expression, scope, limit) if expression else []
    found.sort(key=lambda candidate: -candidate[1])  # a widened window may add better-ranked rows
    return _hits(spec, found)


def _ranked(
    conn: sqlite3.Connection, spec: _Spec[T], expression: str, scope: Scope, need: int
) -> list[Candidate]:
    """The best ``need`` rows matching ``expression`` in scope.

    Each pass scores the newest ``window`` matches in the FTS index alone, sorts them by rank and reads
    the records of the best candidates a block at a time (scope applied in SQL). The window widens only
    when a full window did not yield ``need`` rows.
    """
    found: list[Candidate] = []
    examined: set[int] = set()
    window = RANK_WINDOW
    while True:
        sql = (
            f"SELECT rowid, {spec.rank} FROM {spec.fts} WHERE {spec.fts} MATCH ? ORDER BY rowid DESC LIMIT ?"
        )
        scored = conn.execute(sql, (expression, window)).fetchall()
        fresh = sorted((rank, rowid) for rowid, rank in scored if rowid not in examined)
        for start in range(0, len(fresh), max(2 * need, 16)):
            block = fresh[start : start + max(2 * need, 16)]
            examined.update(rowid for _, rowid in block)
            rows = _in_scope(conn, spec, "id", [rowid for _, rowid in block], scope)
            found += [(rows[i][0], -rank, rows[i]) for rank, i in block if i in rows]
            if len(found) >= need:
                return found[:need]
        if len(scored) < window:
            return found
        window *= 8


# --- vectors ------------------------------------------------------------------------------------------


def search_entities_vector(
    db: Db, group_ids: Sequence[str], vector: Sequence[float], limit: int, flt: EntityFilter
) -> list[Hit[Entity]]:
    return _vector_search(db, "entities", _ENTITIES, group_ids, vector, limit, label_clause(flt, "x"))


def search_facts_vector(
    db: Db, group_ids: Sequence[str], vector: Sequence[float], limit: int, flt: FactFilter, now: datetime
) -> list[Hit[Fact]]:
    return _vector_search(db, "facts", _FACTS, group_ids, vector, limit, fact_clause(flt, now, "x"))


def search_episodes_vector(
    db: Db, group_ids: Sequence[str], vector: Sequence[float], limit: int
) -> list[Hit[Episode]]:
    """Episodes by cosine of ``content_embedding``; episodes without one are not candidates."""
    return _vector_search(db, "episodes", _EPISODES, group_ids, vector, limit, ("1", []))


def _vector_search(
    db: Db, kind: Kind, spec: _Spec[T], group_ids: Sequence[str], vector: Sequence[float], limit: int,
    condition: tuple[str, list[Any]],
) -> list[Hit[T]]:  # fmt: skip
    """Cosine top-``limit`` over the groups' vectors of ``kind``, among rows passing ``condition``.

    Each group's matrix yields candidates best-first; their records are read a block at a time with
    the filter applied in SQL, until ``limit`` passed: a selective filter costs more blocks, never
    wrong results. Only the final hits are decoded.
    """
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
        for block in index.ranked(query, first=max(2 * limit, 16)):
            rows = _in_scope(db.conn, spec, "uuid", [uuid for uuid, _ in block], scope)
            mine += [(uuid, score, rows[uuid]) for uuid, score in block if uuid in rows]
            if len(mine) >= limit:
                break
        found += mine[:limit]
    found.sort(key=lambda c: (-c[1], c[0]))
    return _hits(spec, found[:limit])
