"""Language mechanics (epigraph.language): the one place of words, stop words and stems."""

from __future__ import annotations

from epigraph import language as L


def test_the_stop_word_lists_nest_so_they_cannot_drift() -> None:
    assert len(L.LUCENE_STOP_WORDS) == 33  # Lucene's EnglishAnalyzer set: the stores depend on it exactly
    assert L.LUCENE_STOP_WORDS < L.QUERY_STOP_WORDS and len(L.QUERY_STOP_WORDS) == 130
    assert L.NAME_FILLER | L.ARTICLES_AND_DEMONSTRATIVES <= L.QUERY_STOP_WORDS
    assert L.PRONOUNS - L.QUERY_STOP_WORDS == {"mine", "us", "someone", "everyone"}
    assert L.CLAUSE_WORDS - L.QUERY_STOP_WORDS == {"whose"}


def test_three_cuts_of_words() -> None:
    assert L.words("Alice's café_bar, 2023!") == ["Alice", "s", "café", "bar", "2023"]
    assert L.phrase_words("Melanie’s kids DON'T") == ["melanie's", "kids", "don't"]
    assert L.phrase_words("Melanie’s Kids", fold=False) == ["Melanie's", "Kids"]
    assert L.plain_words("Melanie's KIDS, café!") == ["melanie", "kids", "cafe"]


def test_singular_keeps_meaning_and_stem_finds_families() -> None:
    cases = ["kids", "agencies", "class", "bus", "career", "caring", "painter", "painting", "boxes"]
    assert [L.singular(w) for w in cases] == [
        "kid", "agency", "class", "bus", "career", "caring", "painter", "painting", "boxe"
    ]  # fmt: skip
    stems = ["kid", "agency", "clas", "bus", "care", "car", "paint", "paint", "box"]
    assert [L.stem(w) for w in cases] == stems
    assert L.roots("performance") & L.roots("performed") and not L.roots("plan") & L.roots("plane")
