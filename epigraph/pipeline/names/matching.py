"""Pure name logic: the plausible-duplicate rules and the name vetoes.

The plausibility rules decide which retrieved candidates are worth a resolve_entity call. They are
deliberately lexical and explainable (a published operating point, not a magic cosine). Words are
split into possessors ("Melanie's"), the *core* (content words before the first preposition or relative
pronoun: "charity race" in "charity race for mental health") and the *head* (the core's last word).

- a possessor-qualified name is never its possessor ("Melanie's kids" is not "Melanie"), and names with
  different possessors differ ("Melanie's kids" vs "Caroline's kids");
- a lone proper noun is not a description that mentions it ("Caroline" vs "painting Caroline shared");
- otherwise two names are plausible duplicates when the head of one (singular or plural) is in the
  core of the other ("support group" / "LGBTQ support group", "kids who need a family" / "kids in
  need"), or one is a prefix of the other's single word of at least three letters ("Mel" / "Melanie"),
  or their name vectors are close (``vector_threshold``, applied by the resolver).
"""

from __future__ import annotations

from collections.abc import Callable

from ...graph.model import normalize_name
from ...graph.placeholders import PLACEHOLDER
from ...language import CLAUSE_WORDS, NAME_FILLER, phrase_words, singular


def name_words(name: str) -> tuple[frozenset[str], frozenset[str]]:
    """(possessors, content words) of a name: "Melanie's kids" -> ({"melanie"}, {"kids"})."""
    possessors, core, rest = _parts(name)
    return possessors, frozenset(core) | rest


def _parts(name: str) -> tuple[frozenset[str], list[str], frozenset[str]]:
    """(possessors, core words in order, content words after the core)."""
    possessors: set[str] = set()
    core: list[str] = []
    rest: set[str] = set()
    in_core = True
    for word in phrase_words(name):
        if word.endswith("'s"):
            possessors.add(word[:-2])
        elif word in CLAUSE_WORDS:
            in_core = in_core and not core
        elif word not in NAME_FILLER:
            (core.append(word) if in_core else rest.add(word))
    return frozenset(possessors), core, frozenset(rest)


def head(name: str) -> str | None:
    """The last word of a name's core, singular ("support group" -> "group", "charity race for mental
    health" -> "race"); None for a name of no content word."""
    _, core, _ = _parts(name)
    return singular(core[-1]) if core else None


def _head_in_core(a: list[str], b: list[str]) -> bool:
    return bool(a) and singular(a[-1]) in {singular(w) for w in b}


def _lone_proper_noun(name: str) -> bool:
    words = name.split()
    return len(words) == 1 and words[0][:1].isupper()


def _describes(name: str) -> bool:
    """Has a lowercase content word: a description, not a proper name."""
    return any(w[:1].islower() and w.casefold() not in NAME_FILLER for w in phrase_words(name, fold=False))


def never_same(new: str, candidate: str) -> bool:
    """The default vetoes (``NameOptions.never_same``), whatever the vectors say: different possessors
    ("Melanie's kids" / "Caroline's kids"), a possession and its possessor ("Melanie's kids" /
    "Melanie"), a lone proper noun and a description that merely mentions it ("Caroline" / "painting
    Caroline shared"; but not one named after it: "Marley" / "Marley flooring"), two different
    placeholders of redacted values ("<PHONE_1>" / "<PHONE_2>": two numbers, ``epigraph.privacy``)."""
    if new != candidate and PLACEHOLDER.fullmatch(new.strip()) and PLACEHOLDER.fullmatch(candidate.strip()):
        return True
    p_new, core_new, _ = _parts(new)
    p_cand, core_cand, _ = _parts(candidate)
    if p_new != p_cand and (p_new and p_cand):
        return True
    if (p_new and not p_cand and set(core_cand) <= p_new) or (
        p_cand and not p_new and set(core_new) <= p_cand
    ):
        return True
    for lone, other in ((new, candidate), (candidate, new)):
        named_after = other.split()[:1] == lone.split()
        if _lone_proper_noun(lone) and _describes(other) and not named_after:
            return True
    return False


NameVeto = Callable[[str, str], bool]
"""``veto(new, candidate)``: True when the two names can never be one entity, whatever else says so
(``NameOptions.never_same``; :func:`never_same` by default, None for no veto)."""


def plausible_duplicate(new: str, candidate: str, veto: NameVeto | None = never_same) -> bool:
    """Lexical rule: is ``candidate`` worth asking the model about as a duplicate of ``new``? ``veto``:
    the pairs a rule says are never the same (:func:`never_same`, the options' own, or None: none)."""
    if normalize_name(new) == normalize_name(candidate):
        return True
    if veto is not None and veto(new, candidate):
        return False
    _, core_new, _ = _parts(new)
    _, core_cand, _ = _parts(candidate)
    if _head_in_core(core_new, core_cand) or _head_in_core(core_cand, core_new):
        return True
    return _prefix_match(frozenset(core_new), frozenset(core_cand))


def share_a_word(a: str, b: str) -> bool:
    """The names share a possessor or a content word (singular and plural alike)."""
    possessors_a, words_a = name_words(a)
    possessors_b, words_b = name_words(b)
    stems_a = {singular(w) for w in words_a} | {f"{p}'s" for p in possessors_a}
    stems_b = {singular(w) for w in words_b} | {f"{p}'s" for p in possessors_b}
    return bool(stems_a & stems_b)


def _prefix_match(a: frozenset[str], b: frozenset[str]) -> bool:
    if len(a) != 1 or len(b) != 1:
        return False
    (x,), (y,) = sorted(a), sorted(b)
    short, long_ = sorted((x, y), key=len)
    return len(short) >= 3 and short != long_ and long_.startswith(short)
