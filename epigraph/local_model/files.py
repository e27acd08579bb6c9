"""Small file helpers of the local model: one lock per cache directory, atomic JSON files."""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any


@contextmanager
def exclusive(directory: Path) -> Iterator[None]:
    """Hold the cache directory's lock: two processes never assemble or start the model at once."""
    directory.mkdir(parents=True, exist_ok=True)
    with open(directory / ".lock", "a+b") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def write_json(path: Path, data: dict[str, Any]) -> None:
    """Write ``data`` to ``path`` through a temp file and a rename: readers never see half a file."""
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(temp, path)


def read_json(path: Path) -> dict[str, Any] | None:
    """The JSON object in ``path``, or None when it is missing or unreadable."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None
