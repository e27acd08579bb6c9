"""The signature of a delivery: ``Epigraph-Signature: t=<unix seconds>,v1=<hex>``, where ``<hex>`` is
HMAC-SHA256, keyed by the shared secret, of ``<unix seconds>.<body>`` (the body's exact bytes). The
timestamp is signed too, so a receiver that refuses old timestamps (:func:`verify`'s ``tolerance``) is
safe from a recorded delivery sent again."""

from __future__ import annotations

import hashlib
import hmac
import time
from collections.abc import Mapping

SIGNATURE = "Epigraph-Signature"
EVENT = "Epigraph-Event"
DELIVERY = "Epigraph-Delivery"


def sign(secret: str, body: bytes, timestamp: int) -> str:
    """The signature header's value for ``body`` sent at ``timestamp`` (unix seconds)."""
    digest = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()
    return f"t={timestamp},v1={digest}"


def verify(
    secret: str, headers: Mapping[str, str], body: bytes, *, tolerance: float = 300, now: float | None = None
) -> bool:
    """Whether ``body`` with these ``headers`` was signed with ``secret`` at most ``tolerance`` seconds
    from ``now`` (the receiver's side; header names in any case)."""
    value = next((v for k, v in headers.items() if k.lower() == SIGNATURE.lower()), "")
    parts = dict(p.split("=", 1) for p in value.split(",") if "=" in p)
    try:
        timestamp = int(parts["t"])
    except (KeyError, ValueError):
        return False
    if abs((time.time() if now is None else now) - timestamp) > tolerance:
        return False
    expected = sign(secret, body, timestamp).split("v1=", 1)[1]
    return hmac.compare_digest(expected, parts.get("v1", ""))
