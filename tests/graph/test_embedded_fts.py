"""The embedded store's fulltext ranking (``graph.embedded.terms`` over the tokens ``graph.embedded.fts``
reads from FTS5): the same scores as FTS5's own bm25(), patched indexes equal to freshly loaded ones,
and the FTS5 indexes kept in step with their tables."""

from __future__ import annotations

import random
import sqlite3
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path
from uuid import uuid4

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from epigraph.errors import StoreError
from epigraph.graph.embedded import EmbeddedStore
from epigraph.graph.embedded.db import Db
from epigraph.graph.embedded.fts import WEIGHTS, Stemmer, index_tokens, row_tokens
from epigraph.graph.embedded.reads import fact_clause
from epigraph.graph.embedded.schema import FTS_TABLES, TOKENIZER
from epigraph.graph.embedded.search import search_facts_text
from epigraph.graph.embedded.terms import COLUMN_BITS, COMMON_MIN_ROWS, COMMON_SHARE, TermIndex, Tokens
from epigraph.graph.embedded.writes import write_episode
from epigraph.graph.model import Entity, Episode, Fact
from epigraph.graph.store import EpisodeWrite, FactFilter
from epigraph.graph.temporal import TimeFilter

WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "lives", "living", "in"]


def _index(table: str, rows: int, seed: int) -> tuple[sqlite3.Connection, TermIndex]:
    """An FTS5 index named like ``table``'s (same columns, the store's tokenizer) over random texts of
    0-12 words (skewed word frequencies, some rows without any token), and its loaded TermIndex."""
    rng = random.Random(seed)
    columns = FTS_TABLES[table]
    conn = sqlite3.connect(":memory:")
    conn.execute(f"CREATE VIRTUAL TABLE {table}_fts USING fts5({', '.join(columns)}, tokenize='{TOKENIZER}')")

    def text() -> str:
        return " ".join(rng.choices(WORDS, weights=range(1, len(WORDS) + 1), k=rng.randint(0, 12)))

    marks = ", ".join("?" * (len(columns) + 1))
    conn.executemany(
        f"INSERT INTO {table}_fts (rowid, {', '.join(columns)}) VALUES ({marks})",
        [(i * 3 + 1, *(text() for _ in columns)) for i in range(rows)],
    )
    index = TermIndex(WEIGHTS[table])
    ids = [row[0] for row in conn.execute(f"SELECT rowid FROM {table}_fts")]
    index.replace(ids, {"g": np.array(ids, dtype=np.int64)}, index_tokens(conn, table))
    return conn, index


@pytest.mark.parametrize("table", ["facts", "entities"])
@pytest.mark.parametrize("rows", [20, 300])
def test_scores_equal_fts5_bm25_over_the_words_ranking_keeps(table: str, rows: int) -> None:
    """Every matching row, with FTS5's own bm25() score (column weights included), in score order; words
    in no row are ignored, very common ones too while a rarer one remains."""
    conn, index = _index(table, rows, seed=rows)
    assert len(index) == rows
    weights = ", ".join(str(w) for w in WEIGHTS[table])
    common = max(COMMON_SHARE * rows, COMMON_MIN_ROWS)
    for query in ["alpha", "hotel lives", "living alpha zulu", "in", "golf hotel echo bravo in", "zulu"]:
        tokens = Stemmer().tokens(conn, query.split())
        present = [t for t in tokens if index.document_count(t)]
        kept = [t for t in present if index.document_count(t) <= common] or present
        ranked = [hit for block in index.ranked(tokens, 7, ["g"]) for hit in block]
        if not kept:
            assert ranked == []
            continue
        expected = conn.execute(
            f"SELECT rowid, -bm25({table}_fts, {weights}) FROM {table}_fts WHERE {table}_fts MATCH ?",
            (" OR ".join(f'"{t}"' for t in kept),),
        ).fetchall()
        assert dict(ranked) == pytest.approx(dict(expected), rel=1e-12)
        assert ranked == sorted(ranked, key=lambda hit: (-hit[1], -hit[0]))  # best first, newest on ties


