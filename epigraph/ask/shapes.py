"""What a question asks for, read from its grammar: the shape that picks the one-call context's parts
(:func:`.context.parts_for`). No model, no graph: words only.

- ``when``: a time ("When did...", "What date...", "How long ago...", "In which month/year...");
- ``gather``: several things said at different times, a list ("What activities...", "Which books...",
  "What are...", "What kinds of...", "What has X done...", "In what ways..."): a plural asked for after
  its question word, or a word that asks for every one of them;
- ``said``: what was said or felt in one message ("What did X say about...", "How did X feel...");
- ``plain``: anything else (one fact).

The first that matches wins, in that order.
"""

from __future__ import annotations

import re
from typing import Literal

Shape = Literal["when", "gather", "said", "plain"]

_WHEN = re.compile(
    r"^\s*when\b|\bwhat (?:date|day|time|year|month|week)\b|\bhow long (?:ago|has|have|had|did)\b"
    r"|\b(?:in|on|during) (?:what|which) (?:year|month|day|week|season)\b|\bwhich (?:year|month|day)\b",
    re.IGNORECASE,
)
_GATHER_WORDS = re.compile(
    r"\b(?:what|which) (?:kinds|types|sorts) of\b|\bin what ways\b|\bwhat (?:are|were) (?:some )?\w+"
    r"|\b(?:all|every|list|activities|things|ways|hobbies|events|places|items)\b",
    re.IGNORECASE,
)
_ASKED_NOUN = re.compile(r"^\s*(?:what|which)\s+((?:[a-z-]+\s+){0,2}?[a-z-]+)\s", re.IGNORECASE)
_SAID = re.compile(
    r"\b(?:say|said|says|tell|told|mention(?:ed)?|describe[ds]?|feel|felt|think|thought|quote)\b",
    re.IGNORECASE,
)
_AUXILIARIES = frozenset(
    "is are was were do does did has have had can could will would should may might".split()
)


def shape_of(question: str) -> Shape:
    """The shape of ``question`` (see the module docstring)."""
    if _WHEN.search(question):
        return "when"
    if _GATHER_WORDS.search(question) or _asks_for_plural(question):
        return "gather"
    if _SAID.search(question):
        return "said"
    return "plain"


def _asks_for_plural(question: str) -> bool:
    """Whether the words after the question word (before its verb) end in a plural: "Which books...",
    "What sports..."."""
    match = _ASKED_NOUN.match(question)
    if match is None:
        return False
    words = match.group(1).split()
    if words[0].casefold() in _AUXILIARIES:
        return False
    noun = words[-1].casefold()
    return noun not in _AUXILIARIES and noun.endswith("s") and not noun.endswith(("ss", "us", "is"))
