"""Asking a store for an optional role: :func:`role` for a feature that needs it, :func:`optional` for a
reader that does without it.

``graph.store`` and ``graph.store_roles`` declare the roles (the core ``GraphStore`` every store
implements, and the optional ones in :data:`OPTIONAL_ROLES`); this module asks a store in use whether
it has one. :func:`role`
raises :class:`~epigraph.errors.StoreRoleMissing` naming the feature, the role and the methods the
store has not got (:func:`missing`); :func:`optional` gives None instead (search without communities,
``ask`` without summaries, an entity view without its corrections).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, TypeVar, cast

from ..errors import StoreRoleMissing
from .store import CorrectionLog, DerivedViews
from .store_roles import (
    BulkWrites,
    ChangeReads,
    DecisionReads,
    Forgetting,
    RedactionVault,
    Retention,
    WholeGroups,
)

__all__ = ["OPTIONAL_ROLES", "missing", "optional", "role"]

R = TypeVar("R")

OPTIONAL_ROLES: tuple[type, ...] = (
    DerivedViews, CorrectionLog, ChangeReads, DecisionReads, WholeGroups, BulkWrites, Forgetting, Retention,
    RedactionVault,
)  # fmt: skip
"""The roles a store may add to the core; ``EmbeddedStore`` and ``Neo4jStore`` have every one."""


def missing(store: object, protocol: type) -> list[str]:
    """The public methods of ``protocol`` (its roles' included) that ``store`` has not got."""
    names = {
        name
        for cls in protocol.__mro__
        if cls is not Protocol and Protocol in cls.__mro__[1:]
        for name, value in vars(cls).items()
        if not name.startswith("_") and callable(value)
    }
    return sorted(name for name in names if not callable(getattr(store, name, None)))


# ``protocol`` is typed ``Callable[..., R]``, not ``type[R]``: mypy refuses a Protocol class where
# ``type[R]`` is expected (type-abstract); a runtime_checkable Protocol class is what is passed.


def role(store: object, protocol: Callable[..., R], *, feature: str) -> R:
    """``store`` as ``protocol`` (an optional role, or a union with one), for ``feature``; raises
    :class:`~epigraph.errors.StoreRoleMissing` naming the feature, the role and the methods the store
    has not got when it does not implement it."""
    found = optional(store, protocol)
    if found is None:
        cls = cast(type, protocol)
        raise StoreRoleMissing(feature, cls.__name__, type(store).__name__, missing(store, cls))
    return found


def optional(store: object, protocol: Callable[..., R]) -> R | None:
    """``store`` as ``protocol`` when it implements it, else None: for a reader that does without it
    (search without communities, ``ask`` without summaries, an entity view without its corrections)."""
    return cast(R, store) if isinstance(store, cast(type, protocol)) else None
