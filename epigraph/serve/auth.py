"""API keys scoped to groups, shared by the HTTP API and the MCP server.

A key is sent as ``Authorization: Bearer KEY`` (or ``X-API-Key: KEY``). No key or an unknown key is
401; a known key asking for a group it does not name is 403 with the same words whether the group exists
or not (nothing is revealed about other groups). Keys are compared in constant time and never logged.
With no keys configured the server is open, which ``check_exposure`` allows on loopback only.
"""

from __future__ import annotations

import hmac
import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass

from ..errors import ConfigError
from ..graph.model import check_group_id

ALL_GROUPS = "*"


class AuthError(Exception):
    """Refused: ``status`` 401 (who are you?) or 403 (not yours); ``detail`` is safe to show."""

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(detail)
        self.status, self.detail = status, detail


class BadGroup(ValueError):
    """A group id that is not one (422, naming the field)."""


@dataclass(frozen=True)
class Principal:
    """Who is calling: the groups the key names (``*``: all); ``open``: keys are off."""

    groups: frozenset[str]
    open: bool = False

    def may_use(self, group_id: str) -> bool:
        return self.open or ALL_GROUPS in self.groups or group_id in self.groups


class Keys:
    """The configured keys (``epigraph.config.api_keys``) and the decisions made with them."""

    def __init__(self, keys: Mapping[str, frozenset[str]]) -> None:
        self._keys = [(k.encode(), groups) for k, groups in keys.items()]

    @property
    def enabled(self) -> bool:
        return bool(self._keys)

    def principal(self, key: str | None) -> Principal:
        if not self._keys:
            return Principal(frozenset(), open=True)
        if not key:
            raise AuthError(401, "an API key is required (Authorization: Bearer KEY)")
        found: frozenset[str] | None = None
        given = key.encode()
        for known, groups in self._keys:  # no early exit: the time does not depend on which key matched
            if hmac.compare_digest(known, given):
                found = groups
        if found is None:
            raise AuthError(401, "invalid API key")
        return Principal(found)

    def group(self, key: str | None, group_id: str) -> str:
        """The group, checked: a valid id the key may use (401, 422 or 403 otherwise)."""
        principal = self.principal(key)
        try:
            check_group_id(group_id)
        except ValueError as exc:
            raise BadGroup(str(exc)) from None
        if not principal.may_use(group_id):
            raise AuthError(403, "this API key may not use this group")
        return group_id


def key_from_headers(headers: Mapping[str, str]) -> str | None:
    """The key of a request: ``Authorization: Bearer KEY`` or ``X-API-Key: KEY``."""
    auth = headers.get("authorization", "")
    scheme, _, value = auth.partition(" ")
    if scheme.lower() == "bearer" and value.strip():
        return value.strip()
    return headers.get("x-api-key") or None


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_exposure(keys: Keys, host: str) -> str:
    """The line the server prints at start about its keys; refuses an open server off loopback."""
    if keys.enabled:
        return "API keys on"
    if not is_loopback(host):
        raise ConfigError(
            f"refusing to serve {host} without API keys: set EPIGRAPH_API_KEYS or EPIGRAPH_API_KEYS_FILE "
            "(keys are optional only on a loopback address such as 127.0.0.1)"
        )
    return f"API keys OFF: anyone on this machine may read and write every group (loopback {host} only)"
