"""The compact line formats of extraction: a fact is a short sentence with its two ends in brackets.

::

    [Caroline] went to [LGBTQ support group] yesterday
    [Ann (Person, age=34)] works at [Acme (Company)] as an engineer {role=engineer}

- the first bracket is the fact's source, the second its target; the words between them are its
  relation ("went to" -> ``WENT_TO`` once the pipeline normalizes it; a leading "is"/"was" and articles
  are left out), the line without brackets is the fact's sentence, and the time words around the names
  date it (``pipeline.dating``);
- with custom entity types a name may carry its type, and that type's attributes, in parentheses; with
  custom relation attributes a line may end with them in braces. Neither appears without custom types.

Every token of such a line is kept: no JSON keys, no ISO date the model would copy from the prompt, no
relation name beside a sentence that already says it. A JSON fact line of the same content took 60-100
tokens; this one takes 12-20. A name list (``read_names``) is one line of names, for the separate
entity extraction. A grammar (``line_grammar``) holds a model that accepts one to the format, to the
names it was given (the separate fact extraction) and to the declared types.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..language import ARTICLES, DETERMINERS, FORMS_OF_BE, PREPOSITIONS
from .grammar import NONE, literal
from .parsing import ReplyError

_LINE = re.compile(r"^([^\[\]]*?)\[([^\[\]]+)\]([^\[\]]*?)\[([^\[\]]+)\]([^\[\]]*)$")
_ALONE = re.compile(r"^\[([^\[\]]+)\]\s*$")
_TYPED = re.compile(r"^(.*?)\s*\(([^()]*)\)\s*$")
_ATTRS = re.compile(r"\{([^{}]*)\}\s*$")
_NAME_CHARS = r"\[\]\n(){}|,;:.!?# "
_WIDE_SCRIPTS = (("\u2e80", "\u9fff"), ("\uac00", "\ud7af"), ("\uf900", "\ufaff"), ("\uff00", "\uffef"))
"""CJK (radicals, kana, bopomofo, unified ideographs), Hangul syllables, CJK compatibility ideographs and
full-width forms."""
_MAX_NAME_WORDS = 6
_MAX_RELATION_WORDS = 5
_MAX_TAIL = 40


@dataclass(frozen=True, slots=True)
class NamePart:
    """A bracketed name: the name, its declared type if written, its attributes."""

    name: str
    entity_type: str | None = None
    attributes: dict[str, str] | None = None


@dataclass(frozen=True, slots=True)
class FactParts:
    """One decoded fact line."""

    source: NamePart
    target: NamePart
    relation: str
    """The words between the names, without a leading "is"/"was" or articles ("went to")."""
    sentence: str
    """The line without brackets, types and attributes: "Caroline went to LGBTQ support group yesterday"."""
    attributes: dict[str, str]


def _pairs(text: str, where: str) -> dict[str, str]:
    pairs: dict[str, str] = {}
    for part in text.split(","):
        if not part.strip():
            continue
        key, sep, value = part.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise ReplyError(f"{where}: {part.strip()!r} is not key=value")
        pairs[key.strip()] = value.strip()
    return pairs


def read_name(text: str, types: Sequence[str]) -> NamePart:
    """``Ann`` or, when ``types`` are declared, ``Ann (Person, age=34)``."""
    text = " ".join(text.split())
    typed = _TYPED.match(text) if types else None
    if typed is None:
        return NamePart(text)
    inside = typed.group(2)
    kind, _, rest = inside.partition(",")
    wanted = kind.strip().casefold()
    declared = next((t for t in types if t.casefold() == wanted), None)
    if declared is None:
        return NamePart(text)  # "(...)" that names no type is part of the name
    return NamePart(typed.group(1).strip(), declared, _pairs(rest, typed.group(1).strip()) or None)


def relation_words(between: str) -> str:
    """The relation of the words between the names: "is swamped with" -> "swamped with", "went to a"
    -> "went to" (a leading form of "be" and the articles carry no relation)."""
    words = between.split()
    while len(words) > 1 and words[0].casefold() in FORMS_OF_BE:
        words = words[1:]
    kept = [w for w in words if w.casefold() not in ARTICLES]
    while len(kept) > 1 and kept[-1].casefold() in DETERMINERS:
        kept = kept[:-1]
    return " ".join(kept or words)


def read_fact(line: str, types: Sequence[str] = ()) -> FactParts:
    """Decode ``[source] relation [target] more words {attributes}``; ReplyError when it is not one."""
    attributes: dict[str, str] = {}
    braces = _ATTRS.search(line)
    if braces is not None:
        attributes = _pairs(braces.group(1), "relation attributes")
        line = line[: braces.start()].rstrip()
    match = _LINE.match(line.strip())
    if match is None:
        raise ReplyError("not a fact line '[subject] relation [object] ...'")
    lead, first, between_raw, second, tail = match.groups()
    source, target = read_name(first, types), read_name(second, types)
    if not source.name or not target.name:
        raise ReplyError("a fact line names an empty entity")
    sentence = " ".join(f"{lead}{source.name}{between_raw}{target.name}{tail}".split())
    target, moved = _without_preposition(target)
    between = " ".join(p for p in (between_raw.strip(), moved) if p)
    relation = relation_words(between.strip(" ,;:-"))
    if not any(ch.isalpha() for ch in relation):
        raise ReplyError("a fact line has no relation words between its two names")
    return FactParts(source, target, relation, sentence, attributes)


def _without_preposition(part: NamePart) -> tuple[NamePart, str]:
    """``[with the kids]`` -> (``kids``, "with"): a preposition (and an article after it) written inside
    the object's brackets belongs to the relation; a name does not start with one."""
    words = part.name.split()
    if len(words) < 2 or words[0].casefold() not in PREPOSITIONS:
        return part, ""
    rest = words[1:]
    if len(rest) > 1 and rest[0].casefold() in ARTICLES:
        rest = rest[1:]
    return NamePart(" ".join(rest), part.entity_type, part.attributes), words[0]


