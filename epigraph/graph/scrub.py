"""A forgotten subject's names taken out of text: every spelling replaced by one placeholder.

A :class:`Scrubber` is built from the spellings of a subject (its name, its aliases, and any the caller
adds) and finds them as whole words, case-insensitively, however their words are spaced: "Dana", "DANA"
and "Dana's" are found in "Dana's bike", "Danaher" and "Bandana" are not (a spelling inside another word
is another word). Spellings are read the way entity names are normalized (``model.normalize_name``:
outer punctuation and spaces dropped); a spelling shorter than ``MIN_LENGTH`` characters is not used
(a one-letter alias would erase every such letter standing alone), and :attr:`Scrubber.unused` counts
them.

Only text is scrubbed, never a key: ids, group ids, relation names and labels stay as they are (a
relation or a label is an identifier of the schema, not a sentence).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

MIN_LENGTH = 2
"""The shortest spelling a scrubber uses (characters, once normalized)."""
PLACEHOLDER = "[forgotten]"
"""What replaces a forgotten name unless the caller gives another placeholder."""
_OUTER = " \t\n.,;:!?\"'`()[]{}"
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def spelling(name: str) -> str:
    """``name`` as a scrubber reads it: outer punctuation and spaces dropped, inner runs of spaces one."""
    return " ".join(name.split()).strip(_OUTER)


class Scrubber:
    """Finds and replaces ``names`` (whole words, any case) by ``placeholder``."""

    def __init__(self, names: Iterable[str], placeholder: str = PLACEHOLDER) -> None:
        if not placeholder or len(placeholder) > 64 or _CONTROL.search(placeholder):
            raise ValueError("a placeholder is 1-64 characters without control characters")
        spelled = {s.casefold(): s for s in map(spelling, names) if s}
        kept = sorted((s for s in spelled.values() if len(s) >= MIN_LENGTH), key=lambda s: (-len(s), s))
        self.names: tuple[str, ...] = tuple(kept)
        self.unused = len(spelled) - len(kept)
        self.placeholder = placeholder
        self._pattern = _pattern(self.names)
        if self._pattern is not None and self._pattern.search(placeholder):
            raise ValueError("the placeholder contains a name it replaces: choose another placeholder")

    def __bool__(self) -> bool:
        return self._pattern is not None

    def finds(self, text: str | None) -> bool:
        """Whether ``text`` holds one of the names."""
        return bool(text) and self._pattern is not None and self._pattern.search(text or "") is not None

    def text(self, text: str) -> str:
        """``text`` with every name replaced by the placeholder."""
        if self._pattern is None or not text:
            return text
        return self._pattern.sub(self.placeholder.replace("\\", "\\\\"), text)

    def maybe(self, text: str | None) -> str | None:
        return None if text is None else self.text(text)

    def value(self, value: Any) -> Any:
        """A JSON value (attributes) with the names taken out of every string in it, keys included."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.value(v) for v in value]
        if isinstance(value, dict):
            return {self.text(str(k)): self.value(v) for k, v in value.items()}
        return value

    def texts(self, texts: Iterable[str]) -> list[str]:
        """Each text scrubbed, the ones that become equal to an earlier one dropped (aliases)."""
        return list(dict.fromkeys(self.text(t) for t in texts))


def _pattern(names: tuple[str, ...]) -> re.Pattern[str] | None:
    if not names:
        return None
    spelled = [r"\s+".join(re.escape(word) for word in name.split()) for name in names]
    return re.compile(r"(?<!\w)(?:" + "|".join(spelled) + r")(?!\w)", re.IGNORECASE)
