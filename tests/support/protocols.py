"""The methods a Protocol class declares, and those it has with its roles' (the store's roles)."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, Protocol


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
