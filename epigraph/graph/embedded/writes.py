"""Writes of the embedded store: the atomic episode write and the provenance-aware delete.

Both run in one ``BEGIN IMMEDIATE`` transaction (``Db.write``); the vector matrices are updated only
after COMMIT. Upserts are keyed by ``(group_id, uuid)`` and replace the whole record, so writing the
same thing twice changes nothing; records whose digest matches the stored one are skipped altogether (an
episode write re-sends every entity it touches, most of them unchanged). New rows reach the fulltext
indexes through one ``INSERT ... SELECT`` per upsert (``schema.fts_index_new``), updates and deletes
through the schema's triggers. Links are resolved to row ids within the write's group: a fact whose
endpoint, or a mention whose episode or entity, is not in the group resolves to NULL, NOT NULL rejects
it, and the whole write rolls back.
"""

from __future__ import annotations

import functools
import hashlib
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Generic, TypeVar

from ...errors import EpisodeNotFound
from ..model import Entity, Episode, EpisodeStatus, Fact, Mention, normalize_name
from ..store import DeletionResult, EpisodeWrite
from ..temporal import first_stated, revert_invalidation, start_key
from . import decisions
from .codec import (
    ENTITIES,
    EPISODES,
    FACTS,
    Table,
    blob_array,
    decode_fact,
    entity_row,
    episode_row,
    fact_row,
    from_us,
    to_blob,
    to_us,
    to_us_or_none,
)
from .db import Db
from .reads import IN_LIST, as_json, get_facts
from .schema import fts_index_new
from .vectors import NO_TIMES, Times

T = TypeVar("T", bound=Episode | Entity | Fact)
Record = tuple[T, tuple[Any, ...], bytes | None, bytes]
"""(model, column values, embedding blob, digest): one tuple per written record (fewer allocations, fewer
garbage collections, which a bulk write pays for a caller with a big heap)."""

_ENTITY_ID = "(SELECT id FROM entities WHERE group_id = ? AND uuid = ?)"
_FACT_IDS = f"(SELECT id FROM facts WHERE group_id = ? AND uuid IN {IN_LIST})"


@dataclass(frozen=True, slots=True)
class _Upsert(Generic[T]):
    """How one kind of record is written: its table, row values, embedding and resolved links."""

    table: Table
    row: Callable[[T], tuple[Any, ...]]
    vector: Callable[[T], Sequence[float] | None]
    links: tuple[tuple[str, str], ...] = ()
    """(column, SQL expression) pairs computed at insert time, e.g. an endpoint's row id."""
    link_params: Callable[[T], tuple[Any, ...]] | None = None

    def links_of(self, item: T) -> tuple[Any, ...]:
        return () if self.link_params is None else self.link_params(item)

    def sql(self) -> str:
        names = (*self.table.columns, "digest", *(column for column, _ in self.links))
        values = ", ".join(["?"] * (len(self.table.columns) + 1) + [expr for _, expr in self.links])
        updates = ", ".join(f"{c} = excluded.{c}" for c in names if c not in ("group_id", "uuid"))
        return (
            f"INSERT INTO {self.table.name} ({', '.join(names)}) VALUES ({values})"
            f" ON CONFLICT (group_id, uuid) DO UPDATE SET {updates}"
        )


EPISODE_UPSERT: _Upsert[Episode] = _Upsert(EPISODES, episode_row, lambda e: e.content_embedding)
_ENTITIES: _Upsert[Entity] = _Upsert(ENTITIES, entity_row, lambda e: e.name_embedding)
_FACTS: _Upsert[Fact] = _Upsert(
    FACTS,
    fact_row,
    lambda f: f.text_embedding,
    links=(("source_id", _ENTITY_ID), ("target_id", _ENTITY_ID)),
    link_params=lambda f: (f.group_id, f.source_uuid, f.group_id, f.target_uuid),
)


