"""LoCoMo conversations as the QA benches read them (``locomo_qa.py``, ``qa_context.py``): the turns of
the sessions read as episodes (each conversation in its own group), and the questions of categories 1-4
whose evidence lies in them."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from bench.quality.qa_rows import CATEGORIES, Question
from epigraph.episodes.inputs import EpisodeInput
from epigraph.graph.model import to_utc

GROUP = "locomo-qa"


@dataclass
class Conversation:
    name: str
    path: Path
    turns: list[EpisodeInput]
    questions: list[Question]
    sessions: int | None

    @property
    def group(self) -> str:
        return f"{GROUP}-{self.name}"

    @property
    def now(self) -> str:
        """The day after the last session: every question is asked as of then."""
        return f"{max(t.reference_time for t in self.turns) + timedelta(days=1):%Y-%m-%d}"


def load(path: Path, sessions: int | None) -> Conversation:
    """The turns of the first ``sessions`` sessions as episodes, and the questions of categories 1-4
    whose evidence lies in them."""
    data = json.loads(path.read_text(encoding="utf-8"))
    name = path.stem
    turns: list[EpisodeInput] = []
    n = 1
    while f"session_{n}" in data and (sessions is None or n <= sessions):
        when = to_utc(datetime.strptime(data[f"session_{n}_date_time"], "%I:%M %p on %d %B, %Y"))
        for i, turn in enumerate(data[f"session_{n}"]):
            turns.append(
                EpisodeInput(
                    content=turn["text"],
                    speaker=turn["speaker"],
                    reference_time=when + timedelta(seconds=i),
                    group_id=f"{GROUP}-{name}",
                    episode_id=f"locomo:{name}:{turn['dia_id']}",
                    name=turn["dia_id"],
                )
            )
        n += 1
    ingested = {t.name for t in turns}
    questions = [
        Question(
            f"{name}:{i}",
            str(q["question"]),
            str(q["answer"]),
            int(q["category"]),
            tuple(q.get("evidence") or ()),
            name,
        )
        for i, q in enumerate(data.get("qa", []))
        if q.get("category") in CATEGORIES and "answer" in q
    ]
    kept = [q for q in questions if q.evidence and set(q.evidence) <= ingested]
    return Conversation(name, path, turns, kept, sessions)


def interleaved(conversations: Sequence[Conversation], limit: int | None) -> list[Question]:
    """The questions of every conversation, taken in turn, at most ``limit``."""
    out: list[Question] = []
    lists = [list(c.questions) for c in conversations]
    while any(lists):
        for questions in lists:
            if questions:
                out.append(questions.pop(0))
    return out[:limit] if limit else out


def conversations_of(args: argparse.Namespace) -> list[Conversation]:
    paths: list[Path] = args.conversation
    sessions: list[int] = args.sessions or []
    if len(sessions) not in (0, 1, len(paths)):
        raise SystemExit(
            f"{len(paths)} --conversation but {len(sessions)} --sessions: give one for all or one each"
        )
    counts: list[int | None] = (
        list(sessions) if len(sessions) == len(paths) else [sessions[0] if sessions else None] * len(paths)
    )
    found = [load(p, n) for p, n in zip(paths, counts, strict=True)]
    if len({c.name for c in found}) != len(found):
        raise SystemExit("each --conversation must be a different file name (it names the group)")
    for c in found:
        if not c.turns or not c.questions:
            raise SystemExit(f"{c.path}: no turns or no questions of categories 1-4 in the sessions read")
    return found
