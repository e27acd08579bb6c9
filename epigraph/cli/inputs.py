"""What the ``epigraph`` command reads: argument values (dates, counts, recipes) and episode files.

Episode files are streamed twice: a validation pass (:func:`scan_file`: count, collect problems) and
an ingestion pass (:func:`parse_file`) fed to the ingestor in :func:`batched` chunks, so a big file is
never loaded whole and bad input is found before anything is ingested.
"""

from __future__ import annotations

import argparse
import itertools
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TypeVar

from ..episodes.inputs import EpisodeInput, open_lines, parse_episode_lines
from ..errors import InputError
from ..graph.model import to_utc
from ..search import RECIPES, SearchConfig

T = TypeVar("T")
KEPT_ERRORS = 20
"""A scan keeps (to show) at most this many problems; it counts them all."""

# ---------------------------------------------------------------------------------- argument values


def date_arg(text: str) -> datetime:
    """An ISO date or datetime (``2024-05-02``, ``2024-05-02T10:00``, ``...Z``); naive ones are UTC."""
    try:
        value = to_utc(text)
    except ValueError:
        value = None
    if not isinstance(value, datetime):
        raise argparse.ArgumentTypeError(
            f"not an ISO date or datetime: {text!r} (e.g. 2024-05-02 or 2024-05-02T10:00:00Z)"
        )
    return value


def positive_arg(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def recipe_arg(text: str) -> SearchConfig:
    found = RECIPES.get(text.upper())
    if found is None:
        raise argparse.ArgumentTypeError(f"unknown recipe {text!r}; known: {', '.join(sorted(RECIPES))}")
    return found


# ------------------------------------------------------------------------------------ episode files


@dataclass
class Scan:
    """A validation pass over an input: how many episodes it holds, and its problems."""

    valid: int = 0
    invalid: int = 0
    errors: list[InputError] = field(default_factory=list)
    groups: set[str] = field(default_factory=set)

    def add_error(self, error: InputError) -> None:
        self.invalid += 1
        if len(self.errors) < KEPT_ERRORS:
            self.errors.append(error)


def parse_file(path: Path, group: str) -> Iterator[EpisodeInput | InputError]:
    """Stream a JSONL episode file: an episode or the located problem per line."""
    with open_lines(path) as lines:
        yield from parse_episode_lines(lines, file=str(path), default_group=group)


def valid_episodes(path: Path, group: str) -> Iterator[EpisodeInput]:
    return (item for item in parse_file(path, group) if isinstance(item, EpisodeInput))


def scan_file(path: Path, group: str) -> Scan:
    scan = Scan()
    for item in parse_file(path, group):
        if isinstance(item, InputError):
            scan.add_error(item)
        else:
            scan.valid += 1
            scan.groups.add(item.group_id)
    return scan


def batched(items: Iterable[T], size: int) -> Iterator[list[T]]:
    """``itertools.batched`` (3.12) for 3.11, as lists."""
    it = iter(items)
    while batch := list(itertools.islice(it, size)):
        yield batch


def default_mapping_path(data: Path) -> Path:
    """Where a proposed mapping is saved: ``<stem>.mapping.json`` next to the input."""
    name = data.name.removesuffix(".gz")
    stem = name if data.is_dir() else Path(name).stem
    return data.parent / f"{stem}.mapping.json"
