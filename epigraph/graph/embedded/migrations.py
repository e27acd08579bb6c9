"""Opening an embedded store's file at the current schema: a fresh file gets the whole ``schema.DDL``,
an older one is upgraded step by step (v1 -> v11) inside the opening transaction, a newer or unknown
one is refused. The current DDL itself is in :mod:`.schema`."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from ...errors import SchemaMismatch, StoreUnavailable
from ..temporal import start_key
from .codec import FACTS, decode_fact, to_us_or_none
from .role_tables import (
    CLAIM_TABLES,
    CORRECTION_TABLES,
    DECISION_TABLES,
    DERIVED_TABLES,
    FORGET_TABLES,
    OWED_TABLES,
    VAULT_TABLES,
)
from .schema import (
    DDL,
    FTS_TABLES,
    SCHEMA_VERSION,
    TOKENIZER,
    fts_table,
    read_version,
    set_meta,
    statements,
)

Migration = Callable[[sqlite3.Connection], None]


def _to_v2(conn: sqlite3.Connection) -> None:
    """v1 -> v2: rebuild every fulltext index with the stemming ``TOKENIZER``.

    An FTS5 table's tokenizer is fixed at creation, so each index is dropped, created anew and rebuilt
    from its content table ('rebuild' re-reads every row). The triggers live on the content tables and
    name the index only in their bodies, so they keep working unchanged. Runs inside the caller's
    transaction: a failure leaves the v1 file as it was.
    """
    for table in FTS_TABLES:
        conn.execute(f"DROP TABLE IF EXISTS {table}_fts")
        conn.execute(fts_table(table, TOKENIZER))
        conn.execute(f"INSERT INTO {table}_fts ({table}_fts) VALUES ('rebuild')")


def _to_v3(conn: sqlite3.Connection) -> None:
    """v2 -> v3: the writer indexes new rows itself; the per-row insert triggers go."""
    for table in FTS_TABLES:
        conn.execute(f"DROP TRIGGER IF EXISTS {table}_fts_insert")


_STATED_AT = """
UPDATE facts SET stated_at = (
    SELECT min(p.reference_time) FROM fact_episodes AS fe
    JOIN episodes AS p ON p.group_id = facts.group_id AND p.uuid = fe.episode_uuid
    WHERE fe.fact_id = facts.id
)"""


def _to_v4(conn: sqlite3.Connection) -> None:
    """v3 -> v4: every fact's ``stated_at`` from its stored episodes, then its ``start_key`` computed by
    ``graph.temporal`` itself (the one definition) from the decoded record."""
    conn.execute("ALTER TABLE facts ADD COLUMN stated_at INTEGER")
    conn.execute("ALTER TABLE facts ADD COLUMN start_key INTEGER")
    conn.execute(_STATED_AT)
    rows = conn.execute(f"SELECT id, {', '.join(FACTS.columns)}, NULL FROM facts")
    keys = [(to_us_or_none(start_key(decode_fact(row[1:]))), row[0]) for row in rows]
    conn.executemany("UPDATE facts SET start_key = ? WHERE id = ?", keys)


def _to_v5(conn: sqlite3.Connection) -> None:
    """v4 -> v5: the tables of communities and conversation summaries, and the chain index."""
    for statement in statements(DERIVED_TABLES):
        conn.execute(statement)


def _to_v6(conn: sqlite3.Connection) -> None:
    """v5 -> v6: the (empty) table of episode claims."""
    for statement in statements(CLAIM_TABLES):
        conn.execute(statement)


def _to_v7(conn: sqlite3.Connection) -> None:
    """v6 -> v7: the tables of corrections by hand."""
    for statement in statements(CORRECTION_TABLES):
        conn.execute(statement)


def _to_v8(conn: sqlite3.Connection) -> None:
    """v7 -> v8: the (empty) table of owed entity summaries."""
    for statement in statements(OWED_TABLES):
        conn.execute(statement)


def _to_v9(conn: sqlite3.Connection) -> None:
    """v8 -> v9: the (empty) tables of forgetting's audit records and retention policies."""
    for statement in statements(FORGET_TABLES):
        conn.execute(statement)


def _to_v10(conn: sqlite3.Connection) -> None:
    """v9 -> v10: the (empty) tables of the redaction vault."""
    for statement in statements(VAULT_TABLES):
        conn.execute(statement)


def _to_v11(conn: sqlite3.Connection) -> None:
    """v10 -> v11: the (empty) tables of decision records."""
    for statement in statements(DECISION_TABLES):
        conn.execute(statement)


# version reached -> the step that upgrades from the version before it.
MIGRATIONS: dict[int, Migration] = {
    2: _to_v2, 3: _to_v3, 4: _to_v4, 5: _to_v5, 6: _to_v6, 7: _to_v7, 8: _to_v8, 9: _to_v9,
    10: _to_v10, 11: _to_v11,
}  # fmt: skip


def ensure_schema(conn: sqlite3.Connection) -> None:
    """Create the schema on a fresh database, upgrade an older one, refuse a newer or unknown one."""
    try:
        conn.execute("BEGIN IMMEDIATE")
        try:
            _ensure_in_transaction(conn)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    except sqlite3.DatabaseError as exc:
        raise StoreUnavailable(f"cannot open the epigraph store: {exc}") from exc


def _ensure_in_transaction(conn: sqlite3.Connection) -> None:
    version = read_version(conn)
    if version is None:
        for statement in statements(DDL):
            conn.execute(statement)
        set_meta(conn, "schema_version", str(SCHEMA_VERSION))
        return
    if version > SCHEMA_VERSION or version < 1:
        raise SchemaMismatch(
            f"the store was written by schema version {version}; this epigraph reads up to {SCHEMA_VERSION}"
            " (upgrade epigraph, or open another file)"
        )
    for target in range(version + 1, SCHEMA_VERSION + 1):
        MIGRATIONS[target](conn)
        set_meta(conn, "schema_version", str(target))
