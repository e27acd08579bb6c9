"""The embedded store's SQLite schema: DDL, connection settings and versioning (the upgrades from an
older version are in :mod:`.migrations`; the tables of the optional roles, v5-v11, in :mod:`.role_tables`).

Encoding choices (the contract every query in this package relies on):

- **datetimes** are INTEGER microseconds since the Unix epoch, UTC (``NULL`` = unbounded / unset).
  Integers compare exactly and cheaply in SQL, so the temporal filters of ``graph.temporal`` translate
  one-to-one into ``<=`` / ``<`` comparisons; see ``codec.to_us``.
- **embeddings** are little-endian float32 BLOBs, stored as given (not normalized), in side tables
  (``entity_vectors``, ``fact_vectors``, ``episode_vectors``) keyed by the owning row's id.
- **lists and dicts** (aliases, labels, attributes, provenance, reports) are JSON text.
- ``digest`` fingerprints a record and its embedding, so re-sending an unchanged record costs one
  indexed lookup instead of a rewrite (an episode write re-sends every entity it touches).
- every episode, entity and fact row carries ``group_id`` and is keyed by ``(group_id, uuid)``: one
  group can never touch another group's rows, even with a colliding uuid. Links (fact endpoints,
  mentions, provenance, the name index) hold integer row ids, resolved *within the group* at write
  time: a fact or mention pointing at an entity or episode of another group (or at nothing) resolves to
  NULL and the write is rejected.

Versioning: ``meta.schema_version``. A file written by a newer (or unknown) version raises
:class:`~epigraph.errors.SchemaMismatch` instead of being misread; older versions are upgraded by
``migrations.MIGRATIONS``, inside the one transaction that opens the file (a failed step leaves it as
it was).

- **v1**: the first schema; fulltext tokenizer ``unicode61 remove_diacritics 2`` (no stemming).
- **v2**: every fulltext index stems English (``TOKENIZER``: Porter over ``unicode61``), so "hiking"
  finds "hikes". Upgrading drops the three FTS5 tables, creates them
  with the new tokenizer and rebuilds them from their content tables; no other table is touched.
- **v3**: new rows are indexed by the writer, one ``INSERT ... SELECT`` per upsert (``fts_index_new``),
  instead of by an ``AFTER INSERT`` trigger per row: a trigger writing to FTS5 opens a savepoint per
  row, and FTS5 flushes its pending terms to a new on-disk segment at every savepoint, so a 1,000-fact
  write made 1,000 tiny segments to merge. Upgrading
  drops the three insert triggers; the update and delete triggers stay.
- **v4**: facts carry ``stated_at`` (the reference time of the earliest episode that stated them: an
  undated fact starts there, ``graph.temporal.start_of``) and ``start_key`` (``graph.temporal.start_key``,
  what the vector index skips facts not begun by ``as_of`` on). Upgrading adds both columns and fills
  them from the stored episodes: a fact whose episodes are none of them keeps an open start.
- **v5**: derived records (``graph.derived``): ``communities`` with their ``community_members`` (an entity
  in at most one community: ``entity_id`` is unique; deleting an entity or a community drops the row),
  ``conversation_summaries`` keyed by (group, chain key), and ``episodes_by_chain`` (a chain's episodes
  in order). Upgrading creates them; nothing else is touched.
- **v6**: ``episode_claims``: who runs an episode until when (``GraphStore.claim_episode``), so two
  processes on one file never spend an episode's LLM calls twice. Upgrading creates the empty table.
- **v7**: corrections by hand (``graph.corrections``): ``corrections`` (one row per correction, the
  record as JSON without embeddings) and ``correction_subjects`` (the entity and fact uuids each one
  touches, for an entity's history). Upgrading creates the two tables; nothing else changes.
- **v8**: ``owed_summaries``: the entities whose summaries a batch still owes (``EpisodeWrite``'s
  ``owed_summaries`` / ``paid_summaries``, written in the episode's transaction), gone with the entity.
  Upgrading creates the empty table.
- **v9**: forgetting (``graph.forgetting``): ``forgettings``, the audit records (one row per forgetting,
  the record as JSON: ids and counts, never the subject's name), and ``retention``, a group's retention
  policy. Upgrading creates the two empty tables.
- **v10**: the redaction vault (``vault.py``, ``epigraph.privacy``): ``redaction_vaults`` (a group's salt
  and key check) and ``redactions`` (a placeholder's kind and number, the keyed digest that finds it, the
  original sealed by the caller's key or NULL). Upgrading creates the two empty tables.
- **v11**: decision records (``graph.decisions``): ``decision_records`` (one per episode, the record as
  compact JSON, written in the episode's transaction, gone with the episode) and ``decision_names`` (the
  normalized names its name steps are about, for ``DecisionReads.decisions_naming``). Upgrading creates
  the two empty tables: episodes ingested before have no record.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from ...errors import SchemaMismatch, StoreNotFound, StoreUnavailable
from .role_tables import (
    CLAIM_TABLES,
    CORRECTION_TABLES,
    DECISION_TABLES,
    DERIVED_TABLES,
    FORGET_TABLES,
    OWED_TABLES,
    VAULT_TABLES,
)

SCHEMA_VERSION = 11

TOKENIZER = "porter unicode61 remove_diacritics 2"
"""FTS5 tokenizer of every fulltext index (v2): case- and diacritic-folded words, Porter-stemmed. A query
goes through the same tokenizer, so its words match their stems ("hiking", "hikes" and "hiked" -> "hike")."""

WAL_CHECKPOINT_PAGES = 16384
"""WAL pages (4 kB) after which a commit checkpoints them into the database file (SQLite's default: 1,000)."""

_TABLES = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);

