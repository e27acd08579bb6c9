"""Constraints and indexes of the Neo4j backend: create if missing, verify what is there.

``setup(dim)`` is idempotent (``IF NOT EXISTS``) and cheap when everything already exists (one
``SHOW INDEXES``). Before creating anything it checks the indexes that exist under our names (``IF NOT
EXISTS`` would silently keep an old definition): an index on another label, a vector index over other
properties or with another similarity function, raises :class:`~epigraph.errors.SchemaMismatch`. A vector
index of another dimension is recreated while the graph holds no embedding at all, and raises
``SchemaMismatch`` once it does (the embedded store's rule: the dimension is fixed by the first vector).
A fulltext index over other fields or with another analyzer (graphs set up before the text indexes used
``english``, or before they carried the exact-lookup fields of the keyword indexes they replaced) is
dropped and recreated: it holds nothing but what Neo4j derives from the graph again while it
repopulates, which ``setup`` waits for. Indexes of earlier versions that nothing
uses any more (``ddl.OBSOLETE_INDEXES``) are dropped.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ...errors import SchemaMismatch, StoreError
from . import convert, ddl
from . import cypher as q
from . import cypher_search as qs
from .connection import Connection


@dataclass(frozen=True, slots=True)
class IndexSpec:
    type: str
    entity_type: str
    label: str
    properties: tuple[str, ...]
    analyzer: str | None = None  # fulltext only


_NAME = re.compile(r"(?:CONSTRAINT|INDEX) (\w+) IF NOT EXISTS")


def _name(statement: str) -> str:
    match = _NAME.search(statement)
    assert match is not None, statement
    return match.group(1)


def _fields(fields: tuple[tuple[str, float], ...], *exact: str) -> tuple[str, ...]:
    return (*(name for name, _ in fields), *exact, "group_id")


VECTOR_SPECS = {
    q.ENTITY_VECTOR_INDEX: IndexSpec("VECTOR", "NODE", "Entity", ("name_embedding",)),
    q.FACT_VECTOR_INDEX: IndexSpec("VECTOR", "RELATIONSHIP", "RELATES_TO", ("text_embedding",)),
    q.EPISODE_VECTOR_INDEX: IndexSpec("VECTOR", "NODE", "Episode", ("content_embedding",)),
}
FULLTEXT_SPECS = {
    q.ENTITY_TEXT_INDEX: IndexSpec(
        "FULLTEXT",
        "NODE",
        "Entity",
        _fields(q.ENTITY_TEXT_FIELDS, q.ENTITY_NAME_KEYS_FIELD),
        q.TEXT_ANALYZER,
    ),
    q.FACT_TEXT_INDEX: IndexSpec(
        "FULLTEXT",
        "RELATIONSHIP",
        "RELATES_TO",
        _fields(q.FACT_TEXT_FIELDS, q.FACT_EPISODES_FIELD),
        q.TEXT_ANALYZER,
    ),
    q.EPISODE_TEXT_INDEX: IndexSpec(
        "FULLTEXT", "NODE", "Episode", _fields(q.EPISODE_TEXT_FIELDS), q.TEXT_ANALYZER
    ),
}
ALL_STATEMENTS = (*ddl.CONSTRAINTS, *ddl.RANGE_INDEXES, *ddl.FULLTEXT_INDEXES, *ddl.VECTOR_INDEXES)
ALL_NAMES = tuple(_name(s) for s in ALL_STATEMENTS)
AWAIT_SECONDS = 300


async def describe(conn: Connection) -> dict[str, Mapping[str, Any]]:
    """Our indexes (constraints show up as their backing index) by name."""
    names = [*ALL_NAMES, *ddl.OBSOLETE_INDEXES]
    records = await conn.read(ddl.SHOW_INDEXES, {"names": names}, what="schema inspection")
    return {r["name"]: dict(r) for r in records}


def _index_config(info: Mapping[str, Any]) -> Mapping[str, Any]:
    """The ``indexConfig`` map of a ``SHOW INDEXES`` row ({} when absent)."""
    return (info.get("options") or {}).get("indexConfig") or {}


def vector_dimensions(info: Mapping[str, Any]) -> int | None:
    config = _index_config(info)
    dim = config.get("vector.dimensions")
    return None if dim is None else int(dim)


def check(existing: Mapping[str, Mapping[str, Any]], dim: int | None) -> list[str]:
    """Raise SchemaMismatch for an index under one of our names with another definition.

    Returns the vector indexes whose dimension differs from ``dim`` (``None``: do not compare).
    """
    wrong_dim: list[str] = []
    for name, spec in {**VECTOR_SPECS, **FULLTEXT_SPECS}.items():
        info = existing.get(name)
        if info is None:
            continue
        # A fulltext index's fields and analyzer are not a mismatch: setup recreates it (stale_fulltext).
        fulltext = spec.type == "FULLTEXT"
        actual = IndexSpec(
            str(info.get("type")),
            str(info.get("entityType")),
            ",".join(info.get("labelsOrTypes") or []),
            spec.properties if fulltext else tuple(info.get("properties") or ()),
            spec.analyzer,
        )
        if actual != spec:
            raise SchemaMismatch(
                f"neo4j index {name!r} is {actual}, expected {spec}; "
                f"drop it (DROP INDEX {name}) and run setup again"
            )
        if spec.type == "VECTOR":
            _check_similarity(name, info)
            if dim is not None and vector_dimensions(info) != dim:
                wrong_dim.append(name)
    return wrong_dim


def fulltext_analyzer(info: Mapping[str, Any]) -> str | None:
    config = _index_config(info)
    analyzer = config.get("fulltext.analyzer")
    return None if analyzer is None else str(analyzer)


def stale_fulltext(existing: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Our fulltext indexes that exist over other fields or with another analyzer (to be recreated)."""
    return [
        name
        for name, spec in FULLTEXT_SPECS.items()
        if name in existing
        and (
            tuple(existing[name].get("properties") or ()) != spec.properties
            or fulltext_analyzer(existing[name]) != spec.analyzer
        )
    ]


