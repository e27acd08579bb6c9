"""The English stop words both stores leave out of fulltext queries.

They are the words of Lucene's ``EnglishAnalyzer`` (``ENGLISH_STOP_WORDS_SET``), which Neo4j's ``english``
fulltext analyzer drops from documents and queries alike. The embedded store indexes them (SQLite's
``porter unicode61`` has no stop list) but leaves them out of its queries too, so the two stores agree:
"where is the" finds nothing in either, and "the cat" ranks like "cat".
"""

from __future__ import annotations

STOP_WORDS = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such that the their then there "
    "these they this to was will with".split()
)
"""Lower-case; compare a word's ``casefold()`` against it."""
