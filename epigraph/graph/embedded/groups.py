"""Whole groups in the embedded store: read one out (a dump), write one in (a load), delete one.

A dump reads one snapshot. On a file it has a connection of its own, in one read transaction: SQLite's
WAL keeps that connection's view as of its first read while the store's writer goes on (nothing waits
for the dump, and the dump never sees a write halfway). A ``:memory:`` database has no second
connection, so there the whole dump is read in one call on the store's SQLite thread.
"""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Iterator, Sequence

from ...errors import ConflictError
from ..model import utc_now
from ..store import DumpItem, GroupDump, OwedSummaries, StoreStats
from . import audit, decisions, derived, vault
from .codec import (
    ENTITIES,
    EPISODES,
    FACTS,
    decode_correction,
    decode_entity,
    decode_episode,
    decode_fact,
    decode_mention,
)
from .corrections import insert_corrections
from .db import Db
from .reads import stats
from .writes import EPISODE_UPSERT, insert_mentions, mark_owed, upsert_entities, upsert_facts, upsert_rows

_TABLES = ("communities", "facts", "entities", "episodes", "corrections", "forgettings")
"""What a group's rows are in (mentions, names, vectors, provenance, claims, members and subjects go with
them); facts before entities, since they reference entity rows."""
_HELD = (*_TABLES, "conversation_summaries", "retention")


def records(conn: sqlite3.Connection, group_ids: Sequence[str], vectors: bool) -> Iterator[DumpItem]:
    """Every record of the groups in dump order (``WholeGroups.dump``), read lazily from ``conn``."""
    episodes = (
        f"SELECT {EPISODES.select('p', vectors)} FROM episodes p WHERE p.group_id = ?"
        " ORDER BY p.reference_time, p.created_at, p.uuid"
    )
    entities = (
        f"SELECT {ENTITIES.select('e', vectors)} FROM entities e WHERE e.group_id = ?"
        " ORDER BY e.created_at, e.uuid"
    )
    facts = (
        f"SELECT {FACTS.select('f', vectors)} FROM facts f WHERE f.group_id = ? ORDER BY f.created_at, f.uuid"
    )
    for group_id in group_ids:
        yield from map(decode_episode, conn.execute(episodes, (group_id,)))
        owed = derived.owed_summaries(conn, group_id)
        if owed:
            yield OwedSummaries(group_id, tuple(owed))
        yield from map(decode_entity, conn.execute(entities, (group_id,)))
        yield from map(decode_fact, conn.execute(facts, (group_id,)))
        for episode_uuid, entity_uuid in conn.execute(_MENTIONS, (group_id,)):
            yield decode_mention(group_id, episode_uuid, entity_uuid)
        for (record,) in conn.execute(_CORRECTIONS, (group_id,)):
            yield decode_correction(record)
        for community in derived.communities(conn, group_id):
            yield community if vectors else community.model_copy(update={"embedding": None})
        yield from derived.conversation_summaries(conn, group_id, None)
        yield from audit.forgettings(conn, group_id)
        yield from audit.retention_policies(conn, group_id)
        yield from decisions.group_records(conn, group_id)


_MENTIONS = (
    "SELECT p.uuid, e.uuid FROM episodes p JOIN mentions m ON m.episode_id = p.id"
    " JOIN entities e ON e.id = m.entity_id WHERE p.group_id = ? ORDER BY p.uuid, e.uuid"
)
_CORRECTIONS = "SELECT record FROM corrections WHERE group_id = ? ORDER BY created_at, uuid"


def read_all(db: Db, group_ids: Sequence[str], vectors: bool) -> list[DumpItem]:
    """The whole dump in one call on the SQLite thread (a ``:memory:`` store)."""
    with db.read() as conn:
        return list(records(conn, group_ids, vectors))


class Snapshot:
    """A connection of its own on the store's file, in one read transaction from its construction on
    (the snapshot is taken by the first read, here). Use it from one thread at a time."""

    def __init__(self, path: str) -> None:
        self.conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        try:
            self.conn.execute("PRAGMA busy_timeout = 10000")
            self.conn.execute("BEGIN")
            self.conn.execute("SELECT count(*) FROM meta").fetchone()  # the snapshot starts here
        except BaseException:
            self.conn.close()
            raise

    def close(self) -> None:
        if self.conn.in_transaction:
            self.conn.execute("COMMIT")
        self.conn.close()


def group_count(conn: sqlite3.Connection, group_id: str) -> int:
    """How many records the group holds (episodes, entities, facts, corrections, derived records)."""
    return sum(
        int(conn.execute(f"SELECT count(*) FROM {table} WHERE group_id = ?", (group_id,)).fetchone()[0])
        for table in _HELD
    )


def load_group(db: Db, dump: GroupDump) -> None:
    """The whole group in one transaction, into a group that holds nothing."""
    dump.check()
    with db.write() as conn:
        held = group_count(conn, dump.group_id)
        if held:
            raise ConflictError(
                f"group {dump.group_id!r} already holds {held} records: a dump is loaded into an empty "
                "group only (delete the group first, or load it as another group); nothing was written"
            )
        upsert_rows(db, conn, EPISODE_UPSERT, list(dump.episodes))
        upsert_entities(db, conn, list(dump.entities))
        upsert_facts(db, conn, list(dump.facts))
        insert_mentions(conn, list(dump.mentions))
        mark_owed(conn, dump.group_id, dump.owed_summaries)
        insert_corrections(conn, list(dump.corrections))
        derived.write_communities(db, conn, dump.group_id, list(dump.communities))
        for summary in dump.conversations:
            derived.write_summary(conn, summary)
        audit.insert_records(conn, list(dump.forgettings))
        if dump.retention is not None:
            audit.write_retention(conn, dump.retention)
        decisions.write_records(conn, list(dump.decisions))


def delete_group(db: Db, group_id: str) -> StoreStats:
    """Every row of the group, in one transaction; returns the counts it held."""
    with db.write() as conn:
        held = stats(conn, group_id, utc_now())
        for table in _TABLES:
            sql = f"DELETE FROM {table} WHERE group_id = ? RETURNING id"
            ids = [row[0] for row in conn.execute(sql, (group_id,))]
            if table in ("facts", "entities", "episodes"):
                db.after_commit(functools.partial(db.rows_changed, table, ids))
        conn.execute("DELETE FROM conversation_summaries WHERE group_id = ?", (group_id,))
        conn.execute("DELETE FROM retention WHERE group_id = ?", (group_id,))
        vault.delete_group(conn, group_id)
        db.after_commit(lambda: db.vectors.drop_group(group_id))
    return held
