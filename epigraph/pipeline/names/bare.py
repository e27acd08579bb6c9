"""Bare names resolved without a model: "the kids", "group", "business" are things the conversation
has already named in full (pure functions; ``NameOptions.bare_names``).

A small model names a thing by its bare head noun where the message says "the kids" or "such a helpful
group", and the graph gets a second, vaguer entity beside "Melanie's kids" or "LGBTQ support group".
Without a resolve call (the local model's options) nothing merges them. Four rules, each what a
reader of the conversation would do:

- **no owner the message does not give**: the model writes "Gina's business" for Gina's "your own
  business"; a speaker's possessive the message does not say ("my business", "our team", "Gina's
  team") loses its owner (:func:`unowned`), and the rules below find whose it is;
- **a relative of the speaker**: "the kids", "the wife", "our dog" said by Melanie are Melanie's
  (:func:`kin_owned`; the words are :data:`KIN`, nouns of family and household: whose else would
  "the kids" be);
- **the speaker's own**: a bare name ("business") said by Jon when the graph holds "Jon's business" is
  that (:func:`speakers_own`, looked up by exact name);
- **the one thing of that kind**: a bare one-word common noun is the graph's entity of the same word
  in the other number ("dances" for "dance"), else the one longer name the graph holds whose head it
  is ("group" for "LGBTQ support group"); with several, the speaker's own when exactly one is
  (:func:`head_target`); else, the same among the other names of its reply ("stories" beside
  "transgender stories": :func:`headed_by`); else it stays new.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import pairwise
from typing import TypeVar

from ...graph.model import Entity
from ...language import plain_words, same_word, singular
from .matching import head, name_words

T = TypeVar("T")

KIN = frozenset(
    "kid child baby son daughter wife husband partner boyfriend girlfriend fiance fiancee mom mum mother "
    "dad father parent brother sister sibling grandma grandpa grandmother grandfather grandparent aunt "
    "uncle cousin nephew niece family dog cat pet puppy kitten".split()
)
"""Nouns of family and household: "the <noun>" (or "our <noun>") a speaker says is the speaker's."""

_KIN_DETERMINERS = ("the", "our")
_POSSESSIVE = re.compile(r"['’]s\b")


def _bare(name: str) -> bool:
    """No possessive, no capital: a common noun phrase ("support group", not "Jon's" or "Paris")."""
    return bool(name.strip()) and not _POSSESSIVE.search(name) and name == name.lower()


def kin_owned(name: str, text: str, speaker: str | None) -> str:
    """``name`` as the speaker's when it is one noun of :data:`KIN` that ``text`` says with "the" or
    "our" before it: ("kids", "swimming with the kids", "Melanie") -> "Melanie's kids"."""
    words = plain_words(name)
    if speaker is None or not _bare(name) or len(words) != 1 or singular(words[0]) not in KIN:
        return name
    said = plain_words(text)
    for before, word in pairwise(said):
        if before in _KIN_DETERMINERS and word == words[0]:
            return f"{speaker}'s {name.strip()}"
    return name


def unowned(name: str, text: str, speaker: str | None) -> str:
    """``name`` without the speaker as its owner when ``text`` does not say so: "Gina's business" in
    Gina's "starting your own business" is "business" (whose, the graph's names decide), while "Gina's
    team" after "my team", "our team" or "Gina's team" stays, and so do "the kids" (:data:`KIN`)."""
    if speaker is None:
        return name
    found = re.match(rf"\s*{re.escape(speaker)}['’]s\s+(.+)$", name, flags=re.IGNORECASE)
    if found is None:
        return name
    owned = found.group(1).strip()
    said, named = plain_words(text), plain_words(owned)
    if not named or re.search(rf"\b{re.escape(speaker)}['’]s\b", text, flags=re.IGNORECASE):
        return name
    if kin_owned(owned, text, speaker) != owned:
        return name
    for at, word in enumerate(said):
        start = at + 2 if said[at + 1 : at + 2] == ["own"] else at + 1
        run = said[start : start + len(named)]
        if word in ("my", "our") and len(run) == len(named) and all(map(same_word, run, named)):
            return name
    return owned


def speakers_own(name: str, speaker: str | None) -> str | None:
    """The name a bare ``name`` has as the speaker's ("business" -> "Jon's business"), to look up; None
    when ``name`` is not bare or there is no speaker."""
    if speaker is None or not _bare(name) or not plain_words(name):
        return None
    return f"{speaker}'s {name.strip()}"


def head_target(name: str, speaker: str | None, entities: Sequence[Entity]) -> Entity | None:
    """The one entity of ``entities`` a bare one-word ``name`` stands for: one named by the same word
    in the other number, else the only one with a longer name (or alias) whose head is that word
    (``name_matching.head``); among several, the speaker's own when exactly one is; else None."""
    return headed_by(name, speaker, [(e, [e.name, *e.aliases]) for e in entities])


def headed_by(name: str, speaker: str | None, named: Sequence[tuple[T, Sequence[str]]]) -> T | None:
    """:func:`head_target` over any items, each with its names (the graph's entities, or the other
    names of the same reply)."""
    words = plain_words(name)
    if not _bare(name) or len(words) != 1:
        return None
    word = singular(words[0])
    same = [item for item, names in named if any(_one_word(n, word) for n in names)]
    if same:
        return same[0]
    headed = [(item, names) for item, names in named if any(_headed(n, word) for n in names)]
    if len(headed) == 1:
        return headed[0][0]
    owner = speaker.casefold() if speaker else None
    own = [item for item, names in headed if owner is not None and owner in name_words(names[0])[0]]
    return own[0] if len(own) == 1 else None


def _one_word(candidate: str, word: str) -> bool:
    """Whether ``candidate`` is ``word`` alone, singular or plural ("dances" for "dance")."""
    words = plain_words(candidate)
    return len(words) == 1 and singular(words[0]) == word


def _headed(candidate: str, word: str) -> bool:
    """Whether ``candidate`` has more than one word and its head (``name_matching.head``) is ``word``."""
    return len(plain_words(candidate)) > 1 and head(candidate) == word
