"""Whether a fact's sentence is one a person can read: a pure function of the sentence, its two ends'
names, its message and the conversation's speakers (no model, no vectors).

A sentence reads (``readable`` returns no failure) when it

- **names both ends** (``ends``): each end's name (or an alias) as a run of its words, the two at
  different places; a possessive end ("Melanie's kids") is named by what is owned when its owner is
  named elsewhere ("Melanie is swamped with her kids");
- **repeats no word sequence** (``repeats``): no two words said twice in that order (one of them a
  content word: "has been" twice is English), no word said twice in a row, no end's or speaker's name
  said twice but as an owner ("Caroline was so happy Caroline for the support" repeats; "Melanie is
  swamped with Melanie's kids" does not), no owner after a word that says whose ("his Jon's moves");
- **ends on a complete clause** (``cut``): not on a conjunction ("... where she feels supported
  and"), an article, a preposition, an auxiliary, a subject pronoun or a comma;
- **takes most of its content words from the message or the speakers' names** (``words``): more than
  half of its words that are no function word are, up to endings, words of the message or a speaker's
  name; a sentence the model made up around the names fails.

Words are compared by :func:`epigraph.language.same_word` (endings, families, shortenings). The gold
facts of the live bench's sets (a careful model's sentences, paraphrasing at times) read 0.89 (LoCoMo
26, 115 of 129) and 0.93 (LoCoMo 30, 116 of 125) by it. What it cannot see is grammar: a name pushed
into a sentence that had no room for it ("Melanie is off to go swimming kids") passes every check.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from epigraph.language import ARTICLES, DETERMINERS, FORMS_OF_BE, PREPOSITIONS, QUERY_STOP_WORDS, same_word

CHECKS = ("ends", "repeats", "cut", "words")
"""The four checks, in the order ``readable`` reports them."""

_NO_END = (
    ARTICLES
    | (DETERMINERS - {"her", "his", "its"})
    | FORMS_OF_BE
    | (PREPOSITIONS - {"by", "in", "on"})
    | frozenset(
        "and or but nor so because if while although though than that which who whom whose where when "
        "as like to has have had do does did will would can could should shall may might must not "
        "i you he she we they".split()
    )
)
"""Words no complete clause ends on (the pronouns that stand as a subject only; "her", "his" and
"its" can end one: "the support they have given her"; "by", "in" and "on" end a phrasal verb: "the
strength to push on")."""

_WHOSE = frozenset("my your his her their our its the a an".split())
"""Words that say whose a thing is, or that it is one: never before an owner's name ("his Jon's")."""

_CUT_MARKS = (",", ";", ":", "-", "(", "&", "/")


def _words(text: str) -> list[str]:
    """Case-folded words, a possessive ``'s`` split off as its own token ("melanie", "'s", "kids")."""
    out: list[str] = []
    for raw in text.casefold().replace("’", "'").split():
        token = raw.strip('.,;:!?"()[]{}')
        if token.endswith("'s") and len(token) > 2:
            out.extend((token[:-2], "'s"))
        elif token:
            out.append(token)
    return [w for w in out if w == "'s" or any(ch.isalnum() for ch in w)]


def _runs(sentence: list[str], name: list[str]) -> list[range]:
    """Where ``name``'s words (a leading article left out) stand in ``sentence`` as one run, up to
    endings."""
    core = list(name[1:] if name and name[0] in ARTICLES else name)
    if not core:
        return []
    size = len(core)
    return [
        range(i, i + size)
        for i in range(len(sentence) - size + 1)
        if all(same_word(sentence[i + k], core[k]) for k in range(size))
    ]


def _places(sentence: list[str], names: Sequence[str]) -> list[set[int]]:
    """Every way ``sentence`` names one of ``names``: the word positions each takes (a possessive
    named by what it owns, its owner said anywhere, takes the owned words' positions)."""
    places: list[set[int]] = []
    for name in names:
        words = _words(name)
        places.extend(set(r) for r in _runs(sentence, words))
        if "'s" in words:  # "Melanie's kids": its owner anywhere and what it owns as a run
            at = words.index("'s")
            owner, owned = words[:at], words[at + 1 :]
            if _runs(sentence, owner):
                places.extend(set(r) for r in _runs(sentence, owned))
    return places


def _names_both(sentence: list[str], source: Sequence[str], target: Sequence[str]) -> bool:
    sources, targets = _places(sentence, source), _places(sentence, target)
    return any(not s & t for s in sources for t in targets)


def _repeats(sentence: list[str], names: Sequence[str]) -> bool:
    """Two words said twice in that order (one of them a content word), a word twice in a row, an end's
    name (or a speaker's) said twice but as an owner ("Caroline was so happy Caroline for the support";
    "Melanie ... Melanie's kids" is fine), or an owner after a word that already says whose or which
    ("his Jon's moves")."""
    plain = [w for w in sentence if w != "'s"]
    pairs = list(itertools.pairwise(plain))
    if any(a == b for a, b in pairs):
        return True
    said = [p for p in pairs if not set(p) <= QUERY_STOP_WORDS]  # "has been" twice is no repeat
    if len(said) != len(set(said)):
        return True
    owners = {i for i in range(len(sentence) - 1) if sentence[i + 1] == "'s"}
    for name in names:
        said = [r for r in _runs(sentence, _words(name)) if r.stop - 1 not in owners]
        if len(said) > 1:
            return True
    return any(sentence[i - 1] in _WHOSE for i in owners if i > 0)


def _cut(sentence_text: str, sentence: list[str]) -> bool:
    text = sentence_text.rstrip().rstrip(".!?").rstrip()
    if not sentence or text.endswith(_CUT_MARKS):
        return True
    return sentence[-1] in _NO_END or sentence[-1] == "'s"


def _own_words(sentence: list[str], message: str, speakers: Sequence[str]) -> bool:
    content = [w for w in sentence if w not in QUERY_STOP_WORDS and w != "'s" and not w.isdigit()]
    if not content:
        return True
    source = set(_words(message)) | {w for s in speakers for w in _words(s)}
    own = sum(1 for w in content if any(same_word(w, m) for m in source))
    return own * 2 > len(content)


def readable(
    sentence: str,
    source: Sequence[str],
    target: Sequence[str],
    message: str,
    speakers: Sequence[str] = (),
) -> list[str]:
    """The checks of :data:`CHECKS` the sentence fails (none: it reads); ``source`` and ``target``: each
    end's name and aliases; ``message``: the text it was said in."""
    words = _words(sentence)
    failed = []
    if not _names_both(words, source, target):
        failed.append("ends")
    if _repeats(words, [*source, *target, *speakers]):
        failed.append("repeats")
    if _cut(sentence, words):
        failed.append("cut")
    if not _own_words(words, message, speakers):
        failed.append("words")
    return failed
