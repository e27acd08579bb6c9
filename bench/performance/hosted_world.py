"""What the simulated provider's model reads in a message it has no gold answer for (a volume turn): the
names the message says and one fact from the speaker to each of them, in the message's own words.

Deterministic and plain on purpose: the volume turns exist to load the pipeline and the provider's
limits with replies of a real model's size and shape, not to be right. Both peers get the same reading
of a message (``hosted_answers`` writes it in our prompts' line formats, ``hosted_graphiti_answers`` in
Graphiti's JSON schemas), so they are compared on the same work.

- **Names**: the speaker first; then each run of capitalized words (a possessive ``'s`` dropped), but a
  run of one word that starts its sentence unless the text also capitalizes it elsewhere (``Wow``,
  ``Anything``); the one or two words after an article or possessive (``the support group``, ``a
  LGBTQ support group`` taking the place of ``LGBTQ``), "my <noun>" as the speaker's (``Caroline's
  dog``); at most ``MAX_NAMES``, in order of appearance.
- **Facts**: for each name but the speaker, ``<speaker> <up to four words before the name> <name>``
  (``Caroline went to a LGBTQ``; greetings and pronouns left out), or ``<speaker> mentioned <name>``
  when nothing is left; the relation is the first three of those words in SCREAMING_SNAKE_CASE.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from epigraph.graph.model import normalize_name
from epigraph.language import DETERMINERS, FORMS_OF_BE, PREPOSITIONS, PRONOUNS

MAX_NAMES = 6
"""The speaker and at most five more: LoCoMo turns name 2-4 things a message on average."""
PHRASE_WORDS = 4

_SENTENCE = re.compile(r"[^.!?]+[.!?]*")
_WORD = re.compile(r"[A-Za-z][A-Za-z'’\-]*")
_MY = re.compile(r"\b[Mm]y ([a-z][a-z\-]{2,})\b")
_PHRASE = re.compile(
    r"\b(?:[Tt]he|[Aa]n?|[Tt]his|[Tt]hat|[Yy]our|[Oo]ur|[Hh]is|[Hh]er|[Tt]heir|[Ss]ome) "
    r"((?:[A-Z][A-Za-z]+ )?[a-z][a-z\-]{2,}(?: [a-z][a-z\-]{2,})?)\b"
)
OPENERS = frozenset(
    """i i'm i've i'll i'd im a an the it it's its that that's this these those there there's then so
    and but or oh ah wow hey hi hello yes yeah yep no nope ok okay thanks thank sure well what what's
    how how's why when where who which you you're your we we're our they they're he she his her my me
    just really totally absolutely definitely great good nice awesome cool amazing love lol haha omg
    congrats congratulations sorry bye see also as if in on at for with by from to of after before
    did do does was were is are can could would should will have has had been being let let's
    hopefully maybe glad happy sounds""".split()
)
"""Capitalized words that start sentences without being names."""
_SKIP_NOUNS = PRONOUNS | DETERMINERS | PREPOSITIONS | frozenset("own way time day life".split())
_NOT_NOUNS = (
    _SKIP_NOUNS
    | FORMS_OF_BE
    | OPENERS
    | frozenset(
        """lot bit few little very really such much more most great good new big other same thing things
        one two first last next best whole kind sort part rest end idea and but because when while though
        has have had can will would could should made make got get been going gonna""".split()
    )
)


@dataclass(frozen=True)
class ReadFact:
    source: str
    target: str
    relation: str
    sentence: str


@dataclass(frozen=True)
class Reading:
    names: list[str]
    facts: list[ReadFact]


def read(speaker: str, text: str) -> Reading:
    """The names and facts the simulated model reads in ``speaker``'s message ``text``."""
    found: list[tuple[int, str]] = [(-1, speaker)]
    runs = [run for sentence in _SENTENCE.finditer(text) for run in _capitalized_runs(sentence)]
    inside = {run.words[0] for run in runs if not run.first}
    for run in runs:
        if run.first and len(run.words) == 1 and run.words[0] not in inside:
            continue
        if run.first and run.words[0].lower() in OPENERS:
            run = _Run(run.start, run.words[1:], False)
        if run.words:
            found.append((run.start, _name(run.words)))
    for match in _MY.finditer(text):
        if match.group(1) not in _SKIP_NOUNS:
            found.append((match.start(), f"{speaker}'s {match.group(1)}"))
    for match in _PHRASE.finditer(text):
        if (phrase := _noun_phrase(match.group(1))) and not text[: match.start()].endswith(("my ", "My ")):
            found = [(at, n) for at, n in found if n not in phrase.split()] + [(match.start(1), phrase)]
    names = _unique([name for _, name in sorted(found)])[:MAX_NAMES]
    facts = [_fact(speaker, name, text) for name in names[1:]]
    return Reading(names, facts)


@dataclass(frozen=True)
class _Run:
    start: int
    words: list[str]
    first: bool
    """The run starts its sentence."""


def _capitalized_runs(sentence: re.Match[str]) -> list[_Run]:
    runs: list[_Run] = []
    current: list[str] = []
    start, first = 0, False
    for index, word in enumerate(_WORD.finditer(sentence.group())):
        token = word.group()
        if token[0].isupper() and token.lower() not in _FIRST_PERSON and not _contracted(token):
            if not current:
                start, first = sentence.start() + word.start(), index == 0
            current.append(token)
            continue
        if current:
            runs.append(_Run(start, current, first))
            current = []
    if current:
        runs.append(_Run(start, current, first))
    return runs


def _contracted(token: str) -> bool:
    """``You've``, ``Didn't``: a contraction, not a name (a possessive ``'s`` is a name's)."""
    return bool(re.search(r"['’](?!s$)", token))


_FIRST_PERSON = frozenset(("i", "i'm", "i've", "i'll", "i'd"))


def _noun_phrase(words: str) -> str:
    """The words after an article as a name, cut at the first word that is no noun's (''); ''."""
    kept: list[str] = []
    for word in words.split():
        if word.lower() in _NOT_NOUNS:
            break
        kept.append(word)
    return " ".join(kept) if kept and not (len(kept) == 1 and kept[0][0].isupper()) else ""


def _name(run: list[str]) -> str:
    return re.sub(r"['’]s$", "", " ".join(run)).strip(" -'’")


def _unique(names: list[str]) -> list[str]:
    seen: set[str] = set()
    out = []
    for name in names:
        key = normalize_name(name)
        if key and key not in seen:
            seen.add(key)
            out.append(name)
    return out


def _fact(speaker: str, name: str, text: str) -> ReadFact:
    said = name.split("'s ", 1)[1] if name.startswith(f"{speaker}'s ") else name
    at = text.find(said)
    before = text[:at] if at >= 0 else ""
    sentence_start = max(before.rfind(mark) for mark in ".!?") + 1
    words = [w for w in _WORD.findall(before[sentence_start:]) if w.lower() not in PRONOUNS][-PHRASE_WORDS:]
    while words and (words[0].lower() in OPENERS or words[0][0].isupper()):
        words = words[1:]
    phrase = " ".join(words) or "mentioned"
    relation = "_".join(w.upper().replace("'", "").replace("’", "") for w in phrase.split()[:3])
    return ReadFact(speaker, name, relation, f"{speaker} {phrase} {name}")
