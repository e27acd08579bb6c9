"""A third store with only the core (``graph.store.GraphStore``, 25 methods): a small class whose every
method is one of the core's, delegating to an ``EmbeddedStore`` (it has no other public attribute, so it
implements no optional role). ``tests/facade/test_core_store.py`` runs the library on it; a feature's
tests use it to see the role it needs named."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from epigraph.graph.embedded import EmbeddedStore
from epigraph.graph.store import GraphStore
from tests.support.protocols import members

CORE = sorted(members(GraphStore))


def _delegate(name: str) -> Callable[..., Awaitable[Any]]:
    async def call(self: CoreOnly, *args: Any, **kwargs: Any) -> Any:
        return await getattr(self._inner, name)(*args, **kwargs)

    call.__name__ = name
    return call


class CoreOnly:
    """A store with exactly the core's methods, each delegating to an ``EmbeddedStore``."""

    def __init__(self, inner: EmbeddedStore) -> None:
        self._inner = inner


for _name in CORE:
    setattr(CoreOnly, _name, _delegate(_name))
