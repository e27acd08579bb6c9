"""FTS5 as the embedded store's tokenizer and persistent fulltext index: the words of a query, and the
tokens FTS5 made of the rows and of those words (read back through ``fts5vocab``).

Every fulltext index uses ``schema.TOKENIZER`` (Porter over ``unicode61``), and so does everything here:
ranking (``terms.TermIndex``) sees the very tokens FTS5 stores, so "hiking" in a query matches the stem
``hike`` that "hikes" and "hiked" were indexed under, exactly as an FTS5 ``MATCH`` would.

Safety: user text never becomes query syntax. A query is cut into words (letters and digits, the
characters ``unicode61`` keeps) and each word is stemmed by inserting it, as data, into a scratch FTS5
table; no ``MATCH`` expression is ever built from user text.

Three readers, all set-based (one statement each, keys aggregated in SQL):

- :func:`index_tokens`: every token of a table's index, from its ``instance`` vocabulary, to load a
  ``TermIndex``;
- :func:`row_tokens`: the tokens of given rows, made by copying them into a scratch FTS5 table in the
  ``temp`` schema (FTS5 cannot list one row's tokens), to bring a loaded ``TermIndex`` up to date;
- :func:`Stemmer`: the tokens of query words the same way, cached per word.
"""

from __future__ import annotations

import sqlite3
import unicodedata
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

import numpy as np

from ...language import LUCENE_STOP_WORDS, words
from .reads import IN_LIST, as_json
from .schema import FTS_TABLES, TOKENIZER
from .terms import COLUMN_BITS, Tokens

WEIGHTS: dict[str, tuple[float, ...]] = {"entities": (10.0, 5.0, 1.0), "facts": (1.0,), "episodes": (1.0,)}
"""BM25 column weights of each index; entities' (name, aliases, summary): a name match outranks a passing
mention."""

MAX_TERMS = 32
"""Longer queries keep their first 32 distinct words: bounded cost whatever the input size."""

_STEMS_CACHED = 65_536
"""Query words whose tokens a :class:`Stemmer` remembers (the cache starts over when full)."""


def query_words(query: str) -> list[str]:
    """The distinct words of ``query`` (case-insensitive, first spelling kept) but English stop words
    (as Neo4j's analyzer drops them: ``language.LUCENE_STOP_WORDS``), at most ``MAX_TERMS``."""
    seen: set[str] = set()
    kept: list[str] = []
    for word in words(unicodedata.normalize("NFKC", query)):
        key = word.casefold()
        if key not in seen and key not in LUCENE_STOP_WORDS:
            seen.add(key)
            kept.append(word)
        if len(kept) == MAX_TERMS:
            break
    return kept


def index_tokens(conn: sqlite3.Connection, table: str) -> Tokens:
    """Every token in ``table``'s fulltext index."""
    vocab = f"temp.epigraph_vocab_{table}"
    conn.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS {vocab} USING fts5vocab(main, {table}_fts, instance)")
    return _tokens(conn, vocab, table)


def row_tokens(conn: sqlite3.Connection, table: str, ids: Iterable[int]) -> Tokens:
    """The tokens of ``table``'s rows ``ids`` as they are now (ids of rows that do not exist add none)."""
    cols = ", ".join(FTS_TABLES[table])
    with _scratch(conn, table) as scratch:
        rows = f"SELECT id, {cols} FROM main.{table} WHERE id IN {IN_LIST}"
        conn.execute(f"INSERT INTO {scratch} (rowid, {cols}) {rows}", (as_json([int(i) for i in ids]),))
        return _tokens(conn, f"{scratch}_vocab", table)


class Stemmer:
    """Query words -> the tokens FTS5 makes of them (usually one stem each; a word FTS5 splits gives
    several), through the scratch table of ``facts``, remembered per word."""

    def __init__(self) -> None:
        self._cache: dict[str, list[str]] = {}

    def clear(self) -> None:
        """Forget every word remembered (a forgotten name a query once held, too)."""
        self._cache.clear()

    def tokens(self, conn: sqlite3.Connection, words: Iterable[str]) -> list[str]:
        """The distinct tokens of ``words``, in word order."""
        words = list(words)
        missing = list(dict.fromkeys(w for w in words if w not in self._cache))
        if missing:
            if len(self._cache) + len(missing) > _STEMS_CACHED:
                self._cache.clear()
            self._cache.update(zip(missing, _stems(conn, missing), strict=True))
        return list(dict.fromkeys(token for word in words for token in self._cache[word]))


def _stems(conn: sqlite3.Connection, words: list[str]) -> list[list[str]]:
    with _scratch(conn, "facts") as scratch:
        conn.executemany(f"INSERT INTO {scratch} (rowid, text) VALUES (?, ?)", enumerate(words, 1))
        rows = conn.execute(f"SELECT doc, term FROM {scratch}_vocab ORDER BY doc, offset").fetchall()
    stems: list[list[str]] = [[] for _ in words]
    for doc, term in rows:
        stems[doc - 1].append(term)
    return stems


@contextmanager
def _scratch(conn: sqlite3.Connection, table: str) -> Iterator[str]:
    """A contentless FTS5 table in ``temp`` with ``table``'s columns and tokenizer (and its ``_vocab``),
    emptied again when the block ends, however it ends."""
    scratch = f"temp.epigraph_tokens_{table}"
    conn.execute(
        f"CREATE VIRTUAL TABLE IF NOT EXISTS {scratch} USING fts5"
        f"({', '.join(FTS_TABLES[table])}, content='', tokenize='{TOKENIZER}')"
    )
    conn.execute(
        f"CREATE VIRTUAL TABLE IF NOT EXISTS {scratch}_vocab"
        f" USING fts5vocab(temp, epigraph_tokens_{table}, instance)"
    )
    try:
        yield scratch
    finally:
        conn.execute(f"INSERT INTO {scratch} (epigraph_tokens_{table}) VALUES ('delete-all')")


def _tokens(conn: sqlite3.Connection, vocab: str, table: str) -> Tokens:
    """All instances of an ``instance`` vocabulary over ``table``'s columns, one SQL row per term (its
    keys joined by commas): a Python tuple per token would cost more than the whole read."""
    column = " ".join(f"WHEN '{c}' THEN {i}" for i, c in enumerate(FTS_TABLES[table]))  # col is a name
    key = f"(doc << {COLUMN_BITS}) | CASE col {column} END"
    sql = f"SELECT term, group_concat({key}) FROM {vocab} GROUP BY term"
    terms: list[str] = []
    keys: list[str] = []
    for term, joined in conn.execute(sql):
        terms.append(term)
        keys.append(joined)
    counts = np.fromiter((k.count(",") + 1 for k in keys), dtype=np.int64, count=len(keys))
    return Tokens(
        terms=terms,
        keys=np.fromstring(",".join(keys), dtype=np.int64, sep=",") if keys else np.zeros(0, np.int64),
        term_of=np.repeat(np.arange(len(terms)), counts),
    )