CREATE TABLE IF NOT EXISTS episodes (
    id INTEGER PRIMARY KEY,
    group_id TEXT NOT NULL,
    uuid TEXT NOT NULL,
    name TEXT NOT NULL,
    content TEXT NOT NULL,
    kind TEXT NOT NULL,
    source_description TEXT NOT NULL,
    reference_time INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    content_hash TEXT NOT NULL,
    status TEXT NOT NULL,
    error TEXT,
    report TEXT NOT NULL,
    digest BLOB NOT NULL,
    UNIQUE (group_id, uuid)
);
CREATE INDEX IF NOT EXISTS episodes_by_time ON episodes (group_id, reference_time, created_at);

CREATE TABLE IF NOT EXISTS entities (
    id INTEGER PRIMARY KEY,
    group_id TEXT NOT NULL,
    uuid TEXT NOT NULL,
    name TEXT NOT NULL,
    aliases TEXT NOT NULL,
    labels TEXT NOT NULL,
    summary TEXT NOT NULL,
    attributes TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    digest BLOB NOT NULL,
    UNIQUE (group_id, uuid)
);

-- Links between rows use integer row ids, not uuid text: an index of integers is much smaller than one
-- of (group_id, uuid) strings, and a bulk write dirties (and writes to the WAL) that many fewer pages.
CREATE TABLE IF NOT EXISTS entity_names (
    group_id TEXT NOT NULL,
    norm TEXT NOT NULL,
    entity_id INTEGER NOT NULL REFERENCES entities (id) ON DELETE CASCADE,
    PRIMARY KEY (group_id, norm, entity_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS entity_names_by_entity ON entity_names (entity_id);

CREATE TABLE IF NOT EXISTS facts (
    id INTEGER PRIMARY KEY,
    group_id TEXT NOT NULL,
    uuid TEXT NOT NULL,
    source_uuid TEXT NOT NULL,
    target_uuid TEXT NOT NULL,
    relation TEXT NOT NULL,
    text TEXT NOT NULL,
    episodes TEXT NOT NULL,
    valid_at INTEGER,
    invalid_at INTEGER,
    created_at INTEGER NOT NULL,
    expired_at INTEGER,
    inv_fact TEXT,
    inv_episode TEXT,
    inv_previous INTEGER,
    attributes TEXT NOT NULL,
    -- v4: the reference time of the earliest episode stating the fact, and graph.temporal.start_key
    stated_at INTEGER,
    start_key INTEGER,
    digest BLOB NOT NULL,
    -- the endpoints' row ids, resolved within the fact's group at write time (NULL = no such entity
    -- in the group, which NOT NULL turns into a rejected write)
    source_id INTEGER NOT NULL REFERENCES entities (id),
    target_id INTEGER NOT NULL REFERENCES entities (id),
    UNIQUE (group_id, uuid)
);
CREATE INDEX IF NOT EXISTS facts_by_source ON facts (source_id);
CREATE INDEX IF NOT EXISTS facts_by_target ON facts (target_id);
CREATE INDEX IF NOT EXISTS facts_by_inv_episode ON facts (group_id, inv_episode)
    WHERE inv_episode IS NOT NULL;
CREATE INDEX IF NOT EXISTS facts_by_inv_fact ON facts (group_id, inv_fact) WHERE inv_fact IS NOT NULL;

-- Provenance index (fact <- episode uuid). The episode need not be stored: a fact may cite any episode.
-- Both keys grow in step during a bulk write (new fact ids, one episode), so inserts stay clustered.
CREATE TABLE IF NOT EXISTS fact_episodes (
    fact_id INTEGER NOT NULL REFERENCES facts (id) ON DELETE CASCADE,
    episode_uuid TEXT NOT NULL,
    PRIMARY KEY (fact_id, episode_uuid)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS fact_episodes_by_episode ON fact_episodes (episode_uuid);

CREATE TABLE IF NOT EXISTS mentions (
    episode_id INTEGER NOT NULL REFERENCES episodes (id) ON DELETE CASCADE,
    entity_id INTEGER NOT NULL REFERENCES entities (id) ON DELETE CASCADE,
    PRIMARY KEY (episode_id, entity_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS mentions_by_entity ON mentions (entity_id);

-- Embeddings live beside their rows, keyed by the row id: a 1.5 kB vector inside a fact row would
-- spread the facts table over ten times more pages and slow every scan, join and filter on it.
CREATE TABLE IF NOT EXISTS entity_vectors (
    id INTEGER PRIMARY KEY REFERENCES entities (id) ON DELETE CASCADE, vector BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS fact_vectors (
    id INTEGER PRIMARY KEY REFERENCES facts (id) ON DELETE CASCADE, vector BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS episode_vectors (
    id INTEGER PRIMARY KEY REFERENCES episodes (id) ON DELETE CASCADE, vector BLOB NOT NULL
);
"""

FTS_TABLES: dict[str, tuple[str, ...]] = {
    "entities": ("name", "aliases", "summary"),
    "facts": ("text",),
    "episodes": ("content",),
}
"""Each table with an external-content FTS5 index ``<table>_fts``, and the columns that index covers."""


def fts_table(table: str, tokenizer: str) -> str:
    """The FTS5 index of ``table`` (named ``<table>_fts``), reading its text from ``table`` itself."""
    columns = ", ".join(FTS_TABLES[table])
    return (
        f"CREATE VIRTUAL TABLE IF NOT EXISTS {table}_fts USING fts5 (\n"
        f"    {columns}, content='{table}', content_rowid='id', tokenize='{tokenizer}'\n);\n"
    )


def _fts_triggers(table: str, columns: tuple[str, ...]) -> str:
    """Triggers that keep an external-content FTS5 table in step with its table's updates and deletes,
    in the same transaction (inserts are indexed by the writer: :func:`fts_index_new`).

    The update trigger only fires when an indexed column really changed, so retiring a fact (which
    rewrites its time columns) does not churn the fulltext index.
    """
    cols = ", ".join(columns)
    new = ", ".join(f"new.{c}" for c in columns)
    old = ", ".join(f"old.{c}" for c in columns)
    changed = " OR ".join(f"old.{c} IS NOT new.{c}" for c in columns)
    return f"""
CREATE TRIGGER IF NOT EXISTS {table}_fts_delete AFTER DELETE ON {table} BEGIN
    INSERT INTO {table}_fts ({table}_fts, rowid, {cols}) VALUES ('delete', old.id, {old});
END;
CREATE TRIGGER IF NOT EXISTS {table}_fts_update AFTER UPDATE OF {cols} ON {table} WHEN {changed} BEGIN
    INSERT INTO {table}_fts ({table}_fts, rowid, {cols}) VALUES ('delete', old.id, {old});
    INSERT INTO {table}_fts (rowid, {cols}) VALUES (new.id, {new});
END;
"""


def fts_index_new(table: str) -> str:
    """The statement that indexes ``table``'s rows whose id is above its parameter: a writer notes
    ``max(id)`` before inserting and runs this after, in the same transaction (see v3 above). New rows
    always get ids above the maximum (SQLite's rowid rule below 2**63), updated rows keep theirs."""
    cols = ", ".join(FTS_TABLES[table])
    return f"INSERT INTO {table}_fts (rowid, {cols}) SELECT id, {cols} FROM {table} WHERE id > ?"


DDL = (
    _TABLES
    + DERIVED_TABLES
    + CLAIM_TABLES
    + CORRECTION_TABLES
    + OWED_TABLES
    + FORGET_TABLES
    + VAULT_TABLES
    + DECISION_TABLES
    + "".join(fts_table(table, TOKENIZER) for table in FTS_TABLES)
    + "".join(_fts_triggers(table, columns) for table, columns in FTS_TABLES.items())
)
"""The whole current schema (``SCHEMA_VERSION``), as a fresh database gets it."""


def connect(path: str, create: bool = True) -> sqlite3.Connection:
    """Open ``path`` (or ``:memory:``) in autocommit mode with the pragmas the store relies on.

    Autocommit (``isolation_level=None``) because transactions are explicit: ``BEGIN IMMEDIATE`` for
    every write, so a write never upgrades a read lock halfway and fails on a busy database.
    ``create=False``: a missing file raises :class:`~epigraph.errors.StoreNotFound` and nothing is
    created (the file is opened read-write only: ``mode=rw``, never ``rwc``).
    """
    target, uri = path, False
    if not create and path != ":memory:":
        if not Path(path).exists():
            raise StoreNotFound(path)
        target, uri = Path(path).resolve().as_uri() + "?mode=rw", True
    try:
        conn = sqlite3.connect(target, isolation_level=None, check_same_thread=False, uri=uri)
    except sqlite3.Error as exc:
        raise StoreUnavailable(f"cannot open SQLite database {path!r}: {exc}{why_unwritable(path)}") from exc
    try:
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("PRAGMA busy_timeout = 10000")
        if path != ":memory:":
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
            # A large episode dirties thousands of pages (random index leaves mostly). Checkpointing every
            # 64 MB instead of SQLite's 4 MB copies an index page shared by many commits once, not per
            # commit; the WAL is cut back to 64 MB after each.
            conn.execute(f"PRAGMA wal_autocheckpoint = {WAL_CHECKPOINT_PAGES}")
            conn.execute(f"PRAGMA journal_size_limit = {WAL_CHECKPOINT_PAGES * 4096}")
        conn.execute("PRAGMA temp_store = MEMORY")
        conn.execute("PRAGMA cache_size = -65536")
    except sqlite3.Error as exc:
        conn.close()  # a file it could not set up (read-only, ...) is not held open
        raise StoreUnavailable(f"cannot open SQLite database {path!r}: {exc}{why_unwritable(path)}") from exc
    return conn


def why_unwritable(path: str) -> str:
    """Why the store file at ``path`` cannot be written, as a clause to end an error message with (''
    when nothing says so): its file system is mounted read-only, or the file or its directory (where
    SQLite keeps the WAL and shared-memory files beside it) is not writable by this process."""
    if path == ":memory:":
        return ""
    file = Path(path).resolve()
    folder = file.parent
    try:
        if os.statvfs(folder).f_flag & os.ST_RDONLY:
            return f" (the file system holding {str(folder)!r} is mounted read-only)"
    except OSError:
        return ""
    if file.exists() and not os.access(file, os.W_OK):
        return f" (the file {str(file)!r} is read-only for this process)"
    if not os.access(folder, os.W_OK):
        return f" (the directory {str(folder)!r} is read-only for this process: SQLite writes its WAL there)"
    return ""


def read_version(conn: sqlite3.Connection) -> int | None:
    """The schema version written in ``meta``, or ``None`` for a fresh (empty) database."""
    has_meta = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'").fetchone()
    if has_meta is None:
        if conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table'").fetchone() is not None:
            raise SchemaMismatch("the database has tables but no epigraph meta table: not an epigraph store")
        return None
    row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    if row is None:
        raise SchemaMismatch("the epigraph meta table has no schema_version")
    try:
        return int(row[0])
    except ValueError:
        raise SchemaMismatch(f"unknown schema_version {row[0]!r}") from None


def statements(script: str) -> list[str]:
    """Split a DDL script into statements (``executescript`` would COMMIT our transaction)."""
    found: list[str] = []
    buffer = ""
    for line in script.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            found.append(buffer.strip())
            buffer = ""
    return [s for s in found if s]


def get_meta(conn: sqlite3.Connection, key: str) -> str | None:
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return None if row is None else str(row[0])


def set_meta(conn: sqlite3.Connection, key: str, value: str) -> None:
    conn.execute(
        "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        (key, value),
    )