def test_document_counts_are_those_of_fts5() -> None:
    conn, index = _index("facts", 300, seed=1)
    for word in ["alpha", "live", "hotel", "zulu"]:
        (count,) = conn.execute("SELECT count(*) FROM facts_fts WHERE facts_fts MATCH ?", (word,)).fetchone()
        assert index.document_count(word) == count


def test_stemmer_gives_the_tokens_fts5_indexes() -> None:
    conn = sqlite3.connect(":memory:")
    assert Stemmer().tokens(conn, ["Hiking", "hikes", "Crème", "Lives", "x"]) == [
        "hike",
        "creme",
        "live",
        "x",
    ]


def test_replacing_and_removing_rows_keeps_the_counts_exact() -> None:
    """Rows rewritten or removed stop counting (their old postings are dropped), new rows count."""
    conn, index = _index("facts", 50, seed=2)
    before = index.document_count("alpha")
    conn.execute("CREATE TABLE facts (id INTEGER PRIMARY KEY, text TEXT)")
    holding = [r[0] for r in conn.execute("SELECT rowid FROM facts_fts WHERE facts_fts MATCH 'alpha'")]
    conn.executemany("INSERT INTO facts (id, text) VALUES (?, 'zulu zulu')", [(holding[0],), (1000,)])
    changed = [holding[0], holding[1], 1000]
    index.replace(changed, {"g": np.array([holding[0], 1000])}, row_tokens(conn, "facts", changed))
    assert index.document_count("alpha") == before - 2
    assert index.document_count("zulu") == 2
    assert len(index) == 50 + 1 - 1
    assert [row for block in index.ranked(["zulu"], 10, ["g"]) for row, _ in block] == [1000, holding[0]]
    index.replace([1000], {"other": np.array([1000])}, row_tokens(conn, "facts", [1000]))
    assert [row for block in index.ranked(["zulu"], 10, ["other"]) for row, _ in block] == [1000]
    assert [row for block in index.ranked(["zulu"], 10, ["g", "none"]) for row, _ in block] == [holding[0]]
    assert index.document_count("zulu") == 2  # statistics span every group, as FTS5's


async def test_the_fulltext_indexes_stay_in_step_through_inserts_updates_deletes_and_rollbacks(
    tmp_path: Path,
) -> None:
    """Schema v3 indexes inserted rows in the writer (one statement per table) and leaves updates and
    deletes to triggers: FTS5's own integrity check compares each index with its table after every kind
    of change, and searches see exactly the committed rows."""
    path = tmp_path / "fts.db"
    t0 = datetime(2024, 1, 1, tzinfo=UTC)
    first = Episode(group_id="g", content="Alice hikes near Grenoble", reference_time=t0)
    alice = Entity(group_id="g", name="Alice", summary="Alice hikes.")
    peak = Entity(group_id="g", name="Grenoble peaks")
    hikes = Fact(
        group_id="g", source_uuid=alice.uuid, target_uuid=peak.uuid, relation="HIKES_IN",
        text="Alice hikes in the Grenoble peaks", episodes=[first.uuid], created_at=t0,
    )  # fmt: skip
    second = Episode(group_id="g", content="Alice took up sailing", reference_time=t0)
    sailor = alice.model_copy(update={"summary": "Alice sails on weekends."})
    sails = hikes.model_copy(update={"uuid": str(uuid4()), "text": "Alice sails", "episodes": [second.uuid]})
    broken = Fact(
        group_id="g", source_uuid=alice.uuid, target_uuid=str(uuid4()), relation="KNOWS",
        text="Alice knows a stranger", episodes=[second.uuid], created_at=t0,
    )  # fmt: skip

    async with EmbeddedStore(str(path)) as store:
        await store.setup(2)
        await store.write_episode(EpisodeWrite(first, [alice, peak], [hikes]))
        await store.write_episode(EpisodeWrite(second, [sailor], [sails]))
        with pytest.raises(StoreError):  # the fact's target is in no group: the whole write rolls back
            stranger = Entity(group_id="g", name="Zed stranger")
            await store.write_episode(EpisodeWrite(second, [stranger], [broken]))
        _check_fulltext_indexes(path)
        assert [h.item.uuid for h in await store.search_entities_text(["g"], "sailing")] == [alice.uuid]
        assert await store.search_entities_text(["g"], "stranger") == []
        assert await store.search_facts_text(["g"], "stranger") == []
        await store.delete_episode("g", second.uuid)
        _check_fulltext_indexes(path)
        assert await store.search_facts_text(["g"], "sails") == []
        assert [h.item.uuid for h in await store.search_facts_text(["g"], "hiking")] == [hikes.uuid]
        assert await store.search_episodes_text(["g"], "sailing") == []


