"""Hallucination check: a name the episode and its context never mention is dropped and reported.

Small models invent what the text never says: "Sam lives in New York City." from a greeting, "Evan
works at Prius". Whatever the model, an extracted entity, or a fact endpoint that names no entity of
this episode, is kept only when its name is *grounded* in the episode text, the episode's name (the
speaker) or the previous-episodes window the model was shown. The rule, on case-folded, accent-free
words (possessive ``'s`` removed):

1. the content words of the name (stop words and pronouns left out) are found in the text: as the
   same word, the same word up to a plural or verb ending ("kids"/"kid", "painted"/"painting",
   "dancing"/"dance"), another word of its family ("performance"/"performed", "marriage"/"married",
   "retirement"/"retired": ``roots``), a shortening ("edu" for "education", "comp" for "competition",
   "parent" for "parenthood"), or a synonym of the policy (``NameOptions.grounding``: by default the
   family words "my ..." gets resolved through, "mom"/"mother", "kids"/"children", and the life events a
   chat names by their verb, "married" for a wedding, "born" for a birthday, "died" for a funeral). So
   "Melanie's wedding" after "How long have you been married?" is grounded (the owner and the event
   both are), "Sam's wedding" there is not (no Sam), nor "Melanie's funeral" (nothing died). A name of
   one or two content words needs all of them, a longer one two in three: "Melanie's kids" from
   "Melanie: my kids ..." is grounded (the owner is the speaker, the head noun is in the text), and so
   is "Gina's clothing store" from Gina's "the store"; "Caroline's sister" after "my mom" is not, nor
   "New York City" after "Anything new?" (a stricter all-words rule refused gold paraphrases such as
   "Caroline's education" from "my edu": docs/decisions/2026-11-25-grounding.md);
2. or the name is an acronym (2-6 capitals) of consecutive words of the text ("NYC" after "New York
   City").

An entity the model itself typed as something the policy says is no entity (by default a part of
speech or a feeling: "Good": Adjective, "See": Verb, both from a greeting) is dropped too, whatever its
name. The word lists are :mod:`.policy`'s (replace them, or switch them or the whole check off).

A name with no content word at all ("I", "You", "the": stop words and pronouns are not content) is not
an entity and is dropped too. Pure logic: the names room's gates (``gates``: an entity's name) and the
facts room's (``facts.drafts``: a fact's ends) call it.
"""

from __future__ import annotations

from collections.abc import Iterable

from ...graph.model import Episode
from ...language import LUCENE_STOP_WORDS, PRONOUNS, plain_words, roots, shortening
from .policy import NOT_ENTITY_TYPES, SYNONYMS, GroundingPolicy

_NOT_CONTENT = LUCENE_STOP_WORDS | PRONOUNS


class Grounding:
    """The words a name may be built from: those of the episode, its speaker and its context."""

    def __init__(self, texts: Iterable[str], synonyms: Iterable[frozenset[str]] = SYNONYMS) -> None:
        self._sequence = [w for text in texts for w in plain_words(text)]
        self._words = set(self._sequence)
        self._roots = {r for w in self._words for r in roots(w)}
        self._synonyms = {w for group in synonyms if group & self._roots for w in group}
        self._initials = "".join(w[0] for w in self._sequence)

    def grounded(self, name: str) -> bool:
        """Whether ``name`` is supported by the text (see the module docstring for the rule)."""
        content = [w for w in plain_words(name) if w not in _NOT_CONTENT]
        if not content:
            return False
        found = sum(1 for w in content if self._has(w))
        if found == len(content) or (len(content) >= 3 and 3 * found >= 2 * len(content)):
            return True
        return _is_acronym(name) and name.strip().casefold() in self._initials_runs(len(name.strip()))

    def _has(self, word: str) -> bool:
        forms = roots(word)
        if forms & self._roots or forms & self._synonyms:
            return True
        return any(shortening(w, word) for w in self._words)

    def _initials_runs(self, size: int) -> set[str]:
        return {self._initials[i : i + size] for i in range(len(self._initials) - size + 1)}


def _is_acronym(name: str) -> bool:
    stripped = name.strip()
    return 2 <= len(stripped) <= 6 and stripped.isalpha() and stripped.isupper()


def not_an_entity(entity_type: str | None, types: frozenset[str] = NOT_ENTITY_TYPES) -> bool:
    """Whether the model's own type for a line says it is no entity (one of ``types``: the policy's)."""
    return bool(entity_type) and " ".join(plain_words(entity_type or "")) in types


def episode_grounding(episode: Episode, context: str, policy: GroundingPolicy) -> Grounding:
    """The grounding of one episode: its content, its name (the speaker of a message) and the
    previous-episodes window given to extraction."""
    return Grounding([episode.content, episode.name or "", context], policy.synonyms)


def hallucinated(name: str) -> str:
    """Why an ungrounded name is dropped, as the episode's report says it."""
    return f"{name!r} appears nowhere in the episode or its context (hallucinated)"
