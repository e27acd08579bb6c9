"""What a provider's rate-limit headers say: ``x-ratelimit-limit-requests`` / ``-tokens`` (the allowance of
a window), ``x-ratelimit-remaining-requests`` / ``-tokens`` (what was left once this request was
charged) and ``x-ratelimit-reset-requests`` / ``-tokens`` (how long until the allowance is whole again),
as OpenAI, Azure OpenAI, Groq and others send them. Durations come as ``12ms``, ``1s``, ``6m0s``,
``1h2m3.5s`` (Go's notation, OpenAI) or as plain seconds (``20``, ``0.5``)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")
_UNIT_S = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}


@dataclass(frozen=True, slots=True)
class Window:
    """One limit as a response reported it."""

    limit: int
    remaining: int
    reset_s: float | None = None


@dataclass(frozen=True, slots=True)
class RateHeaders:
    """The request and token windows a response reported (None: not reported)."""

    requests: Window | None = None
    tokens: Window | None = None


def parse_duration(text: str) -> float | None:
    """Seconds in ``text`` (``6m0s``, ``12ms``, ``1.5``), or None when it is no duration."""
    text = text.strip()
    try:
        return max(0.0, float(text))
    except ValueError:
        pass
    parts = _DURATION.findall(text)
    if not parts or "".join(n + u for n, u in parts) != text:
        return None
    return sum(float(number) * _UNIT_S[unit] for number, unit in parts)


def parse_rate_headers(headers: Mapping[str, str]) -> RateHeaders | None:
    """The windows ``headers`` report, or None when they report neither."""
    lowered = {k.lower(): v for k, v in headers.items()}
    requests, tokens = _window(lowered, "requests"), _window(lowered, "tokens")
    return RateHeaders(requests, tokens) if requests or tokens else None


def _window(headers: Mapping[str, str], name: str) -> Window | None:
    try:
        limit = int(float(headers[f"x-ratelimit-limit-{name}"]))
        remaining = int(float(headers[f"x-ratelimit-remaining-{name}"]))
    except (KeyError, ValueError):
        return None
    if limit <= 0:  # some gateways send -1 or 0 for "not enforced here"
        return None
    reset = headers.get(f"x-ratelimit-reset-{name}")
    return Window(limit, remaining, parse_duration(reset) if reset is not None else None)