def upsert_rows(db: Db, conn: sqlite3.Connection, how: _Upsert[T], items: Sequence[T]) -> list[T]:
    """Upsert ``items`` (one group) with their embeddings; returns the ones that changed.

    Unchanged records (same digest) are skipped: no row rewrite, no index or trigger work, no cache update.
    """
    if not items:
        return []
    db.check_vectors([how.vector(item) for item in items])
    latest = {item.uuid: item for item in items}  # one record per uuid, the last one given
    stored = _stored(conn, how.table, items[0].group_id, list(latest))
    changed: list[Record[T]] = []
    for item in latest.values():  # few allocations: most re-sent records are unchanged
        values, blob = how.row(item), to_blob(how.vector(item))
        digest = _digest(values, blob)
        if stored.get(item.uuid, _NOT_STORED)[0] != digest:
            changed.append((item, values, blob, digest))
    rows = [(*values, digest, *how.links_of(item)) for item, values, _, digest in changed]
    if rows:
        table = how.table.name
        last_id = conn.execute(f"SELECT coalesce(max(id), 0) FROM {table}").fetchone()[0]
        conn.executemany(how.sql(), rows)
        conn.execute(fts_index_new(table), (last_id,))  # rows above last_id are the new ones
        new_last = conn.execute(f"SELECT max(id) FROM {table}").fetchone()[0]
        updated = [stored[item.uuid][1] for item, _, _, _ in changed if item.uuid in stored]
        db.after_commit(lambda: db.rows_changed(table, [*updated, *range(last_id + 1, new_last + 1)]))
    new_only = not any(item.uuid in stored for item, *_ in changed)  # no stored vector can be replaced
    _write_vectors(db, conn, how.table, changed, new_only)
    return [item for item, _, _, _ in changed]


def _write_vectors(
    db: Db, conn: sqlite3.Connection, table: Table, changed: list[Record[T]], new_only: bool = False
) -> None:
    key = f"(SELECT id FROM {table.name} WHERE group_id = ? AND uuid = ?)"
    conn.executemany(
        f"DELETE FROM {table.vectors} WHERE id = {key}",
        [(item.group_id, item.uuid) for item, _, blob, _ in changed if blob is None],
    )
    conn.executemany(
        f"INSERT OR REPLACE INTO {table.vectors} (id, vector) VALUES ({key}, ?)",
        [(item.group_id, item.uuid, blob) for item, _, blob, _ in changed if blob is not None],
    )
    if changed:
        group_id = changed[0][0].group_id
        # A generator: arrays are only built when the group's matrix is loaded (apply skips otherwise).
        db.after_commit(
            lambda: db.vectors.apply(
                table.name,
                group_id,
                (
                    (item.uuid, None if b is None else blob_array(b), _times(item))
                    for item, _, b, _ in changed
                ),
                new_only,
            )
        )


def _times(item: Entity | Fact | Episode) -> Times:
    """A record's times in its group's vector index (``vectors.Times``): a fact's start key
    (``temporal.start_key``) and created_at, else none."""
    return (to_us_or_none(start_key(item)), to_us(item.created_at)) if isinstance(item, Fact) else NO_TIMES


def _digest(values: tuple[Any, ...], blob: bytes | None) -> bytes:
    """A fingerprint of a record (columns and embedding): equal digests = nothing to write."""
    sha = hashlib.sha256(repr(values).encode())  # SHA-NI makes it faster than blake2b
    sha.update(b"\x00" + (blob or b""))
    return sha.digest()[:16]


_NOT_STORED = (b"", 0)


def _stored(
    conn: sqlite3.Connection, table: Table, group_id: str, uuids: list[str]
) -> dict[str, tuple[bytes, int]]:
    """(digest, row id) of the records of ``uuids`` already stored, by uuid."""
    sql = f"SELECT uuid, digest, id FROM {table.name} WHERE group_id = ? AND uuid IN {IN_LIST}"
    return {uuid: (digest, id_) for uuid, digest, id_ in conn.execute(sql, (group_id, as_json(uuids)))}


