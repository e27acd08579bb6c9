"""The hosted bench's turns: LoCoMo conversations as volume, and the gold turns beside them.

The volume is every session of the conversations given (LoCoMo 26 and 30: 788 turns), repeated as
needed with the two speakers renamed (a different pair of first names each time, in the speakers and in
the text) and the session dates moved on by the length of the material each time, so no volume turn is
word for word a gold turn and one group's history keeps going forward in time:

- one group's history (``history``): pass 0, 1, 2 ... of the material one after another;
- many groups (``groups``): group ``g`` reads ``per_group`` consecutive turns of pass ``g``, starting at
  ``g * per_group`` (wrapping), so groups differ in speakers and in turns.

The gold turns (``gold_items``) are the gold sets' own turns, each set in its own group, unchanged: the
simulated provider answers them from the gold annotations.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from bench.shared.gold import GoldSet
from epigraph.episodes.inputs import EpisodeInput
from epigraph.graph.model import to_utc

FIRST_NAMES = (
    "Avery Blake Casey Devon Emery Finley Gray Harper Indigo Jordan Kai Logan Morgan Noel Oakley Parker "
    "Quinn Riley Sawyer Taylor Umber Vale Wren Xander Yael Zion Arden Bellamy Corin Dallas Ellis Flynn "
    "Greer Hollis Ira Jules Keegan Lane Marlo Nico"
).split()


@dataclass(frozen=True)
class Turn:
    speaker: str
    text: str
    when: datetime


@dataclass(frozen=True)
class Material:
    """The conversations' turns in order, with their speakers."""

    turns: list[Turn]
    speakers: list[str]

    @property
    def span(self) -> timedelta:
        return self.turns[-1].when - self.turns[0].when + timedelta(days=1)


def load(conversations: Sequence[Path]) -> Material:
    """Every session of each LoCoMo conversation file, in order (a turn's time: its session's, a later
    file's moved after the earlier ones)."""
    turns: list[Turn] = []
    speakers: list[str] = []
    for path in conversations:
        data = json.loads(path.read_text(encoding="utf-8"))
        speakers += [data["speaker_a"], data["speaker_b"]]
        own: list[Turn] = []
        n = 1
        while f"session_{n}" in data:
            when = to_utc(datetime.strptime(data[f"session_{n}_date_time"], "%I:%M %p on %d %B, %Y"))
            own += [
                Turn(t["speaker"], t["text"], when + timedelta(seconds=i))
                for i, t in enumerate(data[f"session_{n}"])
            ]
            n += 1
        # the next conversation begins the day after the previous one ends, so time only moves forward
        shift = (
            max(timedelta(0), turns[-1].when - own[0].when + timedelta(days=1))
            if turns and own
            else timedelta(0)
        )
        turns += [Turn(t.speaker, t.text, t.when + shift) for t in own]
    if not turns:
        raise SystemExit(f"no turns in {', '.join(map(str, conversations))}")
    return Material(turns, list(dict.fromkeys(speakers)))


def renamed(material: Material, number: int) -> list[Turn]:
    """Pass ``number`` of the material: every speaker renamed (in speakers and text), dates moved on."""
    names = {
        old: FIRST_NAMES[(number * len(material.speakers) + i) % len(FIRST_NAMES)]
        for i, old in enumerate(material.speakers)
    }
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, names)) + r")\b")
    shift = material.span * number
    return [
        Turn(
            names.get(t.speaker, t.speaker), pattern.sub(lambda m: names[m.group(1)], t.text), t.when + shift
        )
        for t in material.turns
    ]


def history(material: Material, turns: int, group: str) -> list[EpisodeInput]:
    """One group's ``turns`` first turns of passes 0, 1, 2, ... of the material."""
    out: list[EpisodeInput] = []
    number = 0
    while len(out) < turns:
        out += [_item(t, group) for t in renamed(material, number)]
        number += 1
    return out[:turns]


def groups(material: Material, count: int, per_group: int, prefix: str = "vol") -> list[EpisodeInput]:
    """``count`` groups of ``per_group`` consecutive turns each (see the module docstring)."""
    out: list[EpisodeInput] = []
    size = len(material.turns)
    for g in range(count):
        passed = renamed(material, g)
        start = (g * per_group) % size
        out += [_item(passed[(start + i) % size], f"{prefix}-{g:03d}") for i in range(per_group)]
    return out


def gold_items(sets: Sequence[GoldSet]) -> list[EpisodeInput]:
    """Each gold set's turns in its own group (the set's name)."""
    return [
        EpisodeInput(
            content=t.text, speaker=t.speaker, reference_time=to_utc(t.reference_time), group_id=s.name
        )
        for s in sets
        for t in s.turns
    ]


def _item(turn: Turn, group: str) -> EpisodeInput:
    return EpisodeInput(content=turn.text, speaker=turn.speaker, reference_time=turn.when, group_id=group)
