"""The store's Protocols: every one at most 25 methods but ``GraphStore``, each implemented by both stores.

A consumer asks for the roles it calls (``graph.store``), so a fake or a third store implements only
those. The roles declare the methods, once each, and together are exactly ``GraphStore``; the unions
(``GraphReads``, ``AskStore``, ...) declare nothing and name what one consumer combines. Every Protocol
class of the module is found here by scanning it, so a new one is checked without being listed.

``GraphStore`` (41 methods) is the one exception to "at most 25", on purpose: it is the composition the
two store classes implement (the issue lets a store class implement several roles), asked for only by
the one that owns the store and wires every consumer (``KnowledgeGraph`` and the queue it builds), never
by a consumer. Python has no intersection type, so "a store with every role" can only be written, and
checked by mypy strict, as one Protocol inheriting them all; an abstract base class instead would have a
third store subclass it, stricter than the structural check it has today, and a type alias of the roles
would be their union (any one of them), not their sum.

Checked here without a server: the stores' classes are compared with each Protocol, method by method
(the contract suite checks what they do).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, Protocol

import pytest

import epigraph
from epigraph.graph import store
from epigraph.graph.embedded import EmbeddedStore
from epigraph.graph.neo4j import Neo4jStore

STORES = (EmbeddedStore, Neo4jStore)
MAX_METHODS = 25
OWNERS_OWN = {"setup", "close"}
"""What ``GraphStore`` declares beside its roles: the owner opens and closes the store."""


def declared(protocol: type) -> dict[str, Callable[..., Any]]:
    """The public methods ``protocol`` declares in its own body."""
    return {
        name: value
        for name, value in vars(protocol).items()
        if not name.startswith("_") and inspect.isfunction(value)
    }


def members(protocol: type) -> dict[str, Callable[..., Any]]:
    """Every public method of ``protocol``, its own and its roles'."""
    found: dict[str, Callable[..., Any]] = {}
    for cls in reversed(protocol.__mro__):
        if cls is not Protocol and Protocol in cls.__mro__[1:]:
            found.update(declared(cls))
    return found


def protocols_of_the_module() -> list[type]:
    return [
        value
        for value in vars(store).values()
        if isinstance(value, type)
        and value.__module__ == store.__name__
        and getattr(value, "_is_protocol", False)
    ]


PROTOCOLS = protocols_of_the_module()
ROLES = [p for p in PROTOCOLS if p is not store.GraphStore and declared(p)]
UNIONS = [p for p in PROTOCOLS if p is not store.GraphStore and not declared(p)]
CONSUMER_FACING = [*ROLES, *UNIONS]


def test_the_module_holds_roles_unions_and_graph_store() -> None:
    assert store.GraphStore in PROTOCOLS
    assert {"EpisodeLog", "GraphLookups", "GraphSearch", "WholeGroups"} <= {r.__name__ for r in ROLES}
    assert {"GraphReads", "IngestStore", "AskStore", "TransferStore"} <= {u.__name__ for u in UNIONS}


@pytest.mark.parametrize("protocol", CONSUMER_FACING, ids=lambda p: p.__name__)
def test_every_protocol_but_graph_store_is_small(protocol: type) -> None:
    count = len(members(protocol))
    assert 0 < count <= MAX_METHODS, f"{protocol.__name__} has {count} public methods (at most {MAX_METHODS})"


@pytest.mark.parametrize("union", UNIONS, ids=lambda p: p.__name__)
def test_a_union_is_only_roles(union: type) -> None:
    roles = [cls for cls in union.__mro__ if cls in ROLES]
    assert len(roles) >= 2, f"{union.__name__} combines fewer than two roles"
    assert set(members(union)) == {name for role in roles for name in declared(role)}


def test_the_roles_split_graph_store_without_overlap() -> None:
    names = [name for role in ROLES for name in declared(role)]
    assert len(names) == len(set(names)), "a method is declared by two roles"
    assert set(declared(store.GraphStore)) == OWNERS_OWN
    assert set(members(store.GraphStore)) == {*names, *OWNERS_OWN}
    assert all(issubclass(store.GraphStore, role) for role in ROLES)


def test_ask_reads_only() -> None:
    """Answering a question writes nothing: its union holds no write of any role."""
    writes = {*declared(store.EpisodeLog), *declared(store.ViewUpkeep), *declared(store.CorrectionWrites)}
    assert not writes & set(members(store.AskStore))


def _shape(method: Callable[..., Any]) -> tuple[str, list[tuple[str, Any, Any]]]:
    """How a method is called: async or not (an async generator counts as async iteration), and its
    parameters' names, kinds and defaults."""
    if inspect.isasyncgenfunction(method):
        kind = "async iterator"
    elif inspect.iscoroutinefunction(method):
        kind = "coroutine"
    else:
        kind = "function"
    params = [(p.name, p.kind, p.default) for p in inspect.signature(method).parameters.values()]
    return kind, params


def _calls_alike(protocol_method: Callable[..., Any], method: Callable[..., Any]) -> bool:
    want_kind, want = _shape(protocol_method)
    kind, got = _shape(method)
    iterates = {want_kind, kind} <= {"function", "async iterator"}  # ``def dump() -> AsyncGenerator``
    return (kind == want_kind or iterates) and got == want


@pytest.mark.parametrize("role", PROTOCOLS, ids=lambda p: p.__name__)
@pytest.mark.parametrize("implementation", STORES, ids=lambda s: s.__name__)
def test_both_stores_implement_every_protocol(implementation: type, role: type) -> None:
    assert issubclass(implementation, role)
    for name, method in members(role).items():
        assert _calls_alike(method, getattr(implementation, name)), (
            f"{implementation.__name__}.{name} is not called as {role.__name__}.{name}: "
            f"{_shape(getattr(implementation, name))} != {_shape(method)}"
        )


def test_the_checks_see_a_store_missing_a_method_or_taking_other_parameters() -> None:
    class Partial:
        async def groups(self) -> list[str]:
            return []

        async def stats(self, group: str | None = None) -> None:  # another parameter name
            return None

    assert not issubclass(Partial, store.WholeGroups)  # no dump, load_group, delete_group
    assert not _calls_alike(members(store.WholeGroups)["stats"], Partial.stats)
    assert _calls_alike(members(store.WholeGroups)["groups"], Partial.groups)


def test_the_package_root_exports_every_role() -> None:
    for protocol in [*ROLES, store.GraphReads, store.DerivedViews, store.CorrectionLog, store.GraphStore]:
        assert getattr(epigraph, protocol.__name__) is protocol
        assert protocol.__name__ in epigraph.__all__
