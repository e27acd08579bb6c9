"""The store's role Protocols: each small, together exactly ``GraphStore``, each implemented by both stores.

A consumer asks for the roles it calls (``graph.store``), so a fake or a third store implements only
those; ``GraphStore`` is the union the client wires. Checked here without a server: the stores'
classes are compared with each role, method by method (the contract suite checks what they do).
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

ROLES = (store.EpisodeLog, store.GraphReads, store.DerivedViews, store.CorrectionLog, store.WholeGroups)
UNIONS = (store.IngestStore, store.ViewStore, store.EditStore, store.AskStore, store.TransferStore)
STORES = (EmbeddedStore, Neo4jStore)
MAX_METHODS = 25


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


def test_the_module_holds_the_roles_their_unions_and_graph_store() -> None:
    assert set(protocols_of_the_module()) == {*ROLES, *UNIONS, store.GraphStore}


@pytest.mark.parametrize("role", ROLES, ids=lambda p: p.__name__)
def test_every_role_is_small(role: type) -> None:
    count = len(members(role))
    assert 0 < count <= MAX_METHODS, f"{role.__name__} has {count} public methods (at most {MAX_METHODS})"


@pytest.mark.parametrize("union", UNIONS, ids=lambda p: p.__name__)
def test_a_union_declares_nothing_of_its_own(union: type) -> None:
    assert not declared(union)
    assert set(members(union)) == {name for role in union.__mro__ if role in ROLES for name in declared(role)}


def test_the_roles_split_graph_store_without_overlap() -> None:
    names = [name for role in ROLES for name in declared(role)]
    assert len(names) == len(set(names)), "a method is declared by two roles"
    assert set(declared(store.GraphStore)) == {"setup", "close"}
    assert set(members(store.GraphStore)) == {*names, "setup", "close"}


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


@pytest.mark.parametrize("role", [*ROLES, store.GraphStore], ids=lambda p: p.__name__)
@pytest.mark.parametrize("implementation", STORES, ids=lambda s: s.__name__)
def test_both_stores_implement_every_role(implementation: type, role: type) -> None:
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
    for protocol in [*ROLES, store.GraphStore]:
        assert getattr(epigraph, protocol.__name__) is protocol
        assert protocol.__name__ in epigraph.__all__
