"""The embedded store's ranking plan (``graph.embedded.fts``) on FTS5 tables of different sizes, and its
fulltext indexes kept in step with their tables."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path
from uuid import uuid4

import pytest

from epigraph.errors import StoreError
from epigraph.graph.embedded import EmbeddedStore
from epigraph.graph.embedded.fts import (
    _PROBE_CAP,
    COMMON_SHARE,
    RANK_WINDOW,
    informative_expression,
    query_terms,
)
from epigraph.graph.embedded.schema import TOKENIZER
from epigraph.graph.model import Entity, Episode, Fact
from epigraph.graph.store import EpisodeWrite

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
