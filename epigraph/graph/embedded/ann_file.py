"""The approximate indexes saved next to the database, so a large group's index is not built again on
every open (at a million facts the build takes 11-17 minutes on 2 cores; reading the file, seconds).

A group's index (:mod:`.ann`) is written to ``<database>.ann/<kind>-<digest of the group>.npz`` by
``EmbeddedStore.prepare_vectors`` and when the store closes: usearch's serialized index, the uuid under
each label and a fingerprint of each vector. Opened again, the group's matrix is read from SQLite as
always and the saved index is *adopted* (``VectorIndex.adopt``): a label whose uuid is still stored with
the same fingerprint is kept, the rows the file does not hold (written since) are added. The file can be
stale (a crash, another process's writes); the index searched is still the one of the rows as stored.

What a file may hold: only vectors the database holds. usearch keeps a removed vector's bytes in its
index (and writes them when saved) until its slot is reused, so:

- any removal or change of a group's stored vector deletes the group's file at its commit, and an index
  that has had one since it was built or read is never written (the next open builds it again);
- forgetting deletes the group's files inside its transaction, before anything is committed;
- deleting a group deletes its files; a file holding a vector the rows no longer have (found when it is
  adopted: a crash between a commit and the deletion) is deleted at once.

A new row only (an ordinary ingestion) keeps the file: the next open adds it.
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .ann import Ann

log = logging.getLogger("epigraph.embedded")

KINDS = ("entities", "facts", "episodes")
FORMAT = 1
"""Bumped when what a file holds changes: a file of another format is not read (and is replaced)."""

_PRIME = np.uint64(0x100000001B3)
_OFFSET = np.uint64(0xCBF29CE484222325)


def fingerprints(matrix: np.ndarray) -> np.ndarray:
    """One uint64 per row of a float32 matrix, from its exact bytes (FNV-1a over 64-bit words, over all
    rows at once): equal rows give equal prints; a changed row, almost surely another."""
    rows = np.ascontiguousarray(matrix, dtype=np.float32)
    if rows.shape[1] % 2:
        rows = np.pad(rows, ((0, 0), (0, 1)))
    words = rows.view(np.uint64)
    prints = np.full(rows.shape[0], _OFFSET, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for column in words.T:
            prints ^= column
            prints *= _PRIME
    return prints


@dataclass
class Saved:
    """A saved index: ``labels[i]`` is the label under which ``ann`` holds the vector of ``keys[i]``,
    whose fingerprint was ``prints[i]`` when it was written."""

    ann: Ann
    labels: np.ndarray
    keys: list[str]
    prints: np.ndarray


class SavedIndexes:
    """The files of one database's saved indexes (none for an in-memory database)."""

    def __init__(self, database: str) -> None:
        self.directory = None if database in ("", ":memory:") else Path(f"{database}.ann")

    def path(self, kind: str, group_id: str) -> Path | None:
        if self.directory is None:
            return None
        digest = hashlib.sha256(group_id.encode()).hexdigest()[:32]
        return self.directory / f"{kind}-{digest}.npz"

    def exists(self, kind: str, group_id: str) -> bool:
        path = self.path(kind, group_id)
        return path is not None and path.exists()

    def load(self, kind: str, group_id: str, dim: int) -> Saved | None:
        """The group's saved index of ``kind``, or ``None`` when there is none or it cannot be read
        (damaged, another format or dimension: then it is deleted and the index is built again)."""
        path = self.path(kind, group_id)
        if path is None or not path.exists():
            return None
        try:
            with np.load(path, allow_pickle=False) as data:
                if int(data["format"]) != FORMAT or int(data["dim"]) != dim:
                    raise ValueError(f"format {int(data['format'])}, dimension {int(data['dim'])}")
                ann = Ann.restored(data["index"], dim)
                labels = data["labels"].astype(np.int64)
                keys = [key.decode() for key in data["keys"].tolist()]
                prints = data["prints"].astype(np.uint64)
            if not len(labels) == len(keys) == len(prints) == len(ann):
                raise ValueError("its labels, keys and index differ in length")
        except (OSError, ValueError, KeyError) as exc:
            log.warning("saved vector index %s not used (%s); it will be built again", path.name, exc)
            self.drop(kind, group_id)
            return None
        return Saved(ann, labels, keys, prints)

    def save(self, kind: str, group_id: str, saved: Saved) -> bool:
        """Write the index (to a temporary file, then renamed over the old one); ``False`` when the
        directory cannot be written (a read-only place: the index is built on each open, as without it)."""
        path = self.path(kind, group_id)
        if path is None:
            return False
        try:
            path.parent.mkdir(exist_ok=True)
            handle, temporary = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
            try:
                with os.fdopen(handle, "wb") as out:
                    np.savez(
                        out,
                        format=np.array(FORMAT),
                        dim=np.array(saved.ann.dim),
                        index=saved.ann.serialized(),
                        labels=saved.labels,
                        keys=np.array([key.encode() for key in saved.keys], dtype=np.bytes_),
                        prints=saved.prints,
                    )
                os.replace(temporary, path)
            except BaseException:
                Path(temporary).unlink(missing_ok=True)
                raise
        except OSError as exc:
            log.warning("vector index of %s not saved (%s)", kind, exc)
            return False
        return True

    def drop(self, kind: str, group_id: str) -> None:
        path = self.path(kind, group_id)
        if path is not None:
            path.unlink(missing_ok=True)

    def drop_group(self, group_id: str) -> None:
        for kind in KINDS:
            self.drop(kind, group_id)
