"""Embedded store schema migrations: a file written by an older schema opens with everything in it.

``fixtures/embedded_v1.db`` was written by epigraph at schema version 1 (FTS5 tokenizer
``unicode61 remove_diacritics 2``, no stemming) from exactly the records :func:`v1_records` returns, with
:func:`write_v1_fixture`, then compacted (``journal_mode=DELETE``, ``page_size=1024``, ``VACUUM``) so it is a
single small file. Opening it with the current code must upgrade it in place (v2: Porter stemming in every
fulltext index) without losing a row, and stemmed queries must then work on the old data.
"""

from __future__ import annotations

import shutil
import sqlite3
from contextlib import closing
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from epigraph.errors import StoreUnavailable
from epigraph.graph.decisions import DecisionRecord, Step
from epigraph.graph.embedded import SCHEMA_VERSION, EmbeddedStore
from epigraph.graph.embedded import migrations as embedded_migrations
from epigraph.graph.embedded import schema as embedded_schema
from epigraph.graph.forgetting import RetentionPolicy
from epigraph.graph.model import Entity, Episode, EpisodeStatus, Fact, Mention
from epigraph.graph.store import EVERYTHING, EpisodeWrite, FactFilter, StoreStats, VaultEntry, VaultHeader

FIXTURE = Path(__file__).parent / "fixtures" / "embedded_v1.db"
GROUP = "fixture-v1"
DIM = 4
T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
FTS_TABLES = ("entities_fts", "facts_fts", "episodes_fts")


def v1_records() -> tuple[list[Episode], list[Entity], list[Fact]]:
    """What the v1 fixture holds (fixed uuids and times, vectors exactly representable in float32)."""
    first = Episode(
        uuid="00000000-0000-4000-8000-000000000001",
        group_id=GROUP,
        name="turn 1",
        content="Alice: I love hiking in the mountains near Grenoble.",
        reference_time=T0,
        created_at=T0,
        status=EpisodeStatus.DONE,
        content_embedding=[1.0, 0.0, 0.0, 0.5],
    )
    second = Episode(
        uuid="00000000-0000-4000-8000-000000000002",
        group_id=GROUP,
        name="turn 2",
        content="Bob: Running shoes were on sale, so I bought two pairs.",
        reference_time=T0 + timedelta(minutes=1),
        created_at=T0 + timedelta(minutes=1),
        status=EpisodeStatus.DONE,
    )
    alice = Entity(
        uuid="00000000-0000-4000-8000-0000000000a1",
        group_id=GROUP,
        name="Alice",
        aliases=["Ali"],
        labels=["Person"],
        summary="Alice hikes every weekend and climbs mountains.",
        name_embedding=[0.0, 1.0, 0.0, 0.0],
        created_at=T0,
    )
    mountains = Entity(
        uuid="00000000-0000-4000-8000-0000000000a2",
        group_id=GROUP,
        name="Mountains near Grenoble",
        labels=["Place"],
        name_embedding=[0.0, 0.0, 1.0, 0.0],
        created_at=T0,
    )
    bob = Entity(
        uuid="00000000-0000-4000-8000-0000000000a3",
        group_id=GROUP,
        name="Bob",
        labels=["Person"],
        summary="Bob buys running shoes.",
        created_at=T0,
    )
    hikes = Fact(
        uuid="00000000-0000-4000-8000-0000000000f1",
        group_id=GROUP,
        source_uuid=alice.uuid,
        target_uuid=mountains.uuid,
        relation="HIKES_IN",
        text="Alice hikes every weekend",
        episodes=[first.uuid],
        valid_at=T0 - timedelta(days=365),
        text_embedding=[0.5, 0.5, 0.0, 0.0],
        created_at=T0,
    )
    bought = Fact(
        uuid="00000000-0000-4000-8000-0000000000f2",
        group_id=GROUP,
        source_uuid=bob.uuid,
        target_uuid=bob.uuid,
        relation="BOUGHT",
        text="Bob bought two pairs of running shoes",
        episodes=[second.uuid],
        valid_at=T0,
        invalid_at=T0 + timedelta(days=30),
        created_at=T0 + timedelta(minutes=1),
    )
    return [first, second], [alice, mountains, bob], [hikes, bought]


def _writes() -> list[EpisodeWrite]:
    (first, second), (alice, mountains, bob), (hikes, bought) = v1_records()
    return [
        EpisodeWrite(
            episode=first,
            entities=[alice, mountains],
            facts=[hikes],
            mentions=[
                Mention(group_id=GROUP, episode_uuid=first.uuid, entity_uuid=e.uuid)
                for e in (alice, mountains)
            ],
        ),
        EpisodeWrite(
            episode=second,
            entities=[bob],
            facts=[bought],
            mentions=[Mention(group_id=GROUP, episode_uuid=second.uuid, entity_uuid=bob.uuid)],
        ),
    ]


