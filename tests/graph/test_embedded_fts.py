"""The embedded store's ranking plan (``graph.embedded.fts``) on FTS5 tables of different sizes."""

from __future__ import annotations

import sqlite3

import pytest

from epigraph.graph.embedded.fts import (
    _PROBE_CAP,
    COMMON_SHARE,
    RANK_WINDOW,
    informative_expression,
    query_terms,
)
from epigraph.graph.embedded.schema import TOKENIZER

WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"]


def _table(rows: int) -> sqlite3.Connection:
    """An FTS5 table with the store's tokenizer: every row says 'in', rarer words come and go."""
    conn = sqlite3.connect(":memory:")
    conn.execute(f"CREATE VIRTUAL TABLE t USING fts5(text, tokenize='{TOKENIZER}')")
    conn.executemany(
        "INSERT INTO t (rowid, text) VALUES (?, ?)",
        ((i + 1, f"{WORDS[i % 8]} lives in {WORDS[(i * 7) % 5]} town {i % 97}") for i in range(rows)),
    )
    return conn


def _ranked(conn: sqlite3.Connection, expression: str) -> list[tuple[int, float]]:
    sql = "SELECT rowid, bm25(t) FROM t WHERE t MATCH ? ORDER BY rowid DESC LIMIT ?"
    return sorted(conn.execute(sql, (expression, RANK_WINDOW)).fetchall(), key=lambda r: (r[1], r[0]))


def test_a_small_table_drops_absent_and_very_common_words() -> None:
    conn = _table(1_000)
    assert informative_expression(conn, "t", query_terms("hiking lives in hotel")) == '"hotel"'
    assert informative_expression(conn, "t", query_terms("hiking zulu")) is None


@pytest.mark.parametrize("query", ["hiking lives in alpha", "zulu", "in town 5"])
def test_a_big_table_skips_the_probes_and_ranks_as_if_it_had_made_them(query: str) -> None:
    """Above the size where no word can count as very common, every word goes into the OR; words found
    nowhere change neither the rows nor their bm25() scores."""
    rows = int(_PROBE_CAP / COMMON_SHARE) + 10
    conn = _table(rows)
    terms = query_terms(query)
    expression = informative_expression(conn, "t", terms)
    assert expression == " OR ".join(terms)
    present = [t for t in terms if conn.execute("SELECT 1 FROM t WHERE t MATCH ? LIMIT 1", (t,)).fetchone()]
    with_probes = _ranked(conn, " OR ".join(present)) if present else []
    assert _ranked(conn, expression) == with_probes
