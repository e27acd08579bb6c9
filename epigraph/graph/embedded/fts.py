"""User text -> safe FTS5 expressions, and the bounded ranking plan of the embedded store.

Safety: user text never becomes query syntax. The query is cut into word tokens (letters and digits,
the characters SQLite's ``unicode61`` tokenizer keeps), each token is written as a double-quoted FTS5
string, and strings are joined with ``AND`` / ``OR`` by us. Operators (``AND``, ``NEAR(``, ``*``, ``^``,
column filters ``name:``) thereby become plain words or vanish, and no input makes an expression invalid.

Stemming. Every fulltext index uses ``schema.TOKENIZER`` (Porter over ``unicode61``), and FTS5 runs a
quoted query string through the same tokenizer: ``"hiking"`` matches the stem ``hike`` the index holds
for "hikes". So everything below that probes the index with a term (its document count, the final
``MATCH``) sees stemmed terms, exactly as the index stores them; nothing here stems by itself.

Ranking plan. SQLite computes bm25() for every row an expression matches (1-3 µs a row), so ranking an
``OR`` of common words over 100k rows would cost tens of milliseconds; and ranking "rows with every word"
first (an ``AND`` stage) is not BM25 at all: it lets "what", "did" and "the" decide the order. So:

0. English stop words are left out of the query (``query_terms``), as in the Neo4j store;
1. words found in no row are dropped ("where does alice live" still finds "Alice lives in Paris", whose
   ``live`` stem matches "live" and "lives" alike);
2. **very common** words (in more than ``COMMON_SHARE`` of the rows, probed with a bounded count) are
   dropped too, as long as one informative word remains: their IDF is near zero, they only inflate the
   set of rows to rank;
3. the rest are joined with ``OR`` and ranked by BM25.

No pass ranks more than ``RANK_WINDOW`` rows: when the expression matches more, its newest
``RANK_WINDOW`` matches are ranked, and the window widens while too few of them pass the caller's
filters. Results are exact BM25 order (over the kept words) whenever the expression matches at most
``RANK_WINDOW`` rows, recency-biased beyond that, and the cost is bounded for any query.
"""

from __future__ import annotations

import re
import sqlite3
import unicodedata

from ..stopwords import STOP_WORDS

MAX_TERMS = 32
"""Longer queries keep their first 32 distinct words: bounded cost whatever the input size."""

RANK_WINDOW = 256
"""The most rows one ranking pass scores (bm25() costs 1-3 µs a row)."""

COMMON_SHARE = 0.2
"""A word in more than this share of the rows is "very common" (dropped when rarer words remain)."""

_PROBE_CAP = 4096
"""Counting a word's rows stops here: past it the word is common in any table worth the probe."""

_WORD = re.compile(r"[^\W_]+")


def query_terms(query: str) -> list[str]:
    """The distinct words of ``query`` (case-insensitive) but English stop words (as Neo4j's analyzer
    drops them: ``graph.stopwords``), each as a quoted FTS5 string."""
    seen: set[str] = set()
    terms: list[str] = []
    for word in _WORD.findall(unicodedata.normalize("NFKC", query)):
        key = word.casefold()
        if key not in seen and key not in STOP_WORDS:
            seen.add(key)
            terms.append('"' + word.replace('"', '""') + '"')
        if len(terms) == MAX_TERMS:
            break
    return terms


def match_expression(query: str, operator: str = "OR") -> str | None:
    """``query``'s words joined by ``operator`` (``AND`` / ``OR``), or ``None`` when it has no word."""
    terms = query_terms(query)
    return f" {operator} ".join(terms) if terms else None


def document_counts(conn: sqlite3.Connection, fts: str, terms: list[str]) -> dict[str, int]:
    """How many rows hold each term, counted up to ``_PROBE_CAP`` (index probes, no ranking).

    Each count is a ``MATCH`` of the quoted term, so it is the document frequency of the term's stem:
    "hiking" counts the rows holding ``hike``, the same number BM25 weighs it by.
    """
    sql = f"SELECT count(*) FROM (SELECT 1 FROM {fts} WHERE {fts} MATCH ? LIMIT {_PROBE_CAP})"
    return {t: conn.execute(sql, (t,)).fetchone()[0] for t in terms}


def informative_expression(conn: sqlite3.Connection, fts: str, terms: list[str]) -> str | None:
    """The ``OR`` of the words worth ranking by (see the module docstring), or None if none occurs.

    In a table so big that a "very common" word would hold more rows than a probe counts, no word can
    be dropped as common, and the probes are skipped (0.4 ms a common word at 100k rows): an ``OR``
    with words found nowhere matches the same rows with the same bm25() scores (their term frequency
    is 0 in every row).
    """
    rows = conn.execute(f"SELECT coalesce(max(rowid), 0) FROM {fts}").fetchone()[0]
    common = max(COMMON_SHARE * rows, 32)
    if common >= _PROBE_CAP:
        return " OR ".join(terms)
    counts = document_counts(conn, fts, terms)
    present = [t for t in terms if counts[t] > 0]
    if not present:
        return None
    rare = [t for t in present if counts[t] <= common]
    return " OR ".join(rare or present)
