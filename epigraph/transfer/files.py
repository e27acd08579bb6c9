"""Dump files: written whole or not at all (a ``.partial`` file renamed at the end), ``.gz`` compressed,
and read back (``episodes.inputs.open_lines``) through ``format.read``."""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import AsyncIterable
from pathlib import Path
from typing import IO

from ..episodes.inputs import open_lines
from .format import Dump, read


async def write_dump(lines: AsyncIterable[str], path: Path) -> dict[str, dict[str, int]]:
    """Write the dump's ``lines`` to ``path`` (``.gz``: gzip); returns its end line's counts. The file
    appears only once every line is written: a failure leaves no file (and no partial dump) behind."""
    partial = path.with_name(path.name + ".partial")
    handle: IO[str] = (
        gzip.open(partial, "wt", encoding="utf-8")
        if path.suffix == ".gz"
        else partial.open("w", encoding="utf-8")
    )
    last = ""
    try:
        with handle:
            async for line in lines:
                handle.write(line + "\n")
                last = line
        os.replace(partial, path)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    counts: dict[str, dict[str, int]] = json.loads(last)["counts"]
    return counts


def read_dump(path: Path) -> Dump:
    """Read and check the dump file at ``path`` (InputError naming the line and field of a problem)."""
    with open_lines(path) as lines:
        return read(lines, str(path))