def read_line(line: str, types: Sequence[str] = ()) -> FactParts | NamePart:
    """A fact line, or a bare ``[name]`` line: an entity the episode names without a fact about it."""
    alone = _ALONE.match(line.strip())
    if alone is not None:
        part = read_name(alone.group(1), types)
        if not part.name:
            raise ReplyError("an empty name")
        return part
    return read_fact(line, types)


def read_names(line: str, types: Sequence[str] = ()) -> list[NamePart]:
    """Decode a name list, one line of names separated by ``;``: ``pottery class; Ann's office``."""
    parts = [p.strip().lstrip("-*• ").strip() for p in re.split(r";(?![^()]*\))", line)]
    names = [read_name(p, types) for p in parts if p]
    if not names or any("[" in n.name or "]" in n.name or not n.name for n in names):
        raise ReplyError("not a list of names 'a; b; c'")
    return names


# ------------------------------------------------------------------------------------------ grammar


def unseen_scripts(text: str) -> str:
    """The wide scripts' character ranges (:data:`_WIDE_SCRIPTS`) when ``text`` has none of their
    characters, as the inside of a GBNF character class; "" when it has some. The grammars bar them from
    a reply's free text: on English turns a small model drifts into Chinese mid-line, words no reader of
    the turn wrote or can match (docs/decisions/2026-11-26-ingestion-at-conversational-speed.md). A text
    written in one of them keeps them all."""
    if any(low <= ch <= high for ch in text for low, high in _WIDE_SCRIPTS):
        return ""
    return "".join(f"{low}-{high}" for low, high in _WIDE_SCRIPTS)


def _alternatives(values: Sequence[str]) -> str:
    return "(" + " | ".join(literal(v) for v in values) + ")"


def name_rules(
    names: Sequence[str] = (), types: Sequence[str] = (), attributes: Sequence[str] = (), barred: str = ""
) -> str:
    """GBNF for a name (rule ``name``): one of ``names`` when given, else free text (without the
    characters of ``barred``, the inside of a character class: :func:`unseen_scripts`); with ``types``,
    optionally followed by `` (Type)`` or `` (Type, key=value)`` for the declared ``attributes``."""
    word = f"[^{_NAME_CHARS}{barred}]{{1,20}}"
    free = f'{word} ( " " {word} ){{0,{_MAX_NAME_WORDS - 1}}}'
    rules = [f"text ::= {_alternatives(names) if names else free}"]
    if types:
        kv = ""
        if attributes:
            kv = ' ( ", " key "=" value )*'
            rules.append(f"key ::= {_alternatives(attributes)}")
            rules.append("value ::= [^,;()\\[\\]{}\\n]{1,40}")
        rules.append(f'name ::= text ( " (" {_alternatives(types)}{kv} ")" )?')
    else:
        rules.append("name ::= text")
    return "\n".join(rules)


def fact_line_rules(
    names: Sequence[str] = (),
    types: Sequence[str] = (),
    entity_attributes: Sequence[str] = (),
    relation_attributes: Sequence[str] = (),
    *,
    alone: bool = False,
    barred: str = "",
) -> str:
    """GBNF defining ``line`` as one fact line of this format (see :func:`name_rules` for names); with
    ``alone`` a bare ``[name]`` line is allowed too; its free text never holds a character of
    ``barred`` (:func:`unseen_scripts`)."""
    extra = ' ( " {" rkey "=" rvalue ( ", " rkey "=" rvalue )* "}" )?' if relation_attributes else ""
    fact = f'" " relation " [" name "]" tail{extra}'
    rules = [
        f'line ::= "[" name "]" ( {fact} )?' if alone else f'line ::= "[" name "]" {fact}',
        f'relation ::= word ( " " word ){{0,{_MAX_RELATION_WORDS - 1}}}',
        # one sentence: "was so powerful. None. (No.)" is not a relation
        f"word ::= [^\\[\\]\\n{{}}|.!?() {barred}]{{1,20}}",
        f"tail ::= ( [ ,] [^\\[\\]\\n{{}}|.!?#{barred}]{{1,{_MAX_TAIL}}} )?",
        name_rules(names, types, entity_attributes, barred),
    ]
    if relation_attributes:
        rules.append(f"rkey ::= {_alternatives(relation_attributes)}")
        rules.append("rvalue ::= [^,;\\[\\]{}\\n]{1,40}")
    return "\n".join(rules)


