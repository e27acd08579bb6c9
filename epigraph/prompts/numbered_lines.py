"""The numbered fact line: the model links, the message speaks (``FactOptions.line_format`` "numbered").

The separate mode's fact call may show the episode's names numbered (``1 Ann, 2 pottery class, 3
community center``) and ask for each fact as the numbers of its two ends, a bar, and the fact as a
free sentence (as Graphiti's schema does), so that no bracketed name bends the sentence::

    1 2 | Ann started a pottery class last Monday
    2 3 | The pottery class meets at the community center

- the first number is the fact's source, the second its target, by their place in the list (from 1);
  the free text is the fact's sentence, whose time words date it (``pipeline.dating``), and its
  relation comes from the sentence's words (:func:`relation_of`); with custom relation attributes a
  line may end with them in braces, as a bracket line does (``prompts.fact_lines``);
- a number that is not one of the list's is a name that is not there: the line is dropped
  (:class:`~.parsing.ReplyError`, said as a hallucinated name), never a crash;
- a grammar (:func:`numbered_line_rules`) holds a model that accepts one to ``<n> <m> | <sentence>``,
  n and m two different numbers of the list, the sentence one clause of words with no stop inside.

The decoded line is the same :class:`~.fact_lines.FactParts` a bracket line gives, so the same fact
is built from it (``extraction.fact_of``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..language import ARTICLES, DETERMINERS, PREPOSITIONS, PRONOUNS
from .fact_lines import (
    _ATTRS,
    _MAX_RELATION_WORDS,
    FactParts,
    NamePart,
    _alternatives,
    _pairs,
    _spans,
    relation_words,
)
from .parsing import ReplyError

_LINE = re.compile(r"^\s*(\d{1,3})[\s,]+(\d{1,3})\s*\|\s*(.*?)\s*$")
_WORDS = re.compile(r"[^\s,;:.!?()]+|[,;:.!?()]")
_POSSESSIVE = re.compile(r"^['’]s(?!\w)")
_MAX_SENTENCE_WORDS = 30
_VERB_WORDS = 3
_STOPS_BEFORE = ARTICLES | DETERMINERS | PRONOUNS


def numbered(names: Sequence[str]) -> str:
    """The names as the prompt shows them: ``1 Ann, 2 pottery class``."""
    return ", ".join(f"{i} {name}" for i, name in enumerate(names, start=1))


def relation_of(sentence: str, source: str, target: str) -> str:
    """A free sentence's relation between ``source`` and ``target``, the first of these that has a word:

    1. the words between the two names when the sentence names the source first (at most
       ``_MAX_RELATION_WORDS``: "Ann started a pottery class" -> "started");
    2. the verb phrase after the source's name, or after the sentence's first word when it does not
       name the source ("She moved to Berlin" -> "moved to"): up to ``_VERB_WORDS`` words, ending
       before an article, a possessive or a pronoun, after a preposition, at a mark or at the target;
    3. the words between the two names when the sentence names the target first.

    "" when none has a word. The words are made a relation as a bracket line's are
    (:func:`~.fact_lines.relation_words`: no leading "is", no articles)."""
    (first_at, first), (second_at, _) = _spans(sentence, source, target)
    named = first_at >= 0
    between = sentence[first_at + len(first) : second_at] if named else ""
    forward = named and first == source
    if forward:
        words = between.strip(" ,;:-").split()
        if 0 < len(words) <= _MAX_RELATION_WORDS and _worded(relation_words(" ".join(words))):
            return relation_words(" ".join(words))
    verb = _verb_phrase(sentence, source, target)
    if _worded(verb):
        return verb
    if named and not forward and _worded(relation_words(between.strip(" ,;:-"))):
        return relation_words(" ".join(between.strip(" ,;:-").split()[:_MAX_RELATION_WORDS]))
    return ""


def _worded(text: str) -> bool:
    return any(ch.isalpha() for ch in text)


def _verb_phrase(sentence: str, source: str, target: str) -> str:
    """The words after the source's name (or the sentence's first word) as rule 2 of :func:`relation_of`
    takes them."""
    at = _named(sentence, source)
    if at is not None:
        rest = sentence[at.end() :]
    else:
        rest = sentence.split(maxsplit=1)[1] if len(sentence.split()) > 1 else ""
    stop = _named(rest, target)
    if stop is not None:
        rest = rest[: stop.start()]
    kept: list[str] = []
    for word in _WORDS.findall(_POSSESSIVE.sub("", rest)):
        low = word.casefold()
        if not any(ch.isalnum() for ch in word) or low in _STOPS_BEFORE or len(kept) == _VERB_WORDS:
            break
        kept.append(word)
        if low in PREPOSITIONS:
            break
    return relation_words(" ".join(kept)) if kept else ""


def _named(text: str, name: str) -> re.Match[str] | None:
    """Where ``text`` first names ``name`` as whole words, case aside."""
    return re.search(rf"(?<!\w){re.escape(name.casefold())}(?!\w)", text.casefold())


def read_numbered(line: str, names: Sequence[str]) -> FactParts:
    """Decode ``<n> <m> | sentence {attributes}`` against the ``names`` the prompt numbered; ReplyError
    when it is not one, a number names none of them, or the sentence says no relation."""
    match = _LINE.match(line)
    if match is None:
        raise ReplyError("not a numbered fact line '<n> <m> | sentence'")
    ends: list[str] = []
    for number in (int(match.group(1)), int(match.group(2))):
        if not 1 <= number <= len(names):
            raise ReplyError(
                f"{number} numbers none of the {len(names)} names: a name that is not there (hallucinated)"
            )
        ends.append(names[number - 1])
    text, attributes = match.group(3), {}
    braces = _ATTRS.search(text)
    if braces is not None:
        attributes = _pairs(braces.group(1), "relation attributes")
        text = text[: braces.start()]
    sentence = " ".join(text.split()).rstrip(" ,;")
    if not _worded(sentence):
        raise ReplyError("a numbered fact line without its sentence")
    relation = relation_of(sentence, ends[0], ends[1])
    if not relation:
        raise ReplyError("a numbered fact line whose sentence says no relation")
    return FactParts(NamePart(ends[0]), NamePart(ends[1]), relation, sentence, attributes)


def numbered_line_rules(count: int, relation_attributes: Sequence[str] = (), *, barred: str = "") -> str:
    """GBNF defining ``line`` as one numbered fact line over a list of ``count`` names: two different
    numbers of 1..count, `` | `` and a sentence of 1 to ``_MAX_SENTENCE_WORDS`` words (no newline, bar,
    bracket, brace or stop inside, none of ``barred``: ``fact_lines.unseen_scripts``), optionally ended
    by a stop; with ``relation_attributes``, optionally followed by ``{key=value, ...}``."""
    numbers = [str(n) for n in range(1, max(2, count) + 1)]
    extra = ' ( " {" rkey "=" rvalue ( ", " rkey "=" rvalue )* "}" )?' if relation_attributes else ""
    rules = [
        f'line ::= ends " | " sentence{extra}',
        "ends ::= " + " | ".join(f'"{n} " other{n}' for n in numbers),
        *(f"other{n} ::= {_alternatives([m for m in numbers if m != n])}" for n in numbers),
        f'sentence ::= sword ( " " sword ){{0,{_MAX_SENTENCE_WORDS - 1}}} "."?',
        f"sword ::= [^\\[\\]\\n{{}}|.!?# {barred}]{{1,24}}",
    ]
    if relation_attributes:
        rules.append(f"rkey ::= {_alternatives(relation_attributes)}")
        rules.append("rvalue ::= [^,;\\[\\]{}\\n]{1,40}")
    return "\n".join(rules)
