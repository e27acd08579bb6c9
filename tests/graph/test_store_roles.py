"""The store's Protocols: every one at most 25 public methods (its roles' included), each implemented by
both stores; the core (``GraphStore``) and the optional roles (``OPTIONAL_ROLES``) together are every
method the stores have.

A consumer asks for the roles it calls (``graph.store``), so a fake or a third store implements only
those; a store implements the core, and may add the optional roles (``graph.roles.role`` asks for one,
and raises ``StoreRoleMissing`` naming what is missing). The roles declare the methods, once each; the
unions (``GraphReads``, ``EditStore``, ...) declare nothing and name what one consumer combines. Every
Protocol class of the store modules is found here by scanning them, so a new one is checked without
being listed: the bar "every Protocol at most 25 public methods" fails here first.

Checked here without a server: the stores' classes are compared with each Protocol, method by method
(the contract suite checks what they do).
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections.abc import Callable
from types import ModuleType
from typing import Any, Protocol

import pytest

import epigraph
from epigraph.errors import StoreRoleMissing
from epigraph.graph import roles, store, store_records, store_roles
from epigraph.graph.embedded import EmbeddedStore
from epigraph.graph.neo4j import Neo4jStore
from epigraph.ingestion.pacing import Priority, paced
from tests.support.protocols import declared, members

STORES = (EmbeddedStore, Neo4jStore)
MAX_METHODS = 25
OWNERS_OWN = {"setup", "close"}
"""What ``GraphStore`` (the core) declares beside its roles: the owner opens and closes the store."""
STORE_MODULES = (store, store_records, store_roles)


def protocols_in(module: ModuleType) -> list[type]:
    """The Protocol classes ``module`` defines (not those it imports)."""
    return [
        value
        for value in vars(module).values()
        if isinstance(value, type)
        and value.__module__ == module.__name__
        and getattr(value, "_is_protocol", False)
    ]


PROTOCOLS = [protocol for module in STORE_MODULES for protocol in protocols_in(module)]
ROLES = [p for p in PROTOCOLS if p is not store.GraphStore and declared(p)]
UNIONS = [p for p in PROTOCOLS if p is not store.GraphStore and not declared(p)]


def test_the_module_holds_roles_unions_and_the_core() -> None:
    assert store.GraphStore in PROTOCOLS
    assert {"EpisodeLog", "GraphLookups", "GraphSearch", "WholeGroups", "BulkWrites"} <= {
        r.__name__ for r in ROLES
    }
    assert {"GraphReads", "IngestStore", "EditStore", "TransferStore"} <= {u.__name__ for u in UNIONS}


@pytest.mark.parametrize("protocol", PROTOCOLS, ids=lambda p: p.__name__)
def test_every_protocol_has_at_most_25_public_methods(protocol: type) -> None:
    count = len(members(protocol))
    assert 0 < count <= MAX_METHODS, f"{protocol.__name__} has {count} public methods (at most {MAX_METHODS})"


def test_every_protocol_of_the_package_has_at_most_25_public_methods() -> None:
    """The bar beyond the store: every Protocol class anywhere in ``epigraph`` (its roles' methods
    counted)."""
    found = {}
    for info in pkgutil.walk_packages(epigraph.__path__, "epigraph."):
        module = importlib.import_module(info.name)
        for protocol in protocols_in(module):
            found[f"{module.__name__}.{protocol.__name__}"] = len(members(protocol))
    assert {
        "epigraph.prompts.protocol.LLM",
        "epigraph.embed.Embedder",
        "epigraph.graph.store.GraphStore",
    } <= set(found)
    assert {name: n for name, n in found.items() if n > MAX_METHODS} == {}


def test_the_size_check_counts_inherited_methods() -> None:
    """Splitting a big Protocol into halves that one Protocol inherits does not pass the bar."""
    assert len(members(store.GraphStore)) == len(declared(store.GraphStore)) + len(members(store.IngestStore))
    big = type(
        "Big", (store.GraphStore, store.DerivedViews, store.CorrectionLog, store.WholeGroups, Protocol), {}
    )
    assert len(members(big)) > MAX_METHODS


@pytest.mark.parametrize("union", UNIONS, ids=lambda p: p.__name__)
def test_a_union_is_only_roles(union: type) -> None:
    combined = [cls for cls in union.__mro__ if cls in ROLES]
    assert len(combined) >= 2, f"{union.__name__} combines fewer than two roles"
    assert set(members(union)) == {name for role in combined for name in declared(role)}


def test_the_core_and_the_optional_roles_split_the_stores_without_overlap() -> None:
    names = [name for role in ROLES for name in declared(role)]
    assert len(names) == len(set(names)), "a method is declared by two roles"
    assert set(declared(store.GraphStore)) == OWNERS_OWN
    assert set(members(store.GraphStore)) == {*members(store.IngestStore), *OWNERS_OWN}
    optional = {name for role in roles.OPTIONAL_ROLES for name in members(role)}
    assert not optional & set(members(store.GraphStore)), "an optional role repeats a core method"
    assert {*members(store.GraphStore), *optional} == {*names, *OWNERS_OWN}, (
        "a role is neither core nor optional"
    )


def test_reads_write_nothing() -> None:
    """Search, ``ask`` and the explore views take ``GraphReads``: no write of any role."""
    writes = {*declared(store.EpisodeLog), *declared(store.ViewUpkeep), *declared(store.CorrectionWrites)}
    assert not writes & set(members(store.GraphReads))


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


class _CoreOnly:
    """Every method of the core and nothing else (methods that do nothing: only ``role`` looks at it)."""


for _name in members(store.GraphStore):
    setattr(_CoreOnly, _name, lambda self, *a, **k: None)


def test_role_gives_the_store_or_names_the_feature_the_role_and_what_is_missing() -> None:
    embedded = EmbeddedStore(":memory:")
    assert roles.role(embedded, store.CorrectionLog, feature="corrections") is embedded
    core = _CoreOnly()
    assert roles.optional(core, store.ViewReads) is None
    with pytest.raises(StoreRoleMissing) as raised:
        roles.role(core, store.TransferStore, feature="load")
    error = raised.value
    assert (error.feature, error.role, error.store) == ("load", "TransferStore", "_CoreOnly")
    assert error.methods == sorted(members(store.TransferStore))
    assert "load needs a store with the TransferStore role" in str(error)
    assert "load_group" in str(error)


@pytest.mark.parametrize("role", PROTOCOLS, ids=lambda p: p.__name__)
def test_the_paced_store_keeps_every_role_of_the_store_it_wraps(role: type) -> None:
    """``PacedStore`` proxies through ``__getattr__``: an optional role is there when the store has it."""
    assert isinstance(paced(EmbeddedStore(":memory:"), Priority()), role)
    assert isinstance(paced(_CoreOnly(), Priority()), role) == issubclass(store.GraphStore, role)


def test_the_package_root_exports_every_role() -> None:
    for protocol in [*ROLES, store.GraphReads, store.DerivedViews, store.CorrectionLog, store.GraphStore]:
        assert getattr(epigraph, protocol.__name__) is protocol
        assert protocol.__name__ in epigraph.__all__