def _check_fulltext_indexes(path: Path) -> None:
    with closing(sqlite3.connect(path)) as conn:
        for table in ("entities_fts", "facts_fts", "episodes_fts"):  # raises if an index disagrees
            conn.execute(f"INSERT INTO {table} ({table}, rank) VALUES ('integrity-check', 1)")


async def test_a_patched_term_index_ranks_like_a_freshly_loaded_one(tmp_path: Path) -> None:
    """A store whose term indexes were loaded before inserts, rewrites (an entity's summary), a rolled
    back write and a delete gives the same hits and scores as a store that loads them afterwards."""
    path = str(tmp_path / "terms.db")
    t0 = datetime(2024, 1, 1, tzinfo=UTC)
    queries = ["alice hiking", "sailing", "bob", "grenoble peaks", "knows"]

    async def ranks(store: EmbeddedStore) -> list[list[tuple[str, float]]]:
        hits = []
        for q in queries:
            for search in (store.search_entities_text, store.search_facts_text, store.search_episodes_text):
                hits.append([(h.item.uuid, h.score) for h in await search(["g"], q, 50)])  # type: ignore[operator]
        return hits

    async with EmbeddedStore(path) as patched:
        await patched.setup(2)
        alice, bob = Entity(group_id="g", name="Alice", summary="hikes"), Entity(group_id="g", name="Bob")
        episodes = []
        for i in range(6):
            ep = Episode(
                group_id="g", content=f"Alice and Bob, day {i}: sailing near Grenoble", reference_time=t0
            )
            fact = Fact(
                group_id="g", source_uuid=alice.uuid, target_uuid=bob.uuid, relation="KNOWS",
                text=f"Alice knows Bob from hiking trip {i}", episodes=[ep.uuid], created_at=t0,
            )  # fmt: skip
            episodes.append(ep)
            await patched.write_episode(EpisodeWrite(ep, [alice, bob], [fact]))
            assert await ranks(patched)  # loads the indexes, then keeps patching them
            alice = alice.model_copy(update={"summary": f"Alice {'sails' if i % 2 else 'hikes'} ({i})"})
        with pytest.raises(StoreError):
            bad = Fact(
                group_id="g", source_uuid=alice.uuid, target_uuid=str(uuid4()), relation="KNOWS",
                text="Alice knows nobody", episodes=[episodes[0].uuid], created_at=t0,
            )  # fmt: skip
            await patched.write_episode(EpisodeWrite(episodes[0], [alice], [bad]))
        await patched.delete_episode("g", episodes[2].uuid)
        before = await ranks(patched)
    async with EmbeddedStore(path) as fresh:
        after = await ranks(fresh)
    assert [[uuid for uuid, _ in hits] for hits in before] == [[uuid for uuid, _ in hits] for hits in after]
    assert [s for hits in before for _, s in hits] == pytest.approx([s for hits in after for _, s in hits])
    assert any(before)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(1, 12), st.one_of(st.none(), st.lists(st.sampled_from(WORDS), max_size=6))),
        min_size=1,
        max_size=25,
    )
)
def test_any_sequence_of_row_changes_patches_to_the_freshly_loaded_index(
    changes: list[tuple[int, list[str] | None]],
) -> None:
    """Rows written, rewritten and deleted in any order, each change patched in as the store does
    (``row_tokens`` of the changed row): the same document counts and scores as an index loaded
    from FTS5 afterwards."""
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE facts (id INTEGER PRIMARY KEY, text TEXT NOT NULL)")
    conn.execute(f"CREATE VIRTUAL TABLE facts_fts USING fts5(text, content='facts', tokenize='{TOKENIZER}')")
    patched = TermIndex(WEIGHTS["facts"])
    for row, words in changes:
        old = conn.execute("SELECT text FROM facts WHERE id = ?", (row,)).fetchone()
        if old is not None:
            conn.execute(
                "INSERT INTO facts_fts (facts_fts, rowid, text) VALUES ('delete', ?, ?)", (row, old[0])
            )
            conn.execute("DELETE FROM facts WHERE id = ?", (row,))
        if words is not None:
            conn.execute("INSERT INTO facts (id, text) VALUES (?, ?)", (row, " ".join(words)))
            conn.execute("INSERT INTO facts_fts (rowid, text) VALUES (?, ?)", (row, " ".join(words)))
        patched.replace(
            [row], {"g": np.array([row])} if words is not None else {}, row_tokens(conn, "facts", [row])
        )
    fresh = TermIndex(WEIGHTS["facts"])
    ids = [r[0] for r in conn.execute("SELECT id FROM facts")]
    fresh.replace(ids, {"g": np.array(ids, dtype=np.int64)}, index_tokens(conn, "facts"))
    assert len(patched) == len(fresh) == len(ids)
    for term in ["alpha", "hotel", "live", "in"]:
        assert patched.document_count(term) == fresh.document_count(term)
        for query in ([term], [term, "golf"]):
            got = [hit for block in patched.ranked(query, 5, ["g"]) for hit in block]
            want = [hit for block in fresh.ranked(query, 5, ["g"]) for hit in block]
            assert [r for r, _ in got] == [r for r, _ in want]
            assert [s for _, s in got] == pytest.approx([s for _, s in want], rel=1e-12)


