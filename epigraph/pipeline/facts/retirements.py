"""Checks on the retirements a model asks for, before any is applied.

``resolve_episode`` names, for each new fact, the candidates it ``contradicts``; each one named is retired
(``invalid_at`` set, ``invalidated_by`` recorded). Run live, a small model names nearly every candidate
it is shown and retires restatements of the new fact
(docs/decisions/2026-11-25-contradiction-candidates.md). Two checks, both reported in the episode's
warnings:

- **a restatement is not a retirement** (always): a candidate whose sentence has the same words as the
  new fact's, up to articles, demonstratives, case and punctuation, says the same thing; a fact that
  ends another must say something else (a change, a denial: "not", "no longer", "moved" are words too).
  It is read as the duplicate it is (when the decision named no duplicate), never retired;
- **retiring everything shown is not a decision** (``FactOptions.retire_all_guard``, off by default, on
  for the local model): when at least that many candidates were shown and the decision retires every one
  of them, none is retired. A strong model rarely answers that way, and when it rightly does (a plan done
  ends every step of it) the guard would leave the steps believed: so it is for small models, where such
  an answer was the rule.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...graph.model import Fact
from ...language import ARTICLES_AND_DEMONSTRATIVES, phrase_words


def sentence_words(text: str) -> list[str]:
    """The words of a fact sentence that carry its meaning: case-folded, without punctuation, articles or
    demonstratives (negations, tense and modal words stay: they are what a change says)."""
    return [w for w in phrase_words(text) if w not in ARTICLES_AND_DEMONSTRATIVES]


def restates(new: str, old: str) -> bool:
    """Whether ``new`` says what ``old`` says, word for word (up to ``sentence_words``)."""
    words = sentence_words(new)
    return bool(words) and words == sentence_words(old)


def restatements(new: Fact, picked: Sequence[Fact]) -> list[Fact]:
    """The picked candidates that restate ``new``."""
    return [old for old in picked if restates(new.text, old.text)]


def retires_everything(picked: Sequence[Fact], shown: int, guard: int) -> bool:
    """Whether a decision retiring ``picked`` of ``shown`` candidates retires every one of at least
    ``guard`` of them (``guard`` 0: never)."""
    return guard > 0 and shown >= guard and len({f.uuid for f in picked}) >= shown
