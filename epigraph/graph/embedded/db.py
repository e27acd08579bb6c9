"""The SQLite-thread side of the embedded store: one connection, its in-memory indexes, transactions.

A :class:`Db` is only ever touched from the store's single SQLite thread, which serializes every call:
no locks are needed, and a search never observes a write halfway.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future
from contextlib import contextmanager
from typing import Any

import numpy as np

from ...errors import SchemaMismatch, StoreError
from . import fts, migrations, schema
from .ann import EXACT_BELOW, Ann
from .ann_file import SavedIndexes
from .codec import blob_array
from .reads import IN_LIST, as_json
from .terms import TermIndex
from .vector_cache import VectorCache
from .vectors import UNBOUNDED, Kind, Rows, VectorIndex

_VECTOR_TABLE = {"entities": "entity_vectors", "facts": "fact_vectors", "episodes": "episode_vectors"}

REBUILD_SHARE = 0.25
"""A term index with more changed rows than this share of its rows (and at least ``REBUILD_ROWS``) is
reloaded from FTS5 rather than patched: re-tokenizing a row costs several times loading one."""
REBUILD_ROWS = 4096
SCAN_SHARE = 4
"""A group with at least 1 / SCAN_SHARE of a table's rows has its vectors read by a scan of the table."""
LOAD_CHUNK = 65_536
"""Rows of a group's vectors read at once when its matrix is first loaded (a chunk's bytes, ~100 MB at
384 dimensions, are held twice while it is copied in)."""


