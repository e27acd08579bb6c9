"""The QA bench's journal (``locomo_qa.py --journal PATH``): every answer and every verdict written as a
JSON line the moment it is made, so a run killed part way (a whole-conversation run on the local model
takes hours) is started again with the same PATH and goes on where it stopped.

- The first line is the run's **settings** (the commit, the conversations and their sessions, the paths
  asked, the judge's votes and temperature, the context window, ...). A run whose settings differ is
  refused, naming the fields, so answers of two set-ups are never mixed into one result: start a new
  journal instead.
- An **answer** line is one question answered one way (a row of the bench, its fields as the bench's
  ``Row``): a row and question found there is not asked again; its latency is the one measured when it
  was asked.
- A **verdict** line is the judge's votes on one distinct answer to a question (the question's key and
  the answer's normalized words): it is not judged again.

A line cut by a kill (the last one, not ending in a newline) is dropped and written again.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any


class Journal:
    """Answers and verdicts of one run, read back from ``path`` and appended to it as they are made."""

    def __init__(self, path: Path, settings: Mapping[str, Any]) -> None:
        self.path = path
        self.settings = dict(settings)
        self._answers: dict[tuple[str, str], dict[str, Any]] = {}
        self._verdicts: dict[tuple[str, str], tuple[bool, ...]] = {}
        self.resumed_answers = 0
        self.resumed_verdicts = 0
        self._read()

    def answer(self, row: str, question: str) -> dict[str, Any] | None:
        """The fields of ``row``'s answer to ``question`` when an earlier run made it, else None."""
        found = self._answers.get((row, question))
        if found is not None:
            self.resumed_answers += 1
        return found

    def record_answer(self, fields: Mapping[str, Any]) -> None:
        self._answers[(str(fields["row"]), str(fields["question"]))] = dict(fields)
        self._append({"kind": "answer", **fields})

    def verdict(self, question: str, answer: str) -> tuple[bool, ...] | None:
        found = self._verdicts.get((question, answer))
        if found is not None:
            self.resumed_verdicts += 1
        return found

    def record_verdict(self, question: str, answer: str, votes: tuple[bool, ...]) -> None:
        self._verdicts[(question, answer)] = votes
        self._append({"kind": "verdict", "question": question, "answer": answer, "votes": list(votes)})

    def _read(self) -> None:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.write_text(json.dumps({"kind": "settings", **self.settings}) + "\n", encoding="utf-8")
            return
        lines = text.split("\n")
        complete, cut = lines[:-1], lines[-1]  # a kill mid-write leaves a last line without its newline
        if cut:
            self.path.write_text("".join(line + "\n" for line in complete), encoding="utf-8")
        for number, line in enumerate(complete, 1):
            try:
                entry = json.loads(line)
            except json.JSONDecodeError as exc:
                raise SystemExit(f"{self.path}:{number}: not a journal line ({exc.msg})") from None
            kind = entry.pop("kind", None)
            if number == 1:
                self._check_settings(entry if kind == "settings" else {})
            elif kind == "answer":
                self._answers[(str(entry["row"]), str(entry["question"]))] = entry
            elif kind == "verdict":
                key = (str(entry["question"]), str(entry["answer"]))
                self._verdicts[key] = tuple(bool(v) for v in entry["votes"])
            else:
                raise SystemExit(f"{self.path}:{number}: unknown journal line kind {kind!r}")

    def _check_settings(self, found: Mapping[str, Any]) -> None:
        differ = sorted(k for k in {*found, *self.settings} if found.get(k) != self.settings.get(k))
        if differ:
            shown = "; ".join(f"{k}: {found.get(k)!r} there, {self.settings.get(k)!r} now" for k in differ)
            raise SystemExit(
                f"{self.path}: written by a run with other settings ({shown}); its answers cannot be "
                "mixed with this run's: give another --journal path or delete it"
            )

    def _append(self, entry: Mapping[str, Any]) -> None:
        with self.path.open("a", encoding="utf-8") as out:
            out.write(json.dumps(entry, default=str) + "\n")