async def _drop_stale(conn: Connection, names: list[str]) -> None:
    """Drop the fulltext indexes in ``names``; setup then creates them as their spec says.

    Loses nothing: a fulltext index is derived data, repopulated by Neo4j from the graph (setup waits
    for it). Fulltext searches of other clients fail or come back short until it is online again.
    """
    for name in names:
        await conn.run_write(ddl.DROP_INDEX, {"name": name}, what="schema setup")


def _check_similarity(name: str, info: Mapping[str, Any]) -> None:
    config = _index_config(info)
    function = str(config.get("vector.similarity_function", "")).lower()
    if function != "cosine":
        raise SchemaMismatch(f"neo4j vector index {name!r} uses {function!r} similarity, expected 'cosine'")


def _complete(existing: Mapping[str, Mapping[str, Any]]) -> bool:
    return all(existing.get(n, {}).get("state") == "ONLINE" for n in ALL_NAMES)


async def _resize(
    conn: Connection, existing: Mapping[str, Mapping[str, Any]], names: list[str], dim: int
) -> None:
    """Vector indexes of another dimension: recreated while no embedding is stored, else SchemaMismatch.

    The same rule as the embedded store: the dimension can change until the first vector is written.
    """
    if not names:
        return
    record = (await conn.read(ddl.HAS_VECTORS, what="schema inspection"))[0]
    if record["has_vectors"]:
        name = names[0]
        raise SchemaMismatch(
            f"neo4j vector index {name!r} has {vector_dimensions(existing[name])} dimensions but setup asked "
            f"for {dim}, and the graph already holds embeddings of the old size. Use the embedding model the "
            f"graph was built with, or re-embed into a fresh database"
        )
    for name in names:
        await conn.run_write(ddl.DROP_INDEX, {"name": name}, what="schema setup")


BACKFILL_BATCH = 10_000
START_BATCH = 2_000  # facts read back whole (embedding included) to compute their keys


async def _backfill(conn: Connection, statement: str) -> None:
    """Give the facts written before an index existed its key, in batches.

    Runs when setup creates that index; on a new graph, one statement that finds nothing. Until it is
    done, an exact vector scan would miss the facts without a key, so setup does it before returning.
    """
    params = {"batch": BACKFILL_BATCH, "unbounded": qs.START_UNBOUNDED}
    while (await conn.run_write(statement, params, what="schema migration"))[0]["updated"]:
        pass


async def _backfill_starts(conn: Connection) -> None:
    """Give the facts written before ``start_us`` their ``stated_at`` (from their stored episodes) and
    their ``start_us``, computed here by ``graph.temporal.start_key`` from each decoded fact."""
    batch = {"batch": START_BATCH}
    while found := await conn.run_write(qs.FACTS_WITHOUT_START, batch, what="schema migration"):
        facts = [convert.fact_from(record["fact"]) for record in found]
        rows = [{"group_id": f.group_id, "uuid": f.uuid, "start_us": convert.start_us(f)} for f in facts]
        await conn.run_write(qs.SET_STARTS, {"rows": rows}, what="schema migration")


async def _backfill_known_from(conn: Connection) -> None:
    await _backfill(conn, qs.BACKFILL_KNOWN_FROM)


# The indexes on a key every fact must carry, and the migration that gives it to the facts of a graph
# written before the index existed.
MIGRATIONS: dict[str, Callable[[Connection], Awaitable[None]]] = {
    ddl.FACT_START_INDEX: _backfill_starts,
    ddl.FACT_KNOWN_FROM_INDEX: _backfill_known_from,
}


async def setup(conn: Connection, dim: int) -> None:
    """Create what is missing, wait until every index is online, verify the result."""
    if not isinstance(dim, int) or isinstance(dim, bool) or dim <= 0:
        raise StoreError(f"embedding_dim must be a positive int, got {dim!r}")
    existing = await describe(conn)
    wrong_dim = check(existing, dim)
    stale = stale_fulltext(existing)
    obsolete = [name for name in ddl.OBSOLETE_INDEXES if name in existing]
    if _complete(existing) and not wrong_dim and not stale and not obsolete:
        return
    await _resize(conn, existing, wrong_dim, dim)
    for index, migrate in MIGRATIONS.items():
        if index not in existing:
            await migrate(conn)
    await _drop_stale(conn, stale)
    for name in obsolete:
        await conn.run_write(ddl.DROP_INDEX, {"name": name}, what="schema setup")
    for statement in ALL_STATEMENTS:
        params = {"dim": dim} if statement in ddl.VECTOR_INDEXES else None
        try:
            await conn.run_write(statement, params, what="schema setup")
        except StoreError:
            # A concurrent setup may have created the same rule first; the re-check below decides.
            if _name(statement) not in await describe(conn):
                raise
    await conn.run_write(ddl.AWAIT_INDEXES, {"timeout": AWAIT_SECONDS}, what="waiting for indexes")
    final = await describe(conn)
    if stale_fulltext(final):
        raise SchemaMismatch(
            f"neo4j fulltext indexes {stale_fulltext(final)} lack their fields or analyzer after setup "
            "(concurrent setup by an older epigraph?)"
        )
    if check(final, dim):
        raise SchemaMismatch(
            f"neo4j vector indexes do not have {dim} dimensions after setup (concurrent setup?)"
        )
