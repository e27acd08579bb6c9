"""Language mechanics, in one place: how text is cut into words, which words carry no content, and how
a word is brought to its stem. English only, and no meaning: which words are synonyms or what is no
entity is ingestion policy (:class:`~epigraph.pipeline.options.IngestOptions`), not mechanics.

Words (three cuts, each for what reads it):

- :func:`words`: runs of letters and digits (``[^\\W_]+``), as they are: what SQLite's ``unicode61`` and
  Lucene's standard tokenizer keep, so the fulltext queries of both stores and search's keywords;
- :func:`phrase_words`: case-folded, an apostrophe inside a word kept ("don't", "melanie's"): the words
  of a fact sentence or a name;
- :func:`plain_words`: case-folded, accent-free, possessive ``'s`` removed: what a name is grounded by.

Stop words, one named list per purpose, the larger built from the smaller so they cannot drift:

- :data:`LUCENE_STOP_WORDS` (33): Lucene's ``EnglishAnalyzer`` set, which Neo4j's ``english`` analyzer
  drops; both stores leave exactly these out of fulltext queries, so they agree ("where is the" finds
  nothing in either, "the cat" ranks like "cat"). Fact-candidate BM25 uses it too. Must stay this set;
- :data:`QUERY_STOP_WORDS` (130): those and the other function words (pronouns, auxiliaries, most
  prepositions), left out of a search's keyword query (stores treat every query word as significant);
- :data:`PRONOUNS`, :data:`NAME_FILLER`, :data:`CLAUSE_WORDS`, :data:`ARTICLES_AND_DEMONSTRATIVES`:
  the small sets names, grounding and restatements use (each is inside :data:`QUERY_STOP_WORDS`).

Stems, two strengths for two jobs: :func:`singular` (the number only: names and fact terms are compared
by it, so a word keeps its meaning) and :func:`stem` (plural, -ing, -ed, -er endings: generous, for
finding a word's family in a text), with :func:`roots` (a word's stem without a derivational suffix: one
family shares one). The ingest bench tells them apart: comparing names and fact terms by :func:`stem`
asks the model more questions (more input and output tokens) for the same graph.
"""

from __future__ import annotations

import re
import unicodedata

WORD = re.compile(r"[^\W_]+")
"""A word: letters and digits (``unicode61``'s token characters)."""
_PHRASE_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)*")
_PLAIN_WORD = re.compile(r"[a-z0-9]+")
_POSSESSIVE = re.compile(r"(?<=\w)['’]s\b")

LUCENE_STOP_WORDS = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such that the their then there "
    "these they this to was will with".split()
)
"""Lucene's ``EnglishAnalyzer.ENGLISH_STOP_WORDS_SET``; lower-case: compare a word's ``casefold()``."""

PRONOUNS = frozenset(
    "i me my mine myself you your yours yourself we us our ours he him his she her hers it its they them "
    "their theirs someone everyone".split()
)
"""Personal and possessive pronouns, and "someone" / "everyone": never the content of a name."""

QUERY_STOP_WORDS = LUCENE_STOP_WORDS | frozenset(
    """about above after again against all am any because been before being below between both can could
    did do does doing down during each few from further had has have having he her here hers herself him
    himself his how i its itself just me more most my myself nor now off once only other our ours ourselves
    out over own same she should so some than theirs them themselves those through too under until up very
    we were what when where which while who whom why would you your yours yourself yourselves s t ever
    also""".split()
)
"""Function words a keyword query leaves out (they cost fulltext hits: docs/decisions/
2026-11-22-search-fusion-and-fulltext.md)."""

NAME_FILLER = frozenset("a an the and or my your his her their our its is are was were be".split())
"""Words that are never a name's content ("the support group" is "support group")."""

CLAUSE_WORDS = frozenset("of in on at to for from by with about who that which where whose".split())
"""Prepositions and relative pronouns: a name's core ends before the first ("charity race for ...")."""

ARTICLES_AND_DEMONSTRATIVES = frozenset("a an the that this these those".split())
"""What two sentences may differ by and still say the same (negations, tense and modals are not)."""

ARTICLES = frozenset("a an the".split())
"""Articles: no part of a relation ("went to a" is "went to")."""

