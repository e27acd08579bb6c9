"""Cited ids in an answer, checked as the text streams: ``[F1]``, ``[E2]``, ``[F1, F3]``, ``[F1][E2]``.

:class:`CitationFilter` sits between the model's stream and the reader. Text outside brackets passes
at once; a ``[`` holds the text back until its ``]`` (or until it clearly is not a citation). A bracket
of ids keeps the ids that were observed and drops the others (they are listed in ``dropped``), so no
reader ever sees a citation of something no lookup returned. Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Callable

_ID = re.compile(r"[FE]\d{1,4}")
_SEPARATORS = re.compile(r"[\s,;]+")
HOLD_LIMIT = 48
"""A ``[`` without its ``]`` within this many characters is ordinary text."""


class CitationFilter:
    """Feed the model's text piece by piece; read what may be shown. ``known(id)`` says whether an id
    was observed. ``cited`` lists the observed ids cited (first-cited order), ``dropped`` the others."""

    def __init__(self, known: Callable[[str], bool]) -> None:
        self._known = known
        self._held = ""
        self.cited: list[str] = []
        self.dropped: list[str] = []

    def feed(self, text: str) -> str:
        out: list[str] = []
        for char in text:
            if self._held:
                self._held += char
                if char == "]":
                    out.append(self._resolve(self._held))
                    self._held = ""
                elif char == "[":  # a new bracket: the held one was ordinary text
                    out.append(self._held[:-1])
                    self._held = char
                elif len(self._held) > HOLD_LIMIT:
                    out.append(self._held)
                    self._held = ""
            elif char == "[":
                self._held = char
            else:
                out.append(char)
        return "".join(out)

    def finish(self) -> str:
        """The text still held back at the end (an unclosed bracket is ordinary text)."""
        rest, self._held = self._held, ""
        return rest

    def _resolve(self, bracket: str) -> str:
        inner = bracket[1:-1].strip()
        parts = [p for p in _SEPARATORS.split(inner) if p]
        if not parts or not all(_ID.fullmatch(p) for p in parts):
            return bracket  # not a citation: "[sic]", "[1]", "[]"
        kept = []
        for part in parts:
            if self._known(part):
                kept.append(part)
                if part not in self.cited:
                    self.cited.append(part)
            elif part not in self.dropped:
                self.dropped.append(part)
        return f"[{', '.join(kept)}]" if kept else ""
