"""Corrections by hand: add, retire, edit or delete a fact; merge, unmerge or rename entities; undo any
of them. Each is one :class:`~epigraph.graph.corrections.Correction`, stored with its author and the
records before and after, so the history of an entity shows who changed what, and an undo is exact.
``KnowledgeGraph`` exposes them; :class:`Editor` is the engine."""

from __future__ import annotations

from .build import UNSET
from .editor import Editor
from .refs import EntityRef

__all__ = ["UNSET", "Editor", "EntityRef"]
