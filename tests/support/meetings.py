"""The scripted world the removal and batch-end tests share: Alice lives in Paris, says hello, and meets
Bob, then four more people at once (five facts: more than ``summary_compose_max``, so her summary wants
the model; ``World`` summarizes an entity as ``"<name>: <its facts>"``)."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path

from tests.support.world import T0, F, Turn, World

PARIS = "Alice: I live in Paris."
LIVES = "Alice lives in Paris."
HELLO = "Alice: Hello."
MET_BOB = "Alice met Bob."
FOUR = ("Carol", "Dave", "Erin", "Frank")
MET_FOUR = "Alice met Carol, Dave, Erin and Frank."
WORLD = World(
    {
        PARIS: Turn(["Alice", "Paris"], [F("Alice", "Paris", "LIVES_IN", LIVES)]),
        HELLO: Turn(["Alice"], []),
        MET_BOB: Turn(["Alice", "Bob"], [F("Alice", "Bob", "MET", MET_BOB)]),
        MET_FOUR: Turn(["Alice", *FOUR], [F("Alice", n, "MET", f"Alice met {n}.") for n in FOUR]),
    }
)


def ticking() -> Callable[[], datetime]:
    """A clock a second later at every reading, so a later episode's facts are newer."""
    ticks = (T0 + timedelta(days=30, seconds=n) for n in itertools.count())
    return lambda: next(ticks)


def meetings_file(path: Path, names: list[str]) -> Path:
    """An episodes file (``epigraph ingest``'s JSON lines) of "Alice met <name>." a day apart, in order:
    the children the kill tests start ingest it."""
    path.write_text(
        "".join(
            json.dumps({"content": f"Alice met {name}.", "reference_time": f"2024-05-0{i + 1}T10:00:00Z"})
            + "\n"
            for i, name in enumerate(names)
        )
    )
    return path
