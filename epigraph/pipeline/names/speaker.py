"""What the speaker of a message calls "my ...".

A message episode reads "Speaker: text" (``graph.model.speaker_of``). Its speaker is an entity of it,
known without asking a model, and a thing the speaker calls "my X" is the speaker's X: a small model
writes "[Jon] is starting [business]" for "starting my own business", so the name is made "Jon's
business" here (the gold convention, and what keeps Jon's business apart from Gina's).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ...language import LUCENE_STOP_WORDS, plain_words, same_word

FIRST_PERSON = frozenset({"i", "me", "my", "myself", "mine"})
"""A fact end the speaker writes of themself: the speaker."""

_POSSESSED = re.compile(r"['’]s\b")


def owned(name: str, text: str, speaker: str | None, others: Sequence[str] = ()) -> str:
    """``name`` as the speaker's when ``text`` (the speaker's message) says "my <name>" or "my own
    <name>", each word of the name there as itself or up to endings or a shortening
    (``language.same_word``): "business" -> "Jon's business", "education" after "my edu" ->
    "Caroline's education". Names that already have an owner, or are the speaker, stay; "I", "me",
    "my" (a fact end the model wrote in the speaker's words) are the speaker.

    When a content word follows the phrase it is a verb ("my team won": Gina's team) or the rest of a
    longer name ("my dance crew" when the model named "dance"), which words alone cannot tell apart;
    ``others`` (the other names of the same reply) can: the name is owned unless another of them holds
    it as a part ("dance" beside "dance crew" is the crew's kind, not Jon's). :func:`undecided` says
    when the answer depends on them."""
    if speaker and name.strip().casefold() in FIRST_PERSON:
        return speaker
    followed = _followed(name, text, speaker)
    mine = f"{speaker}'s {name}"
    longer = [other for other in others if plain_words(other) != plain_words(mine)]  # not itself, owned
    if not followed or (all(followed) and _part_of_another(plain_words(name), longer)):
        return name
    return mine


def undecided(name: str, text: str, speaker: str | None) -> bool:
    """Whether :func:`owned` of ``name`` depends on the reply's other names (every "my <name>" in
    ``text`` is followed by a content word)."""
    followed = _followed(name, text, speaker)
    return bool(followed) and all(followed)


def _followed(name: str, text: str, speaker: str | None) -> list[bool]:
    """For each "my <name>" of ``text``: whether a content word follows it. Empty when ``name``
    cannot be the speaker's (no speaker, already owned, the speaker)."""
    if speaker is None or not name or _POSSESSED.search(name) or name.casefold() == speaker.casefold():
        return []
    said, named = plain_words(text), plain_words(name)
    out: list[bool] = []
    for at, word in enumerate(said):
        start = at + 2 if said[at + 1 : at + 2] == ["own"] else at + 1
        end = start + len(named)
        if word == "my" and end <= len(said) and all(map(same_word, said[start:end], named)):
            out.append(end < len(said) and said[end] not in LUCENE_STOP_WORDS)
    return out


def _part_of_another(named: list[str], others: Sequence[str]) -> bool:
    """Whether a longer name among ``others`` holds the words ``named`` in a row."""
    size = len(named)
    for other in others:
        words = plain_words(other)
        runs = (words[i : i + size] for i in range(len(words) - size + 1))
        if len(words) > size and any(all(map(same_word, run, named)) for run in runs):
            return True
    return False
