"""The redaction vault in the embedded store (``RedactionVault``, v9): a group's header in
``redaction_vaults``, one row of ``redactions`` per placeholder (its kind and number, the digest that
finds it, the sealed original or NULL). Every step is one ``BEGIN IMMEDIATE`` transaction, so SQLite's
write lock (across connections and processes) makes "the digest's number, or the next free one" one step."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from ..store import VaultEntry, VaultHeader, holds_value, reserved_digest
from .db import Db

_HEADER = "SELECT salt, key_check FROM redaction_vaults WHERE group_id = ?"
_PROPOSE = "INSERT INTO redaction_vaults (group_id, salt, key_check) VALUES (?, ?, ?) ON CONFLICT DO NOTHING"
_NUMBER = "SELECT number FROM redactions WHERE group_id = ? AND digest = ?"
_NEXT = "SELECT coalesce(max(number), 0) + 1 FROM redactions WHERE group_id = ? AND kind = ?"
_ADD = "INSERT INTO redactions (group_id, kind, number, digest, sealed) VALUES (?, ?, ?, ?, ?)"
_AT = "SELECT digest FROM redactions WHERE group_id = ? AND kind = ? AND number = ?"
_ROWS = "SELECT kind, number, digest FROM redactions WHERE group_id = ?"
_FREE = "UPDATE redactions SET digest = ?, sealed = NULL WHERE group_id = ? AND kind = ? AND number = ?"
_SEALED = (
    "SELECT sealed FROM redactions WHERE group_id = ? AND kind = ? AND number = ? AND sealed IS NOT NULL"
)


def vault_header(db: Db, group_id: str, proposed: VaultHeader) -> VaultHeader:
    with db.write() as conn:
        conn.execute(_PROPOSE, (group_id, proposed.salt, proposed.key_check))
        salt, key_check = conn.execute(_HEADER, (group_id,)).fetchone()
    return VaultHeader(bytes(salt), bytes(key_check) if key_check is not None else None)


def placeholders(db: Db, group_id: str, entries: Sequence[VaultEntry]) -> list[int]:
    numbers = []
    with db.write() as conn:
        for entry in entries:
            row = conn.execute(_NUMBER, (group_id, entry.digest)).fetchone()
            if row is None:
                row = conn.execute(_NEXT, (group_id, entry.kind)).fetchone()
                conn.execute(_ADD, (group_id, entry.kind, row[0], entry.digest, entry.sealed))
            numbers.append(int(row[0]))
    return numbers


def read_vault_header(conn: sqlite3.Connection, group_id: str) -> VaultHeader | None:
    row = conn.execute(_HEADER, (group_id,)).fetchone()
    return None if row is None else VaultHeader(bytes(row[0]), bytes(row[1]) if row[1] is not None else None)


def known_placeholders(conn: sqlite3.Connection, group_id: str, digests: Sequence[bytes]) -> list[int | None]:
    rows = (conn.execute(_NUMBER, (group_id, digest)).fetchone() for digest in digests)
    return [None if row is None else int(row[0]) for row in rows]


def reserve_placeholders(db: Db, group_id: str, refs: Sequence[tuple[str, int]]) -> list[tuple[str, int]]:
    with db.write() as conn:
        held = {ref: conn.execute(_AT, (group_id, *ref)).fetchone() for ref in dict.fromkeys(refs)}
        clashes = [
            ref for ref, row in held.items() if row is not None and bytes(row[0]) != reserved_digest(*ref)
        ]
        if not clashes:
            for (kind, number), row in held.items():
                if row is None:
                    conn.execute(_ADD, (group_id, kind, number, reserved_digest(kind, number), None))
    return clashes


def sealed_values(
    conn: sqlite3.Connection, group_id: str, refs: Sequence[tuple[str, int]]
) -> dict[tuple[str, int], bytes]:
    found = {}
    for kind, number in refs:
        row = conn.execute(_SEALED, (group_id, kind, number)).fetchone()
        if row is not None:
            found[(kind, number)] = bytes(row[0])
    return found


def held_placeholders(conn: sqlite3.Connection, group_id: str) -> list[tuple[str, int]]:
    """The ``(kind, number)`` placeholders the vault holds a value for (not reserved ones)."""
    rows = conn.execute(_ROWS, (group_id,)).fetchall()
    return sorted((kind, int(number)) for kind, number, digest in rows if holds_value(bytes(digest)))


def free_values(conn: sqlite3.Connection, group_id: str, refs: Sequence[tuple[str, int]]) -> None:
    """Inside the caller's transaction (a forgetting's): each placeholder's value taken out, its number
    kept reserved (:func:`reserved_digest`), its sealed original deleted."""
    conn.executemany(_FREE, [(reserved_digest(kind, n), group_id, kind, n) for kind, n in refs])


def delete_group(conn: sqlite3.Connection, group_id: str) -> None:
    """The group's vault, inside the caller's transaction (``groups.delete_group``)."""
    conn.execute("DELETE FROM redactions WHERE group_id = ?", (group_id,))
    conn.execute("DELETE FROM redaction_vaults WHERE group_id = ?", (group_id,))