def name_list_grammar(
    max_names: int, types: Sequence[str] = (), attributes: Sequence[str] = (), barred: str = ""
) -> str:
    """GBNF of a name-list reply: ``none``, or ONE line of 1 to ``max_names`` names separated by ``; ``
    (one line, so a model cannot go on listing "none" or the same names line after line); names
    without the characters of ``barred`` (:func:`unseen_scripts`)."""
    return (
        f'root ::= "{NONE}\\n" | {name_list(max_names)} "\\n"\n'
        + name_rules((), types, attributes, barred)
        + "\n"
    )


def name_list(max_names: int) -> str:
    """GBNF of 1 to ``max_names`` names (rule ``name``) separated by ``; `` on one line."""
    return f'name ( "; " name ){{0,{max(0, max_names - 1)}}}'


def write_name(name: str, entity_type: str | None = None, attributes: dict[str, Any] | None = None) -> str:
    """A name as a line shows it: ``Ann`` or ``Ann (Person, age=34)``."""
    if not entity_type:
        return name
    inside = ", ".join([entity_type, *(f"{k}={v}" for k, v in (attributes or {}).items())])
    return f"{name} ({inside})"


def _day(iso: str) -> str:
    """An ISO time as a line writes it: the date alone when the time is midnight."""
    return iso[:10] if iso[10:].strip("TZ0:+") == "" else iso


def time_words(valid_at: str | None = None, invalid_at: str | None = None) -> str:
    """ISO dates as the time words a line ends with (" on 2024-03-01", " from A to B", " until B");
    the pipeline reads them back (``pipeline.dating``) and leaves them out of the stored sentence."""
    if valid_at and invalid_at:
        return f" from {_day(valid_at)} to {_day(invalid_at)}"
    if valid_at:
        return f" on {_day(valid_at)}"
    return f" until {_day(invalid_at)}" if invalid_at else ""


def _occurrences(lower: str, name: str) -> list[int]:
    """Where ``name`` stands as whole words ("Caro" is not in "Carol")."""
    return [m.start() for m in re.finditer(rf"(?<!\w){re.escape(name)}(?!\w)", lower)]


def _spans(sentence: str, source: str, target: str) -> list[tuple[int, str]]:
    """Where the sentence names its two ends, in sentence order and without overlap, the earliest such
    pair ("The [charity race for mental health] prompted reflection on [mental health]"); -1 when it
    does not name both."""
    lower = sentence.casefold()
    pairs = [
        sorted([(a, source), (b, target)])
        for a in _occurrences(lower, source.casefold())
        for b in _occurrences(lower, target.casefold())
        if a + len(source) <= b or b + len(target) <= a
    ]
    return min(pairs, default=[(-1, source), (-1, target)])


def write_fact(
    sentence: str,
    source: str,
    target: str,
    relation: str,
    when: str = "",
    attributes: dict[str, Any] | None = None,
    names: dict[str, str] | None = None,
) -> str:
    """The fact line of a sentence that names its two ends: the names bracketed where the sentence
    names them, in its order ("The painting is special to Melanie." with Melanie -> painting: "[The
    painting] is special to [Melanie]."); when it names them nowhere, the relation's words between
    them. ``when`` (time words) goes before the final stop; ``names`` maps a name to how the line
    writes it (with its type). For scripted models, test worlds and gold answers."""
    (first_at, first), (second_at, second) = _spans(sentence, source, target)
    said = sentence[first_at + len(first) : second_at] if first_at >= 0 else ""
    if any(ch.isalpha() for ch in relation_words(said.strip(" ,;:-'’s"))):
        names = {first: sentence[first_at : first_at + len(first)], **(names or {})}
        names.setdefault(second, sentence[second_at : second_at + len(second)])
        lead = sentence[:first_at]
        between = sentence[first_at + len(first) : second_at]
        tail = sentence[second_at + len(second) :].rstrip()
    else:
        first, second, lead = source, target, ""
        between, tail = f" {relation.replace('_', ' ').lower()} ", ""
    stop = tail[len(tail.rstrip(".!?")) :]
    tail = tail[: len(tail) - len(stop)]
    written = names or {}
    line = f"{lead}[{written.get(first, first)}]{between}[{written.get(second, second)}]{tail}{when}{stop}"
    if attributes:
        line += " {" + ", ".join(f"{k}={v}" for k, v in attributes.items()) + "}"
    return line
