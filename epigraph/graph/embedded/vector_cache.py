"""The loaded vector matrices of a database, one :class:`.vectors.VectorIndex` per (kind, group), kept in
step with committed writes, with their saved approximate indexes (:mod:`.ann_file`)."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from . import ann
from .ann_file import SavedIndexes
from .vectors import Kind, Loader, Times, VectorIndex


class VectorCache:
    """The loaded :class:`VectorIndex` per (kind, group), with their files (:mod:`.ann_file`; none for an
    in-memory database). Not thread-safe: the store's SQLite thread owns it."""

    def __init__(self, exact_below: int | None = ann.EXACT_BELOW, saved: SavedIndexes | None = None) -> None:
        self.exact_below = exact_below
        self.saved = saved or SavedIndexes(":memory:")
        self._indexes: dict[tuple[Kind, str], VectorIndex] = {}

    def index(self, kind: Kind, group_id: str, dim: int, load: Loader) -> VectorIndex:
        """The group's index, loaded with ``load`` on first use."""
        key = (kind, group_id)
        index = self._indexes.get(key)
        if index is None:
            index = VectorIndex(dim, self.exact_below)
            for keys, vectors, times in load():
                index.extend(keys, vectors, times)
            self._indexes[key] = index
            if index.wants_index() and (saved := self.saved.load(kind, group_id, dim)) is not None:
                if index.adopt(saved):
                    self.saved.drop(kind, group_id)
        return index

    def save(self) -> int:
        """Write every loaded index that is ready and not written yet (:meth:`VectorIndex.saveable`);
        how many were written."""
        written = 0
        for (kind, group_id), index in self._indexes.items():
            saved = index.saveable()
            if saved is not None and self.saved.save(kind, group_id, saved):
                index.saved = True
                written += 1
        return written

    def apply(
        self,
        kind: Kind,
        group_id: str,
        upserts: Iterable[tuple[str, np.ndarray | None, Times]],
        new_only: bool = False,
    ) -> None:
        """Mirror committed writes (uuid, vector, times) into a loaded index (``None`` vector = the row
        has none any more).

        Groups not loaded yet are skipped: they will read the committed rows when first searched.
        """
        index = self._indexes.get((kind, group_id))
        if index is None:  # its file, if any, may hold a vector replaced here (unless all are new): it goes
            if not new_only:
                self.saved.drop(kind, group_id)
            return
        changed = False
        for uuid, vector, times in upserts:
            if vector is None:
                changed |= index.remove(uuid)
            else:
                changed |= index.upsert(uuid, vector, times)
        if changed:
            self.saved.drop(kind, group_id)

    def remove(self, kind: Kind, group_id: str, uuids: Iterable[str]) -> None:
        index = self._indexes.get((kind, group_id))
        if index is not None:
            for uuid in uuids:
                index.remove(uuid)
        self.saved.drop(kind, group_id)

    def drop_files(self, group_id: str) -> None:
        """Delete the group's saved indexes (its loaded ones are written again only if they never had a
        vector taken out)."""
        self.saved.drop_group(group_id)
        for (_, group), index in self._indexes.items():
            if group == group_id:
                index.saved = False

    def drop_group(self, group_id: str) -> None:
        """Forget the group's indexes and their files (its rows are gone; a later search loads what is
        there then)."""
        for key in [key for key in self._indexes if key[1] == group_id]:
            del self._indexes[key]
        self.saved.drop_group(group_id)

    def clear(self) -> None:
        self._indexes.clear()
