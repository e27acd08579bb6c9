"""Timestamps found in datasets -> aware UTC datetimes. Pure; no I/O.

Accepted, in this order: an explicit ``strptime`` format (``meta.timestamp_format``), ISO 8601
(``2023-05-08``, ``2023-05-08 13:56``, ``...Z``, offsets), Unix epochs as numbers or digit strings
(seconds; values past year 5000 are read as milliseconds, then microseconds, then nanoseconds),
RFC 2822 (e-mail dates), LoCoMo's ``"1:56 pm on 8 May, 2023"`` and a few common spelled-out forms.
Naive results are read as UTC, like everywhere in epigraph (see ``graph.model``). Unparseable -> ``None``.
"""

from __future__ import annotations

from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

FORMATS: tuple[str, ...] = (
    "%I:%M %p on %d %B, %Y",  # LoCoMo: 1:56 pm on 8 May, 2023
    "%I:%M %p on %d %b, %Y",
    "%Y/%m/%d %H:%M:%S",
    "%Y/%m/%d %H:%M",
    "%Y/%m/%d",
    "%d %B %Y",
    "%d %B, %Y",
    "%B %d, %Y",
    "%d %b %Y",
    "%b %d, %Y",
    "%B %d, %Y %I:%M %p",
    "%d.%m.%Y %H:%M:%S",
    "%d.%m.%Y %H:%M",
    "%d.%m.%Y",
)
_MAX_SECONDS = 95617584000  # year 5000
_EPOCH_TEXT = frozenset("0123456789.-")


class DateParser:
    """Parses timestamps, remembering the last format that worked (datasets repeat one format)."""

    def __init__(self, explicit_format: str | None = None) -> None:
        self.explicit_format = explicit_format
        self._last: str | None = None

    def parse(self, value: Any) -> datetime | None:
        if isinstance(value, datetime):
            return _utc(value)
        if isinstance(value, bool):
            return None
        if isinstance(value, int | float):
            return from_epoch(value)
        if not isinstance(value, str) or not value.strip():
            return None
        text = value.strip()
        if self.explicit_format is not None:
            return _strptime(text, self.explicit_format)
        return self._parse_text(text)

    def _parse_text(self, text: str) -> datetime | None:
        if self._last is not None:
            hit = _strptime(text, self._last)
            if hit is not None:
                return hit
        iso = _iso(text)
        if iso is not None:
            return iso
        if set(text) <= _EPOCH_TEXT:
            try:
                return from_epoch(float(text))
            except ValueError:
                return None
        for fmt in FORMATS:
            hit = _strptime(text, fmt)
            if hit is not None:
                self._last = fmt
                return hit
        return _rfc2822(text)


def parse_timestamp(value: Any, fmt: str | None = None) -> datetime | None:
    """One-off parse (see :class:`DateParser` for repeated use)."""
    return DateParser(fmt).parse(value)


def from_epoch(seconds: float) -> datetime | None:
    value = float(seconds)
    for _unit in ("ms", "us", "ns"):
        if abs(value) <= _MAX_SECONDS:
            break
        value /= 1000.0
    if abs(value) > _MAX_SECONDS:
        return None
    try:
        return datetime.fromtimestamp(value, UTC)
    except (OverflowError, OSError, ValueError):
        return None


def _utc(value: datetime) -> datetime:
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def _iso(text: str) -> datetime | None:
    if not text[:1].isdigit() or len(text) < 8:
        return None
    try:
        return _utc(datetime.fromisoformat(text))
    except ValueError:
        return None


def _strptime(text: str, fmt: str) -> datetime | None:
    try:
        return _utc(datetime.strptime(text, fmt))
    except ValueError:
        return None


def _rfc2822(text: str) -> datetime | None:
    try:
        return _utc(parsedate_to_datetime(text))
    except (TypeError, ValueError, IndexError):
        return None
