"""Hallucination check: a name the episode and its context never mention is dropped and reported.

Small models invent what the text never says: "Sam lives in New York City." from a greeting, "Evan
works at Prius". Whatever the model, an extracted entity, or a fact endpoint that names no entity of
this episode, is kept only when its name is *grounded* in the episode text, the episode's name (the
speaker) or the previous-episodes window the model was shown. The rule, on case-folded, accent-free
words (possessive ``'s`` removed):

1. the content words of the name (stop words and pronouns left out) are found in the text: as the
   same word, the same word up to a plural or verb ending ("kids"/"kid", "painted"/"painting"), a
   shortening ("edu" for "education", "comp" for "competition", "parent" for "parenthood"), or a common
   synonym for the family words "my ..." gets resolved through ("mom"/"mother", "kids"/"children"). A
   name of one or two content words needs all of them, a longer one two in three: "Melanie's kids" from
   "Melanie: my kids ..." is grounded (the owner is the speaker, the head noun is in the text), and so
   is "Gina's clothing store" from Gina's "the store"; "Caroline's sister" after "my mom" is not, nor
   "New York City" after "Anything new?" (the 2.7% of the hand-made gold names of LoCoMo 26 and 30 a
   stricter all-words rule refused were such paraphrases: "Caroline's education" from "my edu");
2. or the name is an acronym (2-6 capitals) of consecutive words of the text ("NYC" after "New York
   City").

An entity the model itself typed as a part of speech or a feeling ("Good": Adjective, "See": Verb,
both from a greeting) is not an entity either, whatever its name.

A name with no content word at all ("I", "You", "the": stop words and pronouns are not content) is not
an entity and is dropped too. Pure logic plus
two report helpers; the pipeline calls them as lines arrive.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

from ..graph.stopwords import STOP_WORDS

if TYPE_CHECKING:
    from ..prompts.extract_facts import ExtractedFact
    from .state import EpisodeRun

_WORD = re.compile(r"[a-z0-9]+")
_POSSESSIVE = re.compile(r"(?<=\w)['’]s\b")
_PRONOUNS = frozenset(
    "i me my mine myself you your yours yourself we us our ours he him his she her hers it its they them "
    "their theirs someone everyone".split()
)
_NOT_CONTENT = STOP_WORDS | _PRONOUNS
_NOT_ENTITY_TYPES = frozenset(
    "adjective verb adverb pronoun preposition conjunction interjection determiner article greeting "
    "feeling emotion action".split()
)
_ENDINGS = ("ies", "es", "s", "ing", "ed", "er")
_SYNONYMS: tuple[frozenset[str], ...] = (
    frozenset({"mom", "mother", "mum", "mommy", "mama", "mam"}),
    frozenset({"dad", "father", "daddy", "papa", "pa"}),
    frozenset({"kid", "child", "children", "son", "daughter"}),
    frozenset({"husband", "hubby", "spouse", "wife", "partner"}),
    frozenset({"boyfriend", "girlfriend", "bf", "gf", "partner"}),
    frozenset({"grandma", "grandmother", "granny", "nana"}),
    frozenset({"grandpa", "grandfather"}),
    frozenset({"sibling", "brother", "sister", "bro", "sis"}),
    frozenset({"friend", "buddy", "pal", "bestie"}),
    frozenset({"job", "work", "career"}),
)


def words(text: str) -> list[str]:
    """Case-folded, accent-free words of ``text``, possessive ``'s`` removed."""
    plain = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    return _WORD.findall(_POSSESSIVE.sub("", plain.casefold()))


def stem(word: str) -> str:
    """A light English stem: enough for plurals and -ing/-ed forms, nothing clever."""
    for ending in _ENDINGS:
        if word.endswith(ending) and len(word) - len(ending) >= 3:
            base = word[: -len(ending)]
            return base + "y" if ending == "ies" else base
    return word


class Grounding:
    """The words a name may be built from: those of the episode, its speaker and its context."""

    def __init__(self, texts: Iterable[str]) -> None:
        self._sequence = [w for text in texts for w in words(text)]
        self._words = set(self._sequence)
        self._stems = {stem(w) for w in self._words}
        known = self._words | self._stems
        self._synonyms = {w for group in _SYNONYMS if group & known for w in group}
        self._initials = "".join(w[0] for w in self._sequence)

    def grounded(self, name: str) -> bool:
        """Whether ``name`` is supported by the text (see the module docstring for the rule)."""
        content = [w for w in words(name) if w not in _NOT_CONTENT]
        if not content:
            return False
        found = sum(1 for w in content if self._has(w))
        if found == len(content) or (len(content) >= 3 and 3 * found >= 2 * len(content)):
            return True
        return _is_acronym(name) and name.strip().casefold() in self._initials_runs(len(name.strip()))

    def _has(self, word: str) -> bool:
        root = stem(word)
        if word in self._words or root in self._stems or word in self._synonyms or root in self._synonyms:
            return True
        return any(_shortening(w, word) for w in self._words)

    def _initials_runs(self, size: int) -> set[str]:
        return {self._initials[i : i + size] for i in range(len(self._initials) - size + 1)}


def _shortening(short: str, word: str) -> bool:
    """``short`` is a clipped form of ``word`` ("edu"/"education"), or ``word`` of ``short``."""
    if len(short) > len(word):
        short, word = word, short
    return len(short) >= 3 and word.startswith(short) and len(short) * 3 >= len(word)


def _is_acronym(name: str) -> bool:
    stripped = name.strip()
    return 2 <= len(stripped) <= 6 and stripped.isalpha() and stripped.isupper()


def not_an_entity(entity_type: str | None) -> bool:
    """Whether the model's own type for a line says it is no entity (a word class, a feeling)."""
    return bool(entity_type) and " ".join(words(entity_type or "")) in _NOT_ENTITY_TYPES


def episode_grounding(run: EpisodeRun, context: str) -> Grounding:
    """The grounding of one episode: its content, its name (the speaker of a message) and the
    previous-episodes window given to extraction."""
    episode = run.episode
    return Grounding([episode.content, episode.name or "", context])


def report_ungrounded(run: EpisodeRun, what: str, name: str, why: str = "") -> None:
    """Count and warn about one dropped hallucination (``what``: "entity" or a fact's text)."""
    run.report.dropped_lines += 1
    reason = why or f"{name!r} appears nowhere in the episode or its context (hallucinated)"
    run.report.warn(f"{what} dropped: {reason}")


def grounded_facts(
    run: EpisodeRun, grounding: Grounding, known: Callable[[str], bool], lines: Sequence[ExtractedFact]
) -> list[ExtractedFact]:
    """The fact lines whose endpoints are each this episode's entity (``known``; checked when it was
    extracted) or grounded; the others are dropped and reported."""
    kept: list[ExtractedFact] = []
    for line in lines:
        ends = (line.source, line.target)
        bad = next((n for n in ends if not known(n) and not grounding.grounded(n)), None)
        if bad is None:
            kept.append(line)
        else:
            report_ungrounded(run, f"fact {line.fact!r}", bad)
    return kept