# --- writing ------------------------------------------------------------------------------------------


def save_episode(db: Db, episode: Episode) -> None:
    with db.write() as conn:
        upsert_rows(db, conn, EPISODE_UPSERT, [episode])


def write_episode(db: Db, write: EpisodeWrite) -> bool:
    """The episode write in one ``BEGIN IMMEDIATE`` transaction; with ``write.unless_done``, nothing is
    written (``False``) when the stored episode is already ``done``. The check runs under the database's
    write lock (taken by ``BEGIN IMMEDIATE``, across processes too), so of two writers exactly one wins."""
    write.check()
    with db.write() as conn:
        if write.unless_done and _column(conn, _DONE, write.episode.group_id, write.episode.uuid):
            return False
        upsert_rows(db, conn, EPISODE_UPSERT, [write.episode])
        upsert_entities(db, conn, write.entities)
        upsert_facts(db, conn, write.facts)
        insert_mentions(conn, write.mentions)
        settle_summaries(conn, write)
        if write.forget_decisions_before is not None:
            decisions.forget_before(conn, write.episode.group_id, write.forget_decisions_before)
        if write.decisions is not None:
            decisions.write_records(conn, [write.decisions])
    return True


def settle_summaries(conn: sqlite3.Connection, write: EpisodeWrite) -> None:
    """Clear the owed marks of ``write.paid_summaries``, then mark ``write.owed_summaries`` (entities of
    the episode's group; a uuid of no stored entity marks nothing)."""
    group_id = write.episode.group_id
    if write.paid_summaries:
        conn.execute(_PAY_SUMMARIES, (group_id, as_json(list(write.paid_summaries))))
    mark_owed(conn, group_id, write.owed_summaries)


def mark_owed(conn: sqlite3.Connection, group_id: str, uuids: Sequence[str]) -> None:
    """Mark the summaries of the group's entities ``uuids`` owed (a uuid of no stored entity marks
    nothing)."""
    if uuids:
        conn.execute(_OWE_SUMMARIES, (group_id, as_json(list(uuids))))


_OWED_ENTITIES = f"SELECT id FROM entities WHERE group_id = ? AND uuid IN {IN_LIST}"
_PAY_SUMMARIES = f"DELETE FROM owed_summaries WHERE entity_id IN ({_OWED_ENTITIES})"
_OWE_SUMMARIES = f"INSERT INTO owed_summaries (entity_id) {_OWED_ENTITIES} ON CONFLICT DO NOTHING"


_DONE = f"SELECT uuid FROM episodes WHERE group_id = ? AND uuid = ? AND status = '{EpisodeStatus.DONE.value}'"


def insert_mentions(conn: sqlite3.Connection, mentions: Sequence[Mention]) -> None:
    """One statement per mentioned episode (usually one): an unknown episode or entity resolves to NULL,
    which NOT NULL rejects (set-based: cheaper than a statement per mention)."""
    by_episode: dict[tuple[str, str], list[str]] = {}
    for m in mentions:
        by_episode.setdefault((m.group_id, m.episode_uuid), []).append(m.entity_uuid)
    for (group_id, episode_uuid), entity_uuids in by_episode.items():
        conn.execute(_INSERT_MENTIONS, (group_id, episode_uuid, as_json(entity_uuids)))


_INSERT_MENTIONS = """
INSERT INTO mentions (episode_id, entity_id)
SELECT (SELECT id FROM episodes WHERE group_id = ?1 AND uuid = ?2),
       (SELECT id FROM entities WHERE group_id = ?1 AND uuid = j.value)
FROM json_each(?3) AS j WHERE true
ON CONFLICT (episode_id, entity_id) DO NOTHING"""