async def write_v1_fixture(path: Path) -> None:  # pragma: no cover - how the fixture file was made
    """Run once with the schema-v1 code (git history) to produce ``fixtures/embedded_v1.db``."""
    async with EmbeddedStore(str(path)) as store:
        await store.setup(DIM)
        for write in _writes():
            await store.write_episode(write)
    with closing(sqlite3.connect(path)) as conn:
        conn.execute("PRAGMA journal_mode = DELETE")
        conn.execute("PRAGMA page_size = 1024")
        conn.execute("VACUUM")


def _fts_sql(conn: sqlite3.Connection) -> dict[str, str]:
    rows = conn.execute("SELECT name, sql FROM sqlite_master WHERE name IN (?, ?, ?)", FTS_TABLES)
    return {name: sql for name, sql in rows}


def _triggers(conn: sqlite3.Connection) -> set[str]:
    return {name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")}


def _counts(conn: sqlite3.Connection) -> dict[str, int]:
    tables = [
        "episodes", "entities", "entity_names", "facts", "fact_episodes", "mentions",
        "entity_vectors", "fact_vectors", "episode_vectors",
    ]  # fmt: skip
    return {t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in tables}


@pytest.fixture
def v1_file(tmp_path: Path) -> Path:
    target = tmp_path / "old.db"
    shutil.copyfile(FIXTURE, target)
    return target


def test_the_fixture_is_a_schema_v1_file_without_stemming(v1_file: Path) -> None:
    with closing(sqlite3.connect(v1_file)) as conn:
        assert embedded_schema.read_version(conn) == 1
        for sql in _fts_sql(conn).values():
            assert "tokenize='unicode61 remove_diacritics 2'" in sql
        # no stemming in v1: "hiking" is not in the index of "Alice hikes every weekend"
        assert conn.execute(
            "SELECT count(*) FROM facts_fts WHERE facts_fts MATCH '\"hiking\"'"
        ).fetchone() == (0,)


async def test_opening_a_v1_file_upgrades_it_and_keeps_every_row(v1_file: Path) -> None:
    with closing(sqlite3.connect(v1_file)) as conn:
        before = _counts(conn)
        dim_before = embedded_schema.get_meta(conn, "embedding_dim")
    episodes, entities, facts = v1_records()

    async with EmbeddedStore(str(v1_file)) as store:
        await store.setup(DIM)
        for episode in episodes:
            assert await store.get_episode(GROUP, episode.uuid) == episode
        assert await store.get_entities(GROUP, [e.uuid for e in entities]) == entities
        # v4: each fact is dated by the episode that stated it
        when = {e.uuid: e.reference_time for e in episodes}
        stated = [f.model_copy(update={"stated_at": when[f.episodes[0]]}) for f in facts]
        assert await store.get_facts(GROUP, [f.uuid for f in facts]) == stated
        assert await store.stats(GROUP) == StoreStats(2, 3, 2, 1, 3)  # the shoe purchase is retired
        assert [
            h.item.uuid for h in await store.search_entities_vector([GROUP], [0.0, 1.0, 0.0, 0.0], limit=1)
        ] == [entities[0].uuid]

        # stemmed queries find the old rows: every fulltext index was rebuilt with the new tokenizer
        hiking = await store.search_facts_text([GROUP], "hiking")
        assert [h.item.uuid for h in hiking] == [facts[0].uuid]
        assert [h.item.uuid for h in await store.search_episodes_text([GROUP], "hikes")] == [episodes[0].uuid]
        assert entities[0].uuid in [h.item.uuid for h in await store.search_entities_text([GROUP], "hiked")]
        shoes = await store.search_facts_text(
            [GROUP], "buying a running shoe", flt=FactFilter(time=EVERYTHING)
        )
        assert [h.item.uuid for h in shoes] == [facts[1].uuid]

        # and the rebuilt indexes stay in step with new writes (v3: inserts indexed by the writer,
        # updates by the remaining triggers)
        newer = Episode(group_id=GROUP, content="Carol: we went climbing yesterday", reference_time=T0)
        await store.save_episode(newer)
        assert [h.item.uuid for h in await store.search_episodes_text([GROUP], "climb")] == [newer.uuid]
        renamed = entities[2].model_copy(update={"summary": "Bob sails on weekends."})
        await store.write_episode(EpisodeWrite(episode=newer, entities=[renamed]))
        assert [h.item.uuid for h in await store.search_entities_text([GROUP], "sailing")] == [renamed.uuid]
        assert await store.search_entities_text([GROUP], "shoes") == []

        # v6: an episode can be claimed
        claim = await store.claim_episode(GROUP, episodes[0].uuid, "upgraded", 60)
        assert claim is not None and claim.owner == "upgraded"
        # v8: an entity's summary can be owed, and paid
        await store.write_episode(EpisodeWrite(episode=newer, owed_summaries=[entities[0].uuid]))
        assert await store.owed_summaries(GROUP) == [entities[0].uuid]
        # v9: a retention policy can be kept; the group has no audit record of forgetting yet
        policy = RetentionPolicy(group_id=GROUP, days=30, updated_at=T0)
        await store.set_retention(policy)
        assert await store.retention_policies(GROUP) == [policy]
        assert await store.forgettings(GROUP) == []
        # v10: the redaction vault numbers placeholders
        await store.vault_header(GROUP, VaultHeader(b"salt" * 4))
        assert await store.placeholders(GROUP, [VaultEntry("phone", b"d1"), VaultEntry("phone", b"d2")]) == [
            1,
            2,
        ]
        # v11: an episode is written with its decision record, found by episode and by name
        step = Step(stage="name", act="refused", subject="Zeus", by="grounded")
        record = DecisionRecord(group_id=GROUP, episode_uuid=newer.uuid, created_at=T0, steps=(step,))
        await store.write_episode(EpisodeWrite(episode=newer, decisions=record))
        assert await store.decision_records(GROUP, [newer.uuid]) == [record]
        assert await store.decisions_naming(GROUP, "zeus") == [record]

    with closing(sqlite3.connect(v1_file)) as conn:
        assert embedded_schema.read_version(conn) == SCHEMA_VERSION == 11
        # v5: the tables of the derived records exist (and are empty)
        for table in ("communities", "community_members", "conversation_summaries"):
            assert conn.execute(f"SELECT count(*) FROM {table}").fetchone() == (0,)
        assert conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'episodes_by_chain'").fetchone()
        # v6: the claim taken on the upgraded file is stored
        assert conn.execute("SELECT owner FROM episode_claims").fetchall() == [("upgraded",)]
        # v7: the (empty) tables of corrections by hand
        for table in ("corrections", "correction_subjects"):
            assert conn.execute(f"SELECT count(*) FROM {table}").fetchone() == (0,)
        # v8: the mark owed on the upgraded file is stored
        assert conn.execute("SELECT count(*) FROM owed_summaries").fetchone() == (1,)
        # v9: the policy is stored, the audit table is empty
        assert conn.execute("SELECT group_id, days FROM retention").fetchall() == [(GROUP, 30)]
        assert conn.execute("SELECT count(*) FROM forgettings").fetchone() == (0,)
        # v10: the vault's rows, digests and no original (none was sealed)
        assert conn.execute("SELECT kind, number, sealed FROM redactions ORDER BY number").fetchall() == [
            ("phone", 1, None), ("phone", 2, None)
        ]  # fmt: skip
        # v11: the decision record written on the upgraded file is stored
        assert conn.execute("SELECT count(*) FROM decision_records").fetchone() == (1,)
        tables = ("entities", "facts", "episodes")
        assert _triggers(conn) == {f"{t}_{event}" for t in tables for event in ("fts_update", "fts_delete")}
        assert embedded_schema.get_meta(conn, "embedding_dim") == dim_before
        assert _counts(conn) == {**before, "episodes": before["episodes"] + 1}
        for sql in _fts_sql(conn).values():
            assert f"tokenize='{embedded_schema.TOKENIZER}'" in sql
        for table in FTS_TABLES:  # raises if an index disagrees with its content table
            conn.execute(f"INSERT INTO {table} ({table}, rank) VALUES ('integrity-check', 1)")


async def test_a_failed_migration_leaves_the_v1_file_untouched(v1_file: Path) -> None:
    # The upgrade fails at its very end: recording the new version in ``meta`` aborts (a trigger planted
    # in the copy), after every fulltext index was dropped and rebuilt by the v2 step.
    with closing(sqlite3.connect(v1_file)) as conn:
        conn.execute(
            "CREATE TRIGGER fail_upgrade BEFORE UPDATE ON meta WHEN new.key = 'schema_version'"
            " BEGIN SELECT RAISE(ABORT, 'disk I/O error (simulated)'); END"
        )
        conn.commit()
    async with EmbeddedStore(str(v1_file)) as store:
        with pytest.raises(StoreUnavailable):
            await store.setup(DIM)
    with closing(sqlite3.connect(v1_file)) as conn:
        assert embedded_schema.read_version(conn) == 1
        assert set(_fts_sql(conn)) == set(FTS_TABLES)
        assert conn.execute(
            "SELECT count(*) FROM facts_fts WHERE facts_fts MATCH '\"hikes\"'"
        ).fetchone() == (1,)
        assert {f"{t}_fts_insert" for t in ("entities", "facts", "episodes")} <= _triggers(conn)


def test_a_fresh_store_starts_at_the_current_version(tmp_path: Path) -> None:
    path = tmp_path / "fresh.db"
    with closing(embedded_schema.connect(str(path))) as conn:
        embedded_migrations.ensure_schema(conn)
        assert embedded_schema.read_version(conn) == SCHEMA_VERSION
        for sql in _fts_sql(conn).values():
            assert f"tokenize='{embedded_schema.TOKENIZER}'" in sql
