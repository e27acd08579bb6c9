"""Cited ids in an answer, checked as the text streams: ``[F1]``, ``[E2]``, ``[F1, F3]``, ``[F1][E2]``.

:class:`CitationFilter` sits between the model's stream and the reader. Text outside brackets passes
at once; a ``[`` holds the text back until its ``]`` (or until it clearly is not a citation). A bracket
of ids keeps the ids that were observed and drops the others (they are listed in ``dropped``), so no
reader ever sees a citation of something no lookup returned. ``[none]`` is the model's mark for "nothing
shown answers this": it is taken out of the text and sets ``declared_none``. ``first_mark`` says what the
first decisive bracket was (``"none"``, or ``"cited"`` for one that kept a shown id). A reply that
*begins* with ``[none]``, before any text, declines (``declined``: ``ask``'s auto mode then looks
further); a ``[none]`` after text ends an answer that cites nothing (a small model that cited in its
own way, "(F1)", "by E5", and closed its answer with ``[none]`` was read as declining it:
docs/decisions/2026-11-25-ask.md).

:func:`cited_answer_grammar` makes citing a rule rather than a request, for endpoints that accept a
GBNF grammar (the local model): the reply is ``[none]`` alone, or one to three sentences (at most 300
characters each), each ending with a bracket of shown ids or ``[none]``. A 1.5B model asked politely
copied the facts' "(from ...; current)" and cited nothing; held to the grammar it cites the fact it
used. A sentence's end (``.``, ``!`` or ``?`` before a space) is where its citation goes: when the
grammar let the text run on past it, the model, wanting to stop but not allowed to before citing,
padded its reply ("This is mentioned in episode E2, which states ...") until it chose to cite (the
figures: docs/decisions/2026-11-25-ask.md). A mark not before a space stays text ("3.5", "e.g.,").
Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Literal

from ..prompts.grammar import literal

_ID = re.compile(r"[FE]\d{1,4}")
_SEPARATORS = re.compile(r"[\s,;]+")
HOLD_LIMIT = 48
"""A ``[`` without its ``]`` within this many characters is ordinary text."""
MAX_SENTENCES = 3
"""An answer held to the grammar has at most this many cited sentences (the prompt asks for one to three)."""
MAX_SENTENCE_CHARS = 300
"""...and each runs at most this many characters before its citation (between marks inside it: "3.5")."""
MARKS_INSIDE = 4
"""...holding at most this many marks not before a space ("3.5", "e.g.,")."""
NONE = "none"
"""``[none]``: the answer's mark that nothing shown answers the question."""


def cited_answer_grammar(labels: Iterable[str]) -> str:
    """A GBNF grammar for an answer citing only ``labels``: sentences, each ending in ``[F1]``,
    ``[F1, E2]`` or ``[none]``, right after its closing mark if it has one ("Alice moved. [F1]"; a mark
    before a space ends a sentence). Text may not hold ``[``, ``]``, a newline or ``<``: llama.cpp's
    sampler matches special tokens by their text (``<|im_end|>``), so without the ``<`` a model that wants to
    stop before citing writes invisible control tokens until its token cap."""
    ids = " | ".join(literal(label) for label in dict.fromkeys(labels) if _ID.fullmatch(label))
    if not ids:
        raise ValueError("cited_answer_grammar needs at least one id like F1 or E1")
    return (
        f'root ::= "[" {literal(NONE)} "]" | sentence{{1,{MAX_SENTENCES}}}\n'
        'sentence ::= text [.!?]{0,3} " "? "[" refs "]" [.!?]? " "?\n'
        f"text ::= head ([.!?]{{1,3}} tail){{0,{MARKS_INSIDE}}}\n"
        f"head ::= [^\\[\\]\\n<.!?]{{1,{MAX_SENTENCE_CHARS}}}\n"
        f"tail ::= [^\\[\\]\\n<.!? ] [^\\[\\]\\n<.!?]{{0,{MAX_SENTENCE_CHARS - 1}}}\n"
        f'refs ::= ref ("," " "? ref)* | {literal(NONE)}\n'
        f"ref ::= {ids}\n"
    )


class CitationFilter:
    """Feed the model's text piece by piece; read what may be shown. ``known(id)`` says whether an id
    was observed. ``cited`` lists the observed ids cited (first-cited order), ``dropped`` the others."""

    def __init__(self, known: Callable[[str], bool]) -> None:
        self._known = known
        self._held = ""
        self.cited: list[str] = []
        self.dropped: list[str] = []
        self.declared_none = False
        self.first_mark: Literal["none", "cited"] | None = None
        self.spoke = False
        """Whether any text (not a mark) has passed yet."""
        self.declined = False
        """Whether the reply began with ``[none]``, before any text: it declines to answer. A ``[none]``
        after text ends an answer the model did not cite (a small model's way of stopping)."""

    def feed(self, text: str) -> str:
        out: list[str] = []
        for char in text:
            if self._held:
                self._held += char
                if char == "]":
                    out.append(self._resolve(self._held))
                    self._held = ""
                elif char == "[":  # a new bracket: the held one was ordinary text
                    out.append(self._said(self._held[:-1]))
                    self._held = char
                elif len(self._held) > HOLD_LIMIT:
                    out.append(self._said(self._held))
                    self._held = ""
            elif char == "[":
                self._held = char
            else:
                out.append(self._said(char))
        return "".join(out)

    def _said(self, text: str) -> str:
        self.spoke = self.spoke or bool(text.strip())
        return text

    def finish(self) -> str:
        """The text still held back at the end (an unclosed bracket is ordinary text)."""
        rest, self._held = self._held, ""
        return rest

    def _resolve(self, bracket: str) -> str:
        inner = bracket[1:-1].strip()
        if inner.casefold() == NONE:
            self.declared_none = True
            self.declined = self.declined or (self.first_mark is None and not self.spoke)
            self.first_mark = self.first_mark or "none"
            return ""
        parts = [p for p in _SEPARATORS.split(inner) if p]
        if not parts or not all(_ID.fullmatch(p) for p in parts):
            return self._said(bracket)  # not a citation but text: "[sic]", "[1]", "[]"
        kept = []
        for part in parts:
            if self._known(part):
                kept.append(part)
                if part not in self.cited:
                    self.cited.append(part)
            elif part not in self.dropped:
                self.dropped.append(part)
        if kept:
            self.first_mark = self.first_mark or "cited"
        return f"[{', '.join(kept)}]" if kept else ""