def upsert_entities(db: Db, conn: sqlite3.Connection, entities: Sequence[Entity]) -> None:
    """Upsert entities and rebuild the name index (normalized name and aliases) of the changed ones."""
    changed = upsert_rows(db, conn, _ENTITIES, entities)
    conn.executemany(
        f"DELETE FROM entity_names WHERE entity_id = {_ENTITY_ID}", [(e.group_id, e.uuid) for e in changed]
    )
    conn.executemany(
        f"INSERT OR IGNORE INTO entity_names (group_id, norm, entity_id) VALUES (?, ?, {_ENTITY_ID})",
        [
            (e.group_id, norm, e.group_id, e.uuid)
            for e in changed
            for norm in {normalize_name(n) for n in (e.name, *e.aliases)}
        ],
    )


def upsert_facts(db: Db, conn: sqlite3.Connection, facts: Sequence[Fact]) -> None:
    """Upsert facts and rebuild the provenance index (fact <- episode) of the changed ones."""
    changed = upsert_rows(db, conn, _FACTS, facts)
    if changed:  # the index is rebuilt from the rows' own ``episodes`` lists, set-based
        params = (changed[0].group_id, as_json([f.uuid for f in changed]))
        conn.execute(f"DELETE FROM fact_episodes WHERE fact_id IN {_FACT_IDS}", params)
        conn.execute(
            "INSERT OR IGNORE INTO fact_episodes (episode_uuid, fact_id) SELECT j.value, f.id"
            f" FROM facts AS f, json_each(f.episodes) AS j WHERE f.id IN {_FACT_IDS}",
            params,
        )


# --- deleting -----------------------------------------------------------------------------------------


@dataclass
class _Deletion:
    """What deleting one episode changes, computed before anything is written."""

    mentioned: list[str]
    orphans: list[str]
    removed: dict[str, Fact] = field(default_factory=dict)
    changed: dict[str, Fact] = field(default_factory=dict)
    updated: list[str] = field(default_factory=list)
    restored: list[str] = field(default_factory=list)

    def result(self) -> DeletionResult:
        touched = set(self.mentioned)
        for fact in (*self.removed.values(), *self.changed.values()):
            touched.update((fact.source_uuid, fact.target_uuid))
        return DeletionResult(
            removed_facts=sorted(self.removed),
            restored_facts=sorted(self.restored),
            updated_facts=sorted(self.updated),
            removed_entities=sorted(self.orphans),
            touched_entities=sorted(touched - set(self.orphans)),
        )


def delete_episode(db: Db, group_id: str, uuid: str) -> DeletionResult:
    """Remove an episode with provenance cleanup (see ``GraphStore.delete_episode``), atomically.

    1. facts citing the episode lose it from ``episodes``; those left with no episode are removed;
    2. entities that no other episode mentions are removed, with every fact that touches them;
    3. facts retired by this episode, or by a fact removed above, get their invalidation reverted
       (a contradiction that is no longer in the graph no longer retires anything);
    4. the episode and its mentions go.

    Raises :class:`EpisodeNotFound` when the group has no such episode.
    """
    with db.write() as conn:
        if not _column(conn, "SELECT uuid FROM episodes WHERE group_id = ? AND uuid = ?", group_id, uuid):
            raise EpisodeNotFound(uuid, group_id)
        plan = _plan_deletion(conn, group_id, uuid)
        upsert_facts(db, conn, list(plan.changed.values()))
        delete_rows(db, conn, "facts", group_id, list(plan.removed))
        delete_rows(db, conn, "episodes", group_id, [uuid])
        delete_rows(db, conn, "entities", group_id, plan.orphans)
    return plan.result()


def delete_rows(db: Db, conn: sqlite3.Connection, table: str, group_id: str, uuids: Sequence[str]) -> None:
    """Delete the group's rows ``uuids`` of ``table`` (episodes, entities or facts); the term and vector
    indexes follow once the transaction commits."""
    if not uuids:
        return
    keys = list(uuids)
    sql = f"DELETE FROM {table} WHERE group_id = ? AND uuid IN {IN_LIST} RETURNING id"
    ids = [row[0] for row in conn.execute(sql, (group_id, as_json(keys)))]
    db.after_commit(functools.partial(db.rows_changed, table, ids))
    db.after_commit(functools.partial(db.vectors.remove, table, group_id, keys))