class Db:
    """One SQLite connection plus the in-memory indexes kept in step with it: vector matrices per group
    and kind, BM25 postings per fulltext index."""

    def __init__(self, path: str, create: bool = True, exact_below: int | None = EXACT_BELOW) -> None:
        self.path = path
        self.conn = schema.connect(path, create)
        try:
            migrations.ensure_schema(self.conn)
            dim = schema.get_meta(self.conn, "embedding_dim")
        except BaseException:
            self.conn.close()
            raise
        self.dim: int | None = None if dim is None else int(dim)
        self.vectors = VectorCache(exact_below, SavedIndexes(path))
        self.stemmer = fts.Stemmer()
        self._terms: dict[str, TermIndex] = {}
        self._changed_rows: dict[str, set[int]] = {}
        self._after_commit: list[Callable[[], None]] = []
        self._data_version = self._read_data_version()

    def close(self) -> None:
        """Save the approximate indexes not written yet (unless another connection wrote meanwhile: this
        one's may then hold a vector removed there), drop the indexes, close the connection."""
        try:
            self.save_indexes()
        finally:
            self._drop_indexes()
            self.conn.close()

    def _drop_indexes(self) -> None:
        self.vectors.clear()
        self._terms.clear()
        self._changed_rows.clear()

    # --- transactions -------------------------------------------------------------------------------
    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """``BEGIN IMMEDIATE`` ... ``COMMIT``; any error rolls everything back and drops the pending
        cache updates. Cache updates registered with :meth:`after_commit` run only once COMMIT succeeded.
        """
        self._after_commit = []
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield self.conn
            self.conn.execute("COMMIT")
        except BaseException:
            if self.conn.in_transaction:
                self.conn.execute("ROLLBACK")
            self._after_commit = []
            self._reload_dim()
            raise
        pending, self._after_commit = self._after_commit, []
        for action in pending:
            action()

    @contextmanager
    def read(self) -> Iterator[sqlite3.Connection]:
        """A read transaction: the queries inside see one snapshot, even with other writers (WAL)."""
        self.conn.execute("BEGIN")
        try:
            yield self.conn
        finally:
            if self.conn.in_transaction:
                self.conn.execute("COMMIT")

    def after_commit(self, action: Callable[[], None]) -> None:
        self._after_commit.append(action)

    # --- embedding dimension ------------------------------------------------------------------------
    def set_dim(self, dim: int) -> None:
        """Record the embedding dimension. Changing it is refused once vectors are stored."""
        if dim <= 0:
            raise StoreError(f"embedding_dim must be positive, got {dim}")
        if self.dim == dim:
            return
        with self.write() as conn:
            if self.dim is not None and _has_vectors(conn):
                raise SchemaMismatch(
                    f"the store holds {self.dim}-dimensional embeddings; cannot switch to {dim} "
                    "(use another file, or re-embed into a fresh store)"
                )
            schema.set_meta(conn, "embedding_dim", str(dim))
            self.dim = dim
        self.vectors.clear()

    def check_vectors(self, vectors: Sequence[Sequence[float] | None]) -> None:
        """Inside a write: every vector has the store's dimension (the first one written sets it)."""
        for vector in vectors:
            if vector is None:
                continue
            if self.dim is None:
                self.dim = len(vector)
                schema.set_meta(self.conn, "embedding_dim", str(self.dim))
            if len(vector) != self.dim:
                raise StoreError(
                    f"embedding of dimension {len(vector)}; this store holds dimension {self.dim}"
                )

    def _read_data_version(self) -> int:
        """Changes exactly when ANOTHER connection commits (SQLite's ``PRAGMA data_version``)."""
        return int(self.conn.execute("PRAGMA data_version").fetchone()[0])

    def _check_data_version(self) -> None:
        """When another connection (another store on the same file, another process) committed since the
        last look, the in-memory indexes may be stale: they are dropped and reloaded lazily."""
        version = self._read_data_version()
        if version != self._data_version:
            self._data_version = version
            self._drop_indexes()
            self._reload_dim()

    def _reload_dim(self) -> None:
        dim = schema.get_meta(self.conn, "embedding_dim")
        self.dim = None if dim is None else int(dim)

    # --- vector matrices ----------------------------------------------------------------------------
    def vector_index(self, kind: Kind, group_id: str) -> VectorIndex | None:
        """The group's vectors of ``kind`` (loaded on first use); ``None`` when no dimension is known."""
        self._check_data_version()
        if self.dim is None:
            return None
        # see vectors.Times: what searches as of a time, or of what was known then, skip
        times = "x.start_key, x.created_at" if kind == "facts" else "NULL, NULL"
        dim = self.dim

        def load() -> Iterator[Rows]:
            # A group holding a good share of the table is read in the table's order (a scan: pages in
            # sequence), a smaller one through its index (a scan reads too many rows): 200k facts,
            # one group, 0.6 s against 1.4-1.9 s.
            held = self.conn.execute(f"SELECT count(*) FROM {kind} WHERE group_id = ?", (group_id,))
            table = self.conn.execute(f"SELECT coalesce(max(id), 0) FROM {kind}")
            scan = "NOT INDEXED" if held.fetchone()[0] * SCAN_SHARE >= table.fetchone()[0] else ""
            sql = (
                f"SELECT x.uuid, v.vector, {times} FROM {kind} AS x {scan}"
                f" JOIN {_VECTOR_TABLE[kind]} AS v ON v.id = x.id WHERE x.group_id = ?"
            )
            cursor = self.conn.execute(sql, (group_id,))
            while chunk := cursor.fetchmany(LOAD_CHUNK):
                yield _rows(chunk, dim, kind)

        return self.vectors.index(kind, group_id, self.dim, load)

    def start_indexes(self, group_ids: Sequence[str]) -> list[Future[Ann]]:
        """The approximate-index builds of the groups' vectors, each kind, started where large enough."""
        found = (self.vector_index(kind, group_id) for kind in _VECTOR_TABLE for group_id in group_ids)
        return [building for index in found if index is not None and (building := index.indexing())]

    def indexes_ready(self, group_ids: Sequence[str]) -> int:
        """How many of the groups' vectors (each kind) are searched through a ready approximate index."""
        found = (self.vector_index(kind, group_id) for kind in _VECTOR_TABLE for group_id in group_ids)
        return sum(1 for index in found if index is not None and index.approximate() is not None)

    def save_indexes(self) -> int:
        """Write the loaded approximate indexes not written next to the database yet (``ann_file``)."""
        self._check_data_version()  # another connection's commit: this one's may hold a vector it removed
        return self.vectors.save()

    # --- term indexes -------------------------------------------------------------------------------
    def term_index(self, table: str) -> TermIndex:
        """The BM25 postings of ``table``'s fulltext index: loaded on first use, then patched with the
        rows committed writes changed (call inside a read transaction: one snapshot for both)."""
        self._check_data_version()
        index, changed = self._terms.pop(table, None), self._changed_rows.pop(table, set())
        # Popped while it is brought up to date: an error on the way leaves no half-patched index behind
        # (the next search loads it afresh).
        if index is None or len(changed) > max(REBUILD_ROWS, REBUILD_SHARE * len(index)):
            present = self._rows_by_group(table)
            index = TermIndex(fts.WEIGHTS[table])
            index.replace(None, present, fts.index_tokens(self.conn, table))
            self._term_times(table, index, None)
        elif changed:
            index.replace(
                changed, self._rows_by_group(table, changed), fts.row_tokens(self.conn, table, changed)
            )
            self._term_times(table, index, changed)
        self._terms[table] = index
        return index

    def _term_times(self, table: str, index: TermIndex, among: Iterable[int] | None) -> None:
        """Facts: each row's start key and created_at (the vector index's times), which searches as of a
        time, or of what was known then, bound in the term index before reading any row."""
        if table != "facts":
            return
        where, params = _ids_among(among)
        sql = f"SELECT id, start_key, created_at FROM facts{where}"
        found = [(i, UNBOUNDED if b is None else b, c) for i, b, c in self.conn.execute(sql, params)]
        if found:
            rows = np.array(found, dtype=np.int64)
            index.set_times(rows[:, 0], rows[:, 1:])

    def _rows_by_group(self, table: str, among: Iterable[int] | None = None) -> dict[str, np.ndarray]:
        """The ids of ``table``'s rows (``among`` those, if given) by group id (one SQL row per group)."""
        where, params = _ids_among(among)
        sql = f"SELECT group_id, group_concat(id) FROM {table}{where} GROUP BY group_id"
        return {g: np.fromstring(ids, dtype=np.int64, sep=",") for g, ids in self.conn.execute(sql, params)}

    def rows_changed(self, table: str, ids: Iterable[int]) -> None:
        """After COMMIT: ``table``'s rows ``ids`` were inserted, updated or deleted (a term index not
        loaded yet ignores it: it will read the committed rows)."""
        if table in self._terms:
            self._changed_rows.setdefault(table, set()).update(ids)


def _rows(chunk: list[tuple[str, bytes, int | None, int | None]], dim: int, kind: Kind) -> Rows:
    """Rows read from SQLite (uuid, vector blob, two times) as :data:`.vectors.Rows`."""
    joined = b"".join(blob for _, blob, _, _ in chunk)
    if len(joined) != len(chunk) * dim * 4:
        raise StoreError(f"a stored vector of {kind} is not of the store's dimension {dim}: a damaged file")
    times = np.array([[UNBOUNDED if t is None else t for t in row[2:]] for row in chunk], np.int64)
    return [uuid for uuid, *_ in chunk], blob_array(joined).reshape(len(chunk), dim), times


def _has_vectors(conn: sqlite3.Connection) -> bool:
    query = "SELECT " + " OR ".join(f"EXISTS (SELECT 1 FROM {table})" for table in _VECTOR_TABLE.values())
    row: Any = conn.execute(query).fetchone()
    return bool(row[0])


def _ids_among(among: Iterable[int] | None) -> tuple[str, tuple[str, ...]]:
    """A ``WHERE`` clause keeping the rows ``among`` those ids (none: every row) and its parameters."""
    return ("", ()) if among is None else (f" WHERE id IN {IN_LIST}", (as_json(list(among)),))
