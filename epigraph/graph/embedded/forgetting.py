"""Forgetting in the embedded store: the one transaction and the compaction after it (the audit records
and the retention policies are rows of :mod:`.audit`).

:func:`forget` reads the group inside its ``BEGIN IMMEDIATE`` transaction (no other writer, in any
process, runs beside it), plans the request there (``graph.forget_plan``), refuses a plan that is not
the preview's, and writes it with ``PRAGMA secure_delete`` on (SQLite zeroes what it deletes or
overwrites). Then :func:`compact` takes out what the file may still hold of the forgotten text:

1. each FTS5 index ``optimize``\\ d: merged into one segment, the deleted rows' terms dropped (FTS5 keeps
   a deleted row's terms in its segments until they are merged);
2. ``VACUUM``: the file rebuilt from its live rows, so no free page or free space inside a page keeps an
   older copy of a row (freed before this forgetting, without ``secure_delete``);
3. ``wal_checkpoint(TRUNCATE)``: every page written back into the file and the WAL cut to zero bytes.

Its cost on a 10,000-fact file: ``python -m bench forget`` (docs/decisions/2026-12-01-forgetting.md).
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager

from ...errors import ConflictError
from ..forget_plan import plan_forgetting
from ..forget_planner import Kind
from ..forgetting import Compaction, ForgetOutcome, ForgetRequest, ForgetWrite
from . import decisions, derived, groups, vault
from .audit import insert_records
from .corrections import insert_corrections
from .db import Db
from .reads import IN_LIST, as_json, get_entities, get_episode, get_facts
from .schema import FTS_TABLES
from .writes import EPISODE_UPSERT, delete_rows, mark_owed, upsert_entities, upsert_facts, upsert_rows


def forget(db: Db, request: ForgetRequest) -> ForgetOutcome:
    """``Forgetting.forget`` (see ``graph.store``)."""
    group_id = request.group_id
    with _secure_delete(db.conn), db.write() as conn:
        held = vault.held_placeholders(conn, group_id)
        plan = plan_forgetting(groups.records(conn, [group_id], vectors=False), request, held)
        if request.expect is not None and plan.digest != request.expect:
            raise ConflictError(
                "the group changed since the forgetting was previewed; nothing was written (preview it again)"
            )
        write = plan.with_vectors(_stored_vectors(conn, group_id, plan.rewritten()), request.vectors)
        db.vectors.drop_files(group_id)  # before anything commits: no saved index keeps her vectors
        _write(db, conn, write)
        db.stemmer.clear()
    assert write.record is not None
    compaction = compact(db) if request.compact else None
    return ForgetOutcome(
        record=write.record,
        owed=write.owed,
        conversations=plan.conversations,
        communities_stale=bool(plan.ids["communities_rewritten"]),
        compaction=compaction,
    )


@contextmanager
def _secure_delete(conn: sqlite3.Connection) -> Iterator[None]:
    """``PRAGMA secure_delete`` on for the block (SQLite overwrites deleted content with zeros)."""
    before = conn.execute("PRAGMA secure_delete").fetchone()[0]
    conn.execute("PRAGMA secure_delete = ON")
    try:
        yield
    finally:
        conn.execute(f"PRAGMA secure_delete = {int(before)}")


def _stored_vectors(
    conn: sqlite3.Connection, group_id: str, rewritten: dict[Kind, list[str]]
) -> dict[tuple[Kind, str], list[float] | None]:
    """The stored embeddings of the records a plan rewrites, by (kind, uuid)."""
    found: dict[tuple[Kind, str], list[float] | None] = {}
    for uuid in rewritten["episode"]:
        episode = get_episode(conn, group_id, uuid)
        found["episode", uuid] = None if episode is None else episode.content_embedding
    for entity in get_entities(conn, group_id, rewritten["entity"]):
        found["entity", entity.uuid] = entity.name_embedding
    for fact in get_facts(conn, group_id, rewritten["fact"]):
        found["fact", fact.uuid] = fact.text_embedding
    for community in derived.communities(conn, group_id):
        found["community", community.uuid] = community.embedding
    return found


def _write(db: Db, conn: sqlite3.Connection, write: ForgetWrite) -> None:
    """The write of a plan, in the caller's transaction: deletions (facts before the entities they join),
    the rewritten records (decision records too), the group's communities, the owed marks, the vault's
    freed values, the audit record."""
    group_id = write.group_id
    delete_rows(db, conn, "facts", group_id, write.delete_facts)
    delete_rows(db, conn, "entities", group_id, write.delete_entities)
    delete_rows(db, conn, "episodes", group_id, write.delete_episodes)
    replaced = [*write.delete_corrections, *(c.uuid for c in write.corrections)]
    sql = f"DELETE FROM corrections WHERE group_id = ? AND uuid IN {IN_LIST}"
    conn.execute(sql, (group_id, as_json(replaced)))
    insert_corrections(conn, list(write.corrections))
    conn.executemany(
        "DELETE FROM conversation_summaries WHERE group_id = ? AND key = ?",
        [(group_id, key) for key in write.conversations_dropped],
    )
    upsert_rows(db, conn, EPISODE_UPSERT, list(write.episodes))
    upsert_entities(db, conn, list(write.entities))
    upsert_facts(db, conn, list(write.facts))
    if write.communities is not None:
        derived.write_communities(db, conn, group_id, list(write.communities))
    decisions.write_records(conn, list(write.decisions))  # those of deleted episodes went with them
    mark_owed(conn, group_id, write.owed)
    vault.free_values(conn, group_id, write.vault_freed)
    if write.record is not None:
        insert_records(conn, [write.record])


def compact(db: Db) -> Compaction | None:
    """Optimize the fulltext indexes, VACUUM, checkpoint the WAL and cut it to zero (see the module
    docstring); None for a ``:memory:`` store (it has no file). A checkpoint held off by a reader
    (another process's open read) is reported, not raised: ``done`` is False and the WAL keeps its pages
    until the next checkpoint."""
    if db.path == ":memory:":
        return None
    conn, steps = db.conn, {}
    size_before = _size(db.path)
    began = time.perf_counter()
    with _secure_delete(conn):
        for table in FTS_TABLES:
            start = time.perf_counter()
            conn.execute(f"INSERT INTO {table}_fts ({table}_fts) VALUES ('optimize')")
            steps[f"optimize_{table}"] = time.perf_counter() - start
        start = time.perf_counter()
        conn.execute("VACUUM")
        steps["vacuum"] = time.perf_counter() - start
        start = time.perf_counter()
        busy, _, _ = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        steps["checkpoint"] = time.perf_counter() - start
    note = "" if not busy else "a reader held the WAL: its pages stay there until the next checkpoint"
    return Compaction(
        done=not busy,
        seconds=time.perf_counter() - began,
        steps={k: round(v, 4) for k, v in steps.items()},
        size_before=size_before,
        size_after=_size(db.path),
        note=note,
    )


def _size(path: str) -> int:
    """Bytes of the store's file and its WAL."""
    return sum(os.path.getsize(p) for p in (path, path + "-wal") if os.path.exists(p))