def _plan_deletion(conn: sqlite3.Connection, group_id: str, uuid: str) -> _Deletion:
    plan = _Deletion(
        mentioned=_column(conn, _MENTIONED, group_id, uuid),
        orphans=_column(conn, _ORPHANS, group_id, uuid),
    )
    citing = get_facts(conn, group_id, _column(conn, _CITING, uuid, group_id))
    stated = _reference_times(conn, group_id, {e for f in citing for e in f.episodes if e != uuid})
    for fact in citing:
        remaining = [e for e in fact.episodes if e != uuid]
        if remaining:
            # an undated fact's start moves with its earliest statement (none stored: it stays)
            first = fact.stated_at and first_stated((stated.get(e) for e in remaining), fact.stated_at)
            plan.changed[fact.uuid] = fact.model_copy(update={"episodes": remaining, "stated_at": first})
        else:
            plan.removed[fact.uuid] = fact
    orphans = as_json(plan.orphans)
    for fact in _query_facts(conn, _TOUCHING, group_id, orphans, group_id, orphans):
        plan.removed[fact.uuid] = fact
        plan.changed.pop(fact.uuid, None)
    plan.updated = list(plan.changed)
    for fact in _query_facts(conn, _RETIRED_BY, group_id, uuid, as_json(list(plan.removed))):
        if fact.uuid not in plan.removed:
            plan.changed[fact.uuid] = revert_invalidation(plan.changed.get(fact.uuid, fact))
            plan.restored.append(fact.uuid)
    return plan


_MENTIONED = """
SELECT e.uuid FROM episodes p JOIN mentions m ON m.episode_id = p.id JOIN entities e ON e.id = m.entity_id
WHERE p.group_id = ? AND p.uuid = ?"""
# An entity no other episode mentions goes with the episode, unless a fact added by hand (one that cites
# no episode: graph.corrections) touches it: a person's correction is never removed by an episode's.
_ORPHANS = (
    _MENTIONED
    + """
AND NOT EXISTS (SELECT 1 FROM mentions o WHERE o.entity_id = m.entity_id AND o.episode_id <> m.episode_id)
AND NOT EXISTS (SELECT 1 FROM facts h WHERE (h.source_id = m.entity_id OR h.target_id = m.entity_id)
                AND h.episodes = '[]')"""
)
_CITING = (
    "SELECT f.uuid FROM fact_episodes fe JOIN facts f ON f.id = fe.fact_id"
    " WHERE fe.episode_uuid = ? AND f.group_id = ?"
)
_IDS = f"(SELECT id FROM entities WHERE group_id = ? AND uuid IN {IN_LIST})"
_TOUCHING = f"SELECT {FACTS.select('f')} FROM facts AS f WHERE f.source_id IN {_IDS} OR f.target_id IN {_IDS}"
_RETIRED_BY = (
    f"SELECT {FACTS.select('f')} FROM facts AS f"
    f" WHERE f.group_id = ? AND (f.inv_episode = ? OR f.inv_fact IN {IN_LIST})"
)


def _reference_times(conn: sqlite3.Connection, group_id: str, uuids: set[str]) -> dict[str, datetime]:
    """The reference times of the group's stored episodes among ``uuids``."""
    sql = f"SELECT uuid, reference_time FROM episodes WHERE group_id = ? AND uuid IN {IN_LIST}"
    rows = conn.execute(sql, (group_id, as_json(sorted(uuids))))
    return {uuid: when for uuid, us in rows if (when := from_us(us)) is not None}


def _column(conn: sqlite3.Connection, sql: str, *params: object) -> list[str]:
    return [row[0] for row in conn.execute(sql, params)]


def _query_facts(conn: sqlite3.Connection, sql: str, *params: object) -> list[Fact]:
    return [decode_fact(row) for row in conn.execute(sql, params)]