FORMS_OF_BE = frozenset("is are was were am be been being".split())
"""A relation's leading "is" carries no relation ("is swamped with" is "swamped with")."""

DETERMINERS = ARTICLES | frozenset("my your his her their our its".split())
"""What a relation may end in but not mean ("went to her" is "went to")."""

PREPOSITIONS = frozenset("about at by for from in into of on to with without".split())
"""A name does not start with one: "[with the kids]" is "kids", the "with" belongs to the relation."""

_ENDINGS = ("ies", "es", "s", "ing", "ed", "er")
_DERIVATIONS = tuple("ments ment ness ships ship ances ance ences ence ity ages age al".split())
"""Suffixes that make a noun of a verb or an adjective; stripped when at least 5 letters remain (and
"-ion" after a t: "graduation"), so "performance" meets "performed" but "message" never meets "mess"."""


def words(text: str) -> list[str]:
    """The runs of letters and digits of ``text``, case and accents as they are."""
    return WORD.findall(text)


def phrase_words(text: str, *, fold: bool = True) -> list[str]:
    """Case-folded words (``fold``), an apostrophe inside a word kept (curly ones made straight):
    "Melanie’s kids don't" -> ["melanie's", "kids", "don't"]."""
    return _PHRASE_WORD.findall((text.casefold() if fold else text).replace("’", "'"))


def plain_words(text: str) -> list[str]:
    """Case-folded, accent-free words, possessive ``'s`` removed: "Melanie's KIDS, café!" -> ["melanie",
    "kids", "cafe"]."""
    plain = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    return _PLAIN_WORD.findall(_POSSESSIVE.sub("", plain.casefold()))


def singular(word: str) -> str:
    """A lower-case word in the singular, nothing more: "agencies" -> "agency", "kids" -> "kid" ("class"
    and "bus" stay). For comparing names and the terms of a sentence, where a word must keep its meaning
    ("career" is not "care", "painter" not "painting")."""
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        return word[:-1]
    return word


def stem(word: str) -> str:
    """A light English stem of a lower-case word: plurals and -ing/-ed/-er forms ("kids" -> "kid",
    "parties" -> "party", "painting" and "painted" -> "paint"), at least three letters left. Generous on
    purpose (it also makes "caring" and "car" one): for finding a word's family in a text (grounding,
    :func:`roots`), not for telling two words apart (:func:`singular`)."""
    for ending in _ENDINGS:
        if word.endswith(ending) and len(word) - len(ending) >= 3:
            base = word[: -len(ending)]
            return base + "y" if ending == "ies" else base
    return word


def roots(word: str) -> frozenset[str]:
    """The forms ``word`` is compared by: itself, its :func:`stem` and its stem without a derivational
    suffix, each stripped form also with a silent "e" put back. Two words of one family share one:
    "dancing" and "dance" (dance), "performance" and "performed" (perform), "marriage" and "married"
    (marri), "retirement" and "retired" (retire); "plan" and "plane" do not. A reflexive pronoun holds
    "self" ("self-care" from "taking care of ourselves")."""
    out = {word, "self"} if word.endswith(("self", "selves")) else {word}
    for form in (word, stem(word)):
        stripped = form != word
        for suffix in (*_DERIVATIONS, "ions", "ion"):
            cut = len(form) - len(suffix)
            if form.endswith(suffix) and cut >= 5 and (not suffix.startswith("ion") or form[cut - 1] == "t"):
                form, stripped = form[:cut], True
                break
        if stripped:
            out.update((form, form + "e"))
    return frozenset(out)


def shortening(short: str, word: str) -> bool:
    """``short`` is a clipped form of ``word`` ("edu"/"education"), or ``word`` of ``short``."""
    if len(short) > len(word):
        short, word = word, short
    return len(short) >= 3 and word.startswith(short) and len(short) * 3 >= len(word)


def same_word(a: str, b: str) -> bool:
    """Whether two case-folded words are one up to endings, family or shortening: "kids"/"kid",
    "dancing"/"dance", "edu"/"education"."""
    return bool(roots(a) & roots(b)) or shortening(a, b)