def test_tokens_in_any_order_make_the_same_postings() -> None:
    """FTS5 lists tokens by term, then row; a reader that did not would still index the same rows."""
    keys = np.array(
        [(5 << COLUMN_BITS) | 1, 2 << COLUMN_BITS, 5 << COLUMN_BITS, 2 << COLUMN_BITS, 9 << COLUMN_BITS]
    )
    term_of = np.array([0, 1, 0, 0, 1])  # "name" in rows 5 (columns 1 and 0) and 2, "bob" in rows 2 and 9
    shuffled = Tokens(terms=["name", "bob"], keys=keys, term_of=term_of)
    order = np.lexsort((keys >> COLUMN_BITS, term_of))
    ordered = Tokens(terms=["name", "bob"], keys=keys[order], term_of=term_of[order])
    present = {"g": np.array([2, 5, 9])}
    results = []
    for tokens in (shuffled, ordered):
        index = TermIndex(WEIGHTS["entities"])
        index.replace([2, 5, 9], present, tokens)
        results.append([hit for block in index.ranked(["name", "bob"], 10, ["g"]) for hit in block])
    assert results[0] == results[1]
    rows = [row for row, _ in results[0]]
    assert rows[0] == 2 and sorted(rows) == [2, 5, 9]  # the row with both words first


