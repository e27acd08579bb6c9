"""Names that are things: an extracted name is kept only when it is a noun phrase of its message.

A small model names what a message *says* as well as what it talks about: "where did you go" (a
question), "views of the trails are amazing" (a clause), "awesome" (an adjective), "last year" (a time),
"mental health support for those withsimilarissues" (its own wording). The grounding check
(:mod:`.grounding`) lets them through, since their words are the message's. This check
(``NameOptions.things``, off by default, on in ``small_model_options``) keeps a name only when

- it is the speaker, or
- its words, as a run of the message's own words (each word as itself, up to a plural or verb ending,
  or a real shortening: "edu" for "education", never "car" for "care"), are a noun phrase there: the last
  word a noun, a proper noun, a number or a gerund ("swimming"), no pronoun, auxiliary, conjunction,
  question word, verb or sentence break inside, no preposition or article at either end, and no time
  expression ("last year", "next Friday": :mod:`.dating` reads them, and the tagger's DATE/TIME);
- and not a predicate wherever it occurs: the complement of a copula ("a great counselor" in "you'd be
  a great counselor", "my passion" in "it's been my passion") says what something is, not a thing of
  its own (a tagger that parses: :class:`.tagging.SpacyTagger`; proper nouns stay);
- a possessive whose owner is the speaker or named in the message is judged by what is owned:
  "Melanie's kids" from Melanie's "the kids", "Caroline's education" from Caroline's "my edu".

The words' parts of speech come from a :class:`Tagger`: :class:`WordListTagger` (word lists only, no
dependency: it cannot tell an adjective or a verb from a noun) or :class:`.tagging.SpacyTagger` (spaCy's
small English pipeline, ``epigraph[local-model]``), which can. Measured on both live gold sets:
docs/decisions/2026-11-28-names-that-are-things.md. A name refused is counted in the episode's report
(``names_refused``) and said in a warning.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Protocol

from ...language import ARTICLES, DETERMINERS, PREPOSITIONS, PRONOUNS, roots, singular
from ..dating import stated_dates


@dataclass(frozen=True)
class Word:
    """One token of a text: its case-folded text and its universal part of speech (``NOUN``, ``VERB``,
    ``PRON``, ``PUNCT`` ...); ``gerund`` when it is a verb's -ing form, ``time`` when it is part of a
    time expression, ``capital`` when it was written with a capital."""

    text: str
    pos: str
    gerund: bool = False
    time: bool = False
    capital: bool = False
    predicate: bool = False
    """The complement of a copula, or joined to one ("a great counselor" in "you'd be a great
    counselor"): what something is said to be, not a thing of its own (a parsing tagger's only)."""


class Tagger(Protocol):
    """Tokens of a text with their parts of speech (the same tokenization for a name and a message)."""

    def tag(self, text: str) -> list[Word]: ...


class ThingCheck(Protocol):
    """Why a name is not a thing its message talks about, or None to keep it."""

    def refusal(self, name: str, message: str, speaker: str | None) -> str | None: ...


_TOKEN = re.compile(r"['’]s\b|[^\W_]+(?:['’](?!s\b)[^\W_]+)?|[^\w\s]")
_QUESTION = frozenset("what where when why how who whom whose which".split())
_AUX = frozenset(
    "is are was were am be been being 'm 're 've 'd 'll do does did have has had will would shall should "
    "can could may might must gonna wanna".split()
)
_CONJUNCTIONS = frozenset("and or but nor so because if while although though than".split())
_BREAKS = frozenset('.,;:!?"()[]')
_REFERENCE = datetime(2000, 6, 15, tzinfo=UTC)


@dataclass(frozen=True)
class WordListTagger:
    """Parts of speech from word lists alone: pronouns, question words, auxiliaries, conjunctions,
    prepositions and articles are known, any other word is taken for a noun (so an adjective or a verb
    passes: measured weaker than a tagger, kept as the no-dependency fallback)."""

    def tag(self, text: str) -> list[Word]:
        return [
            replace(_listed(t.casefold().replace("’", "'")), capital=t[:1].isupper())
            for t in _TOKEN.findall(text)
        ]


def _listed(token: str) -> Word:
    if token == "'s":
        return Word(token, "PART")
    if not token[0].isalnum():
        return Word(token, "PUNCT")
    if token in PRONOUNS or token in _QUESTION or "'" in token:
        return Word(token, "PRON")
    if token in _AUX:
        return Word(token, "AUX")
    if token in _CONJUNCTIONS:
        return Word(token, "CCONJ")
    if token in PREPOSITIONS:
        return Word(token, "ADP")
    if token in DETERMINERS or token in ("this", "that", "these", "those", "some", "any"):
        return Word(token, "DET")
    return Word(token, "NUM" if token.isdigit() else "NOUN", gerund=token.endswith("ing"))


_HEADS = frozenset({"NOUN", "PROPN", "NUM"})
_NEVER_INSIDE = frozenset({"PRON", "AUX", "CCONJ", "SCONJ", "INTJ", "PUNCT"})
_NOT_AT_ENDS = frozenset({"ADP", "DET", "PART", "ADV"})


@dataclass(frozen=True)
class NounPhrases:
    """The check of the module docstring over ``tagger``'s parts of speech."""

    tagger: Tagger

    def refusal(self, name: str, message: str, speaker: str | None) -> str | None:
        words = [w for w in self.tagger.tag(name)]
        while words and words[0].text in ARTICLES:
            words = words[1:]
        if not words:
            return f"{name!r} has no word"
        if speaker and [w.text for w in words] == [w.text for w in self.tagger.tag(speaker)]:
            return None
        text = self.tagger.tag(message)
        owned = _owned_part(words, text, speaker)
        spans = _spans(owned, text)
        if not spans:
            return f"{name!r} is not words of the message"
        reasons = [_why_not_a_phrase(span, speaker) for span in spans]
        if None not in reasons:
            return f"{name!r} is {reasons[0]}"
        phrases = [span for span, reason in zip(spans, reasons, strict=True) if reason is None]
        if all(_predicate(span) for span in phrases):
            return f"{name!r} is a predicate (what something is said to be, not a thing)"
        return None


def _predicate(span: Sequence[Word]) -> bool:
    """A common-noun phrase standing as a copula's complement (any word of it: "feeling of
    accomplishment" in "it was an awesome feeling of accomplishment")."""
    return span[-1].pos != "PROPN" and any(w.predicate for w in span)


def _owned_part(words: list[Word], text: Sequence[Word], speaker: str | None) -> list[Word]:
    """What a possessive owns when its owner is the speaker or a word of the message; else all of it."""
    if len(words) >= 3 and words[1].text == "'s":
        owner = words[0].text
        if (speaker and owner == speaker.casefold()) or any(w.text == owner for w in text):
            return words[2:]
    return words


def _spans(words: Sequence[Word], text: Sequence[Word]) -> list[list[Word]]:
    """Every run of ``text`` whose words are ``words`` one by one (:func:`_same`)."""
    size = len(words)
    return [
        list(text[i : i + size])
        for i in range(len(text) - size + 1)
        if all(_same(a.text, b) for a, b in zip(words, text[i : i + size], strict=True))
    ]


def _same(name_word: str, word: Word) -> bool:
    """One word up to a plural or verb ending, or a real shortening of a common noun ("edu" for
    "education"; never "car" for "care" or "Caroline")."""
    text_word = word.text
    if name_word == text_word or singular(name_word) == singular(text_word):
        return True
    if name_word.isalpha() and text_word.isalpha() and roots(name_word) & roots(text_word):
        return True
    short, long = sorted((name_word, text_word), key=len)
    clipped = long.startswith(short) and len(long) >= len(short) + 3 and 3 * len(short) >= len(long)
    return len(short) >= 3 and clipped and not word.capital


def _why_not_a_phrase(span: Sequence[Word], speaker: str | None) -> str | None:
    """None when ``span`` is a noun phrase; else what it is instead."""
    if any(w.time for w in span) or _is_time(" ".join(w.text for w in span)):
        return "a time expression"
    inside = [w for w in span if w.text != "-"]
    if any(w.text in _QUESTION for w in inside):
        return "a question"
    if any(w.pos in _NEVER_INSIDE and w.text != "-" for w in inside):
        return "a clause or a fragment of the reply (a pronoun, verb or break inside)"
    if any(w.pos == "VERB" and not w.gerund for w in inside[:-1]) or any(
        w.pos == "PART" and w.text != "'s" for w in inside
    ):
        return "a clause (a verb inside)"
    if inside[0].pos in _NOT_AT_ENDS or inside[-1].pos in _NOT_AT_ENDS:
        return "a fragment (it starts or ends with a function word)"
    last = inside[-1]
    if last.pos in _HEADS or (last.pos == "VERB" and last.gerund):
        return None
    return {"ADJ": "an adjective", "VERB": "a verb"}.get(last.pos, f"no noun phrase ({last.pos.lower()})")


def _is_time(text: str) -> bool:
    """Whether ``text`` states a date of its own (:func:`.dating.stated_dates` reads it as one)."""
    return len(stated_dates(text, _REFERENCE)) > 1


def message_words() -> ThingCheck:
    """The check on word lists only (no dependency)."""
    return NounPhrases(WordListTagger())
