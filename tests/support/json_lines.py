"""What Python's own JSON parser says of a cut line: the column a dump error should name too."""

from __future__ import annotations

import json


def error_column(line: str) -> int:
    """The column ``json.loads`` stops at on ``line`` (which must not be JSON)."""
    try:
        json.loads(line)
    except json.JSONDecodeError as exc:
        return exc.colno
    raise AssertionError(f"{line!r} is JSON")
