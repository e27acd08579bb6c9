"""Meaning the pipeline is told rather than computes: the word lists of the hallucination check, as a
policy a user replaces or switches off (``NameOptions.grounding``; the name vetoes are
``NameOptions.never_same``, :func:`epigraph.pipeline.names.matching.never_same` by default).

::

    NameOptions()                                          # the lists below (the default)
    NameOptions(grounding=GroundingPolicy(synonyms=(*SYNONYMS, frozenset({"doc", "doctor"}))))
    NameOptions(grounding=GroundingPolicy(synonyms=(), not_entity_types=frozenset()))  # words only
    NameOptions(grounding=None)                            # no hallucination check at all

given as ``IngestOptions(names=NameOptions(...))``.

English, and written for chat about people's lives: another language or domain wants its own. Names
grounded by their own words do not need them; they matter for what a real model paraphrases
("Caroline's mother" after "my mom"). The figures, and why no embedding check replaces the lists:
docs/decisions/2026-11-25-grounding.md.
"""

from __future__ import annotations

from dataclasses import dataclass

SYNONYMS: tuple[frozenset[str], ...] = (
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
    frozenset({"wedding", "wed", "marry", "married", "marriage", "bride", "groom", "newlywed"}),
    frozenset({"birthday", "birth", "born"}),
    frozenset({"funeral", "die", "died", "death", "dead"}),
)
"""Word sets any word of which grounds the others: the family words "my ..." gets resolved through
("mom"/"mother", "kids"/"children") and the life events a chat names by their verb ("married" for a
wedding, "born" for a birthday, "died" for a funeral). Lower-case; compared by word family
(:func:`epigraph.language.roots`)."""

NOT_ENTITY_TYPES = frozenset(
    "adjective verb adverb pronoun preposition conjunction interjection determiner article greeting "
    "feeling emotion action".split()
)
"""Types that mean the model itself says a line is no entity: a part of speech or a feeling ("Good":
Adjective, "See": Verb, both extracted from a greeting). Lower-case words of the type, in order."""


@dataclass(frozen=True)
class GroundingPolicy:
    """What the hallucination check (:mod:`epigraph.pipeline.names.grounding`) counts beyond a name's own
    words: ``synonyms`` (sets of interchangeable words) and ``not_entity_types`` (a type naming no
    entity). Empty ones switch that part off; ``NameOptions(grounding=None)`` the whole check."""

    synonyms: tuple[frozenset[str], ...] = SYNONYMS
    not_entity_types: frozenset[str] = NOT_ENTITY_TYPES

    def __post_init__(self) -> None:
        for group in self.synonyms:
            if any(not w or w != w.casefold() or " " in w for w in group):
                raise ValueError(f"synonyms must be lower-case single words, got {sorted(group)}")
