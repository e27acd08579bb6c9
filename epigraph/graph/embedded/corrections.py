"""Corrections by hand in the embedded store: check, apply and record one in a single transaction.

``apply_correction`` runs inside ``BEGIN IMMEDIATE`` (the database's write lock): it reads what the
correction's precondition needs (``graph.corrections.conflict``), refuses a stale correction before
writing anything, then writes the ``after`` records, the mention changes, the deletions (facts before
entities: a fact's endpoints reference entity rows) and the correction's own row with its subjects.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from ...errors import ConflictError
from ..corrections import Correction, Lookups, StoredState, conflict, stored_state
from ..model import Mention
from .codec import correction_row
from .db import Db
from .reads import TOUCHES, as_json, get_entities, get_facts, mentions
from .writes import delete_rows, insert_mentions, upsert_entities, upsert_facts


def apply_correction(db: Db, correction: Correction) -> None:
    correction.check()
    changes = correction.plan()
    with db.write() as conn:
        problem = conflict(correction, _stored_state(conn, correction.group_id, Lookups.of(correction)))
        if problem is not None:
            raise ConflictError(
                f"correction {correction.uuid} ({correction.operation.value}) was not applied: {problem}; "
                "nothing was written (read the graph again and redo it)"
            )
        group_id = correction.group_id
        upsert_entities(db, conn, changes.entities)
        upsert_facts(db, conn, changes.facts)
        insert_mentions(conn, changes.add_mentions)
        _remove_mentions(conn, changes.remove_mentions)
        delete_rows(db, conn, "facts", group_id, changes.delete_facts)
        delete_rows(db, conn, "entities", group_id, changes.delete_entities)
        insert_corrections(conn, [correction])


def insert_corrections(conn: sqlite3.Connection, corrections: Sequence[Correction]) -> None:
    """The corrections' rows and their subjects (``Correction.subjects``)."""
    for correction in corrections:
        row = conn.execute(
            "INSERT INTO corrections (group_id, uuid, created_at, record) VALUES (?, ?, ?, ?) RETURNING id",
            correction_row(correction),
        ).fetchone()
        conn.executemany(
            "INSERT INTO correction_subjects (subject, correction_id) VALUES (?, ?)",
            [(subject, row[0]) for subject in correction.subjects()],
        )


# (endpoint uuid, fact uuid) of the facts touching the given entities (each endpoint's pair)
_TOUCHING = (
    "SELECT e.uuid, f.uuid FROM facts f JOIN entities e ON e.id IN (f.source_id, f.target_id)"
    f" WHERE {TOUCHES}"
)


def _stored_state(conn: sqlite3.Connection, group_id: str, lookups: Lookups) -> StoredState:
    deleted = as_json(lookups.deleted)
    return stored_state(
        lookups,
        get_entities(conn, group_id, lookups.entities),
        get_facts(conn, group_id, lookups.facts),
        mentions(conn, group_id, lookups.mentioned),
        conn.execute(_TOUCHING, (group_id, deleted, group_id, deleted)),
    )


def _remove_mentions(conn: sqlite3.Connection, removed: Sequence[Mention]) -> None:
    conn.executemany(
        "DELETE FROM mentions WHERE episode_id = (SELECT id FROM episodes WHERE group_id = ? AND uuid = ?)"
        " AND entity_id = (SELECT id FROM entities WHERE group_id = ? AND uuid = ?)",
        [(m.group_id, m.episode_uuid, m.group_id, m.entity_uuid) for m in removed],
    )
