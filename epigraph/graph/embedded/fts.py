"""User text -> safe FTS5 expressions, and the bounded ranking plan of the embedded store.

Safety: user text never becomes query syntax. The query is cut into word tokens (letters and digits,
the characters SQLite's ``unicode61`` tokenizer keeps), each token is written as a double-quoted FTS5
string, and strings are joined with ``AND`` / ``OR`` by us. Operators (``AND``, ``NEAR(``, ``*``, ``^``,
column filters ``name:``) thereby become plain words or vanish, and no input makes an expression invalid.

Ranking plan. SQLite computes bm25() for every row an expression matches (1-2 µs a row), so ranking an
``OR`` of common words over 100k rows costs tens of milliseconds. A query is answered in stages, each
ranked by BM25, later stages only filling what earlier ones left:

1. rows containing **every** word (``AND``);
2. rows containing every word **that occurs at all** (words found nowhere are dropped: "where does
   alice live" still finds "Alice lives in Paris" when "where" and "does" are in no row);
3. rows containing **any** word (``OR``).

No pass ranks more than ``RANK_WINDOW`` rows: when an expression matches more, its newest
``RANK_WINDOW`` matches are ranked, and the window widens while too few of them pass the caller's
filters. Results are therefore exact BM25 order within a stage whenever it matches at most
``RANK_WINDOW`` rows, recency-biased beyond that, and the cost is bounded for any query.
"""

from __future__ import annotations

import re
import sqlite3
import unicodedata
from collections.abc import Iterator

MAX_TERMS = 32
"""Longer queries keep their first 32 distinct words: bounded cost whatever the input size."""

RANK_WINDOW = 256
"""The most rows one ranking pass scores (bm25() costs 1-3 µs a row)."""

_WORD = re.compile(r"[^\W_]+")


def query_terms(query: str) -> list[str]:
    """The distinct words of ``query`` (case-insensitive), each as a quoted FTS5 string."""
    seen: set[str] = set()
    terms: list[str] = []
    for word in _WORD.findall(unicodedata.normalize("NFKC", query)):
        key = word.casefold()
        if key not in seen:
            seen.add(key)
            terms.append('"' + word.replace('"', '""') + '"')
        if len(terms) == MAX_TERMS:
            break
    return terms


def match_expression(query: str, operator: str = "OR") -> str | None:
    """``query``'s words joined by ``operator`` (``AND`` / ``OR``), or ``None`` when it has no word."""
    terms = query_terms(query)
    return f" {operator} ".join(terms) if terms else None


def occurs(conn: sqlite3.Connection, fts: str, term: str) -> bool:
    """Whether any row holds ``term`` (one index probe)."""
    sql = f"SELECT 1 FROM {fts} WHERE {fts} MATCH ? LIMIT 1"
    return conn.execute(sql, (term,)).fetchone() is not None


def stages(conn: sqlite3.Connection, fts: str, terms: list[str]) -> Iterator[str]:
    """The expressions to rank, in order (see the module docstring). Lazy: the word probes of stage 2
    are only made when stage 1 did not fill the result."""
    yield " AND ".join(terms)
    if len(terms) == 1:
        return
    present = [t for t in terms if occurs(conn, fts, t)]
    if len(present) > 1 and len(present) < len(terms):
        yield " AND ".join(present)
    if present:
        yield " OR ".join(present)