def test_a_term_index_that_fails_to_catch_up_is_reloaded_not_left_stale(tmp_path: Path) -> None:
    """The rows a write changed are taken off the index's to-do list before it is patched; when the
    patch fails (here: the scratch table FTS5 tokenizes in is not an FTS5 table), the next search must
    load the index afresh rather than use one that never learned of those rows."""
    db = Db(str(tmp_path / "stale.db"))
    t0 = datetime(2024, 1, 1, tzinfo=UTC)
    alice = Entity(group_id="g", name="Alice")
    write_episode(db, EpisodeWrite(Episode(group_id="g", content="hello", reference_time=t0), [alice], []))
    with db.read():
        assert db.term_index("entities").document_count("alic") == 1
    bob = Entity(group_id="g", name="Bob")
    write_episode(db, EpisodeWrite(Episode(group_id="g", content="hi", reference_time=t0), [bob], []))
    db.conn.execute("DROP TABLE IF EXISTS temp.epigraph_tokens_entities")
    db.conn.execute("CREATE TEMP TABLE epigraph_tokens_entities (unrelated)")
    with pytest.raises(sqlite3.OperationalError), db.read():
        db.term_index("entities")
    db.conn.execute("DROP TABLE temp.epigraph_tokens_entities")
    with db.read():
        assert db.term_index("entities").document_count("bob") == 1
    db.close()


def test_a_fact_search_as_of_a_time_ranks_only_the_facts_begun_and_recorded_by_then(tmp_path: Path) -> None:
    """Tied facts rank the newest first: a search as of an early time would read every later one from
    SQLite before the first that passes. The term index holds each fact's start key and created_at (set
    on load and on every patch, an open start never excluded) and leaves the later ones out of the
    ranking; the store's answer is the same as the SQL filter's."""
    db = Db(str(tmp_path / "times.db"))
    day = [datetime(2024, 1, d, tzinfo=UTC) for d in range(1, 8)]
    alice, paris = Entity(group_id="g", name="Alice"), Entity(group_id="g", name="Paris")

    def said(valid_at: datetime | None, stated_at: datetime | None) -> Fact:
        return Fact(
            group_id="g", source_uuid=alice.uuid, target_uuid=paris.uuid, relation="LIVES_IN",
            text="Alice lives in Paris", valid_at=valid_at, stated_at=stated_at, created_at=day[6],
        )  # fmt: skip

    first = [said(day[d], day[d]) for d in range(5)] + [said(None, None)]  # the last: an open start
    episode = Episode(group_id="g", content="x", reference_time=day[0])
    write_episode(db, EpisodeWrite(episode, [alice, paris], first))
    with db.read():
        index = db.term_index("facts")
        texts = dict(db.conn.execute("SELECT id, uuid FROM facts"))

    def ranked(latest: tuple[int | None, int | None]) -> list[str]:
        with db.read():
            blocks = db.term_index("facts").ranked(["live"], 3, ["g"], latest)
            return [texts[row] for block in blocks for row, _ in block]

    by_day_2 = int(day[1].timestamp() * 1_000_000)
    assert set(ranked((by_day_2, None))) == {first[0].uuid, first[1].uuid, first[5].uuid}
    assert len(ranked((None, None))) == 6
    assert ranked((None, int(day[5].timestamp() * 1_000_000))) == []  # none recorded by day 6
    later = said(day[1], day[1])  # a patch: its times are set too
    write_episode(db, EpisodeWrite(Episode(group_id="g", content="y", reference_time=day[1]), [], [later]))
    with db.read():
        texts = dict(db.conn.execute("SELECT id, uuid FROM facts"))
        assert db.term_index("facts") is index  # patched, not loaded again
    assert set(ranked((by_day_2, None))) == {first[0].uuid, first[1].uuid, first[5].uuid, later.uuid}
    assert len(ranked((None, int(day[6].timestamp() * 1_000_000)))) == 7  # a bound no row passes: all

    as_of = FactFilter(time=TimeFilter(as_of=day[1]))
    found = {hit.item.uuid for hit in search_facts_text(db, ["g"], "lives", 10, as_of, day[6])}
    where, params = fact_clause(as_of, day[6], "x")
    with db.read() as conn:
        wanted = {uuid for (uuid,) in conn.execute(f"SELECT x.uuid FROM facts AS x WHERE {where}", params)}
    assert found == wanted and later.uuid in found
    db.close()
