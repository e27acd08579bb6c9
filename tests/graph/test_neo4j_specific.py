"""Neo4j-only behaviour the store contract cannot express.

- pure: Lucene escaping and query building (no server);
- against a real server (``EPIGRAPH_NEO4J_URI``, like the contract suite): hostile fulltext input,
  schema mismatch on a dimension change, exact top-k for a small group in a bigger graph, uuids that
  collide across groups, rolled-back writes, entity rows skipped while unchanged (``row_hash``), the
  indexes of earlier versions dropped by setup, searches as of an early time answered by a seek of the
  facts begun by then, and setup giving an older graph's facts that seek's key;
- error wrapping: a closed port gives StoreUnavailable quickly, without the password in the message.
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
import re
import socket
import time
import uuid
from collections.abc import AsyncIterator, Sequence
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from epigraph.errors import SchemaMismatch, StoreError, StoreUnavailable
from epigraph.graph.model import Entity, Episode, Fact, Mention, epoch_us
from epigraph.graph.neo4j import Neo4jStore, convert, ddl
from epigraph.graph.neo4j import cypher as q
from epigraph.graph.neo4j import cypher_deletion as qdel
from epigraph.graph.neo4j import cypher_derived as qd
from epigraph.graph.neo4j import cypher_edit as qe
from epigraph.graph.neo4j import cypher_search as qs
from epigraph.graph.neo4j.lucene import (
    MAX_TERMS,
    build_query,
    escape,
    escape_term,
    exact_query,
    searchable,
    terms,
)
from epigraph.graph.neo4j.schema import FULLTEXT_SPECS, describe, fulltext_analyzer, stale_fulltext
from epigraph.graph.store import EpisodeWrite, FactFilter
from epigraph.graph.temporal import TimeFilter, matches
from epigraph.language import LUCENE_STOP_WORDS as STOP_WORDS

DIM = 384
HOSTILE = [
    'a:"b" \\ / ~ ^ * ? - + && || ! ( ) { } [ ]',
    "AND",
    "OR NOT AND",
    "name:alice^100",
    "foo~2 bar*",
    '"unclosed',
    "((((",
    "\\",
    "\x00\x01 \u200b",
    "👩‍🚀 façade 東京",
    "word " * 2000,
    "/regex/",
    "field:[a TO z]",
]


# --- pure: Lucene ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("char", list('+-&|!(){}[]^"~*?:\\/'))
def test_every_special_character_is_escaped(char: str) -> None:
    assert escape_term(f"a{char}b") == f"a\\{char}b"


@pytest.mark.parametrize("word", ["AND", "OR", "NOT"])
def test_operator_words_become_plain_terms(word: str) -> None:
    assert escape_term(word) == word.lower()
    assert escape_term(word.lower()) == word.lower()
    assert escape_term(f"{word}X") == f"{word}X"


def test_terms_drop_tokens_without_word_characters_and_duplicates() -> None:
    assert terms("!!! && alice alice -- bob?") == ["alice", "bob\\?"]
    assert escape("   ") == ""
    assert escape("( ) ~ *") == ""
    assert len(terms(" ".join(f"w{i}" for i in range(1000)))) == MAX_TERMS


def test_build_query_scopes_fields_and_groups() -> None:
    query = build_query([("name", 10.0), ("summary", 1.0)], "alice (x", ["g-1", "g:2"])
    assert query == '+(name:(alice \\(x)^10 summary:(alice \\(x)) +(group_id:"g-1" group_id:"g:2")^0'


def test_exact_query_quotes_each_value_as_a_phrase() -> None:
    query = exact_query("episodes", ['a"b\\c AND x:*', "f00d"], "g-1")
    assert query == '+(episodes:"a\\"b\\\\c AND x:*" episodes:"f00d") +(group_id:"g-1")^0'


def test_exact_query_falls_back_to_the_group_for_values_the_analyzer_erases() -> None:
    """A value of stop words or punctuation only has no term to look up: the whole group is the superset."""
    assert exact_query("episodes", ["the", "f00d"], "g-1") == 'group_id:"g-1"'
    assert exact_query("episodes", ["?!"], "the-a") == "*:*"  # the group id analyzes to nothing too
    assert exact_query("episodes", ["f00d"], "the-a") == '+(episodes:"f00d")'


def test_build_query_without_terms_or_with_unphrasable_groups() -> None:
    assert build_query([("text", 1.0)], "?? !!", ["g"]) == ""
    assert build_query([("text", 1.0)], "alice", ["---"]) == "+(text:(alice))"
    assert build_query([("text", 1.0)], "alice", []) == "+(text:(alice))"


def test_terms_drop_english_stop_words_the_analyzer_would_drop() -> None:
    assert terms("The cat AND the hat's") == ["cat", "hat's"]
    assert terms("it's THE a-of To-Be") == []  # possessives go first, as in Lucene's english analyzer
    assert terms("Alice alice ALICE don't") == ["Alice", "don't"]  # case-insensitive duplicates
    assert [searchable(t) for t in ("the", "a.b", "x-the", "²", "1", "東京", "🎉")] == [
        False, True, True, False, True, True, False
    ]  # fmt: skip
    assert len(STOP_WORDS) == 33


def test_build_query_of_stop_words_only_is_empty() -> None:
    """Lucene would parse the text clause to nothing and leave ``+(group_id:...)^0`` matching every
    document of the group with score 0; no query at all is the right answer."""
    assert build_query([("text", 1.0)], "the of a, is it?", ["g"]) == ""
    assert build_query([("text", 1.0)], "the hikes", ["g"]) == '+(text:(hikes)) +(group_id:"g")^0'


def test_build_query_leaves_the_group_clause_out_for_a_group_of_stop_words() -> None:
    assert build_query([("text", 1.0)], "alice", ["it", "g"]) == "+(text:(alice))"
    assert build_query([("text", 1.0)], "alice", ["the-a"]) == "+(text:(alice))"
    assert build_query([("text", 1.0)], "alice", ["it-1"]) == '+(text:(alice)) +(group_id:"it-1")^0'


# --- against a real server ------------------------------------------------------------------------------


def _uri() -> str:
    uri = os.environ.get("EPIGRAPH_NEO4J_URI")
    if not uri:
        if os.environ.get("CI", "").strip().lower() in ("true", "1"):
            pytest.fail("EPIGRAPH_NEO4J_URI not set (CI must run the Neo4j tests)")
        pytest.skip("EPIGRAPH_NEO4J_URI not set: run `make test` to start a real Neo4j")
    return uri


@pytest.fixture
async def store() -> AsyncIterator[Neo4jStore]:
    backend = Neo4jStore(
        uri=_uri(),
        user=os.environ.get("EPIGRAPH_NEO4J_USER", "neo4j"),
        password=os.environ.get("EPIGRAPH_NEO4J_PASSWORD") or None,
        database=os.environ.get("EPIGRAPH_NEO4J_DATABASE", "neo4j"),
    )
    try:
        await backend.setup(embedding_dim=DIM)
        yield backend
    finally:
        await backend.close()


@pytest.fixture
def group() -> str:
    return f"n-{uuid.uuid4().hex}"


def _entity(group: str, name: str, vector: list[float] | None = None, **kw: object) -> Entity:
    return Entity(group_id=group, name=name, name_embedding=vector, **kw)  # type: ignore[arg-type]


def _episode(group: str, content: str = "hello") -> Episode:
    return Episode(group_id=group, content=content, reference_time=datetime(2024, 1, 1, tzinfo=UTC))


async def _write(
    store: Neo4jStore, group: str, entities: list[Entity], facts: Sequence[Fact] = ()
) -> Episode:
    episode = _episode(group, " ".join(e.name for e in entities) or "empty")
    mentions = [Mention(group_id=group, episode_uuid=episode.uuid, entity_uuid=e.uuid) for e in entities]
    await store.write_episode(
        EpisodeWrite(episode=episode, entities=entities, facts=facts, mentions=mentions)
    )
    return episode


@pytest.mark.neo4j
async def test_hostile_fulltext_queries_never_error(store: Neo4jStore, group: str) -> None:
    alice = _entity(group, "Alice", summary="an astronaut (retired) from Tōkyō AND Paris")
    await _write(store, group, [alice])
    for text in HOSTILE:
        await store.search_entities_text([group], text)
        await store.search_facts_text([group], text)
        await store.search_episodes_text([group], text)
    hits = await store.search_entities_text([group], 'astronaut:"(retired)" AND ~')
    assert [h.item.uuid for h in hits] == [alice.uuid]


@pytest.mark.neo4j
async def test_group_ids_are_matched_exactly_not_by_tokens(store: Neo4jStore, group: str) -> None:
    near = f"x-{group}"  # the analyzer would split both ids into overlapping tokens
    await _write(store, near, [_entity(near, "Zanzibar")])
    await _write(store, group, [_entity(group, "Zanzibar")])
    hits = await store.search_entities_text([group], "zanzibar")
    assert [h.item.group_id for h in hits] == [group]


@pytest.mark.neo4j
async def test_dimension_change_with_stored_vectors_is_a_schema_mismatch(
    store: Neo4jStore, group: str
) -> None:
    await _write(store, group, [_entity(group, "Vec", [1.0] * DIM)])
    with pytest.raises(SchemaMismatch, match="dimensions"):
        await store.setup(embedding_dim=DIM + 1)
    await store.setup(embedding_dim=DIM)  # unchanged dimension: still fine


@pytest.mark.neo4j
async def test_wrong_dimension_in_a_write_is_rejected(store: Neo4jStore, group: str) -> None:
    with pytest.raises(StoreError, match="dimension"):
        await _write(store, group, [_entity(group, "Short", [1.0, 2.0])])
    assert (await store.stats(group)).entities == 0


@pytest.mark.neo4j
async def test_small_group_gets_exact_top_k_in_a_crowded_index(
    store: Neo4jStore, group: str, caplog: pytest.LogCaptureFixture
) -> None:
    rng = np.random.default_rng(7)
    crowd = f"crowd-{uuid.uuid4().hex}"
    query = rng.normal(size=DIM)
    # The crowd sits right on the query, so the index's candidates are all outside `group`.
    near = [(query + rng.normal(scale=0.01, size=DIM)).tolist() for _ in range(300)]
    await _write(store, crowd, [_entity(crowd, f"c{i}", v) for i, v in enumerate(near)])
    mine = [rng.normal(size=DIM).tolist() for _ in range(12)]
    entities = [_entity(group, f"m{i}", v) for i, v in enumerate(mine)]
    await _write(store, group, entities)
    with caplog.at_level(logging.DEBUG, logger="epigraph.neo4j"):
        hits = await store.search_entities_vector([group], query.tolist(), limit=5)
    assert [r.getMessage() for r in caplog.records] == [
        f"vector search on {q.ENTITY_VECTOR_INDEX}: exact scan of 1 group(s), 10 hit(s)"
    ]  # the index had only the crowd to offer: the scan answered (limit + RESCORE_MARGIN rows)
    caplog.clear()
    with caplog.at_level(logging.DEBUG, logger="epigraph.neo4j"):
        assert len(await store.search_entities_vector([crowd], query.tolist(), limit=5)) == 5
    assert not caplog.records  # the crowd's own search: the index answered
    matrix = np.asarray(mine)
    cos = matrix @ query / (np.linalg.norm(matrix, axis=1) * np.linalg.norm(query))
    expected = [entities[i].uuid for i in np.argsort(-cos)[:5]]
    assert [h.item.uuid for h in hits] == expected
    assert [h.score for h in hits] == pytest.approx(sorted(cos, reverse=True)[:5])


T0 = datetime(2024, 1, 1, tzinfo=UTC)


async def _dated_facts_beside_a_crowd(store: Neo4jStore, group: str) -> tuple[list[Fact], np.ndarray]:
    """12 facts in ``group`` (stated and recorded on day i; every third without valid_at, so begun when
    stated, the others begun on day i; one undated fact also stated nowhere: begun at any time) and, in
    another group, a crowd of facts right on the returned query vector: the index offers only the crowd,
    so a search of ``group`` is answered by the exact scan."""
    rng = np.random.default_rng(11)
    query = rng.normal(size=DIM)
    crowd = f"crowd-{uuid.uuid4().hex}"
    x, y = _entity(crowd, "x"), _entity(crowd, "y")
    near = [
        Fact(group_id=crowd, source_uuid=x.uuid, target_uuid=y.uuid, relation="NEAR", text=f"crowd {i}",
             text_embedding=(query + rng.normal(scale=0.01, size=DIM)).tolist())
        for i in range(120)
    ]  # fmt: skip
    await _write(store, crowd, [x, y], near)
    a, b = _entity(group, "a"), _entity(group, "b")
    mine = [
        Fact(group_id=group, source_uuid=a.uuid, target_uuid=b.uuid, relation="SAID", text=f"fact {i}",
             text_embedding=rng.normal(size=DIM).tolist(),
             valid_at=None if i % 3 == 0 else T0 + timedelta(days=i), created_at=T0 + timedelta(days=i),
             stated_at=None if i == 3 else T0 + timedelta(days=i))
        for i in range(12)
    ]  # fmt: skip
    await _write(store, group, [a, b], mine)
    return mine, query


def _best(facts: list[Fact], query: np.ndarray, limit: int) -> list[str]:
    if not facts:
        return []
    matrix = np.asarray([f.text_embedding for f in facts])
    cos = matrix @ query / (np.linalg.norm(matrix, axis=1) * np.linalg.norm(query))
    return [facts[i].uuid for i in np.argsort(-cos)[:limit]]


async def _as_of_searches(store: Neo4jStore, group: str, mine: list[Fact], query: np.ndarray) -> None:
    """Searches as of several times, each answered by the exact scan and equal to brute force."""
    day_5, before = T0 + timedelta(days=5.5), T0 - timedelta(days=1)
    now = datetime.now(UTC)
    for time_filter in (
        TimeFilter(as_of=day_5),
        TimeFilter(as_of=before),
        TimeFilter(as_of=before, include_retired=True),
    ):
        valid = [f for f in mine if matches(f, time_filter, now)]
        hits = await store.search_facts_vector([group], query.tolist(), 5, FactFilter(time=time_filter))
        assert [h.item.uuid for h in hits] == _best(valid, query, 5), time_filter
    # the undated fact stated on day 0 has begun by day 5 and not before; the one stated nowhere, always
    assert [f.uuid for f in mine if matches(f, TimeFilter(as_of=before), now)] == [mine[3].uuid]


async def _known_at_searches(store: Neo4jStore, group: str, mine: list[Fact], query: np.ndarray) -> None:
    """Searches of what was known at several times, each answered by the exact scan, equal to brute force."""
    day_3, day_5, before = T0 + timedelta(days=3.5), T0 + timedelta(days=5.5), T0 - timedelta(days=1)
    cases = [
        (TimeFilter(known_at=day_5), [f for f in mine if f.created_at <= day_5]),
        (TimeFilter(known_at=before), []),
        (TimeFilter(known_at=day_5, as_of=day_3),
         [f for f in mine if f.created_at <= day_5 and (f.valid_at is None or f.valid_at <= day_3)]),
    ]  # fmt: skip
    for time_filter, known in cases:
        hits = await store.search_facts_vector([group], query.tolist(), 5, FactFilter(time=time_filter))
        assert [h.item.uuid for h in hits] == _best(known, query, 5), time_filter


def _explain_params(group: str, query: np.ndarray) -> dict[str, object]:
    return {"group_ids": [group], "vector": query.tolist(), "start_max": 0, "known_from_max": 0,
            "limit": 5, "cap": 10, "include_retired": False, "as_of": T0, "known_at": T0,
            "relations": None}  # fmt: skip


async def _assert_seeks(store: Neo4jStore, statements: Sequence[str], bound: str, params: dict) -> None:
    """Each statement's plan scans nothing and seeks ``bound`` in an index."""
    driver = await store._conn.driver()
    for statement in statements:
        async with driver.session(database=store._conn.database) as session:
            summary = await (await session.run("EXPLAIN " + statement, params)).consume()
        assert summary.plan is not None
        operators = _operators(summary.plan)
        assert not [op for op in operators if "Scan" in op], operators
        seeks = [d for op, d in _details(summary.plan) if "Seek" in op]
        assert [d for d in seeks if bound in d], seeks  # the bound is sought


@pytest.mark.neo4j
async def test_a_search_as_of_an_early_time_seeks_the_facts_begun_by_then(
    store: Neo4jStore, group: str, caplog: pytest.LogCaptureFixture
) -> None:
    mine, query = await _dated_facts_beside_a_crowd(store, group)
    with caplog.at_level(logging.DEBUG, logger="epigraph.neo4j"):
        await _as_of_searches(store, group, mine, query)
    messages = [r.getMessage() for r in caplog.records]
    assert len([m for m in messages if "exact scan" in m]) == 3, messages
    # as of a chosen time, 12 facts at most: the scan answers without asking the index; with retired
    # facts included, the index is asked first (it offers only the crowd)
    assert len([m for m in messages if "the index is skipped" in m]) == 2, messages
    bound = "start_us <= $start_max"
    await _assert_seeks(
        store, (qs.SCAN_FACTS_VECTOR, qs.COUNT_FACTS_BEGUN), bound, _explain_params(group, query)
    )


@pytest.mark.neo4j
async def test_a_search_of_what_was_known_early_seeks_the_facts_recorded_by_then(
    store: Neo4jStore, group: str, caplog: pytest.LogCaptureFixture
) -> None:
    mine, query = await _dated_facts_beside_a_crowd(store, group)
    with caplog.at_level(logging.DEBUG, logger="epigraph.neo4j"):
        await _known_at_searches(store, group, mine, query)
    messages = [r.getMessage() for r in caplog.records]
    assert len([m for m in messages if "the index is skipped" in m]) == 3, messages
    statements = (qs.SCAN_FACTS_KNOWN_VECTOR, qs.COUNT_FACTS_KNOWN)
    await _assert_seeks(store, statements, "known_from_us <= $known_from_max", _explain_params(group, query))


@pytest.mark.neo4j
async def test_setup_gives_facts_of_an_older_graph_their_time_keys(store: Neo4jStore, group: str) -> None:
    mine, query = await _dated_facts_beside_a_crowd(store, group)
    conn = store._conn
    # a graph written before the as-of indexes: no index, no keys
    strip = "MATCH ()-[r:RELATES_TO {group_id: $g}]->() REMOVE r.start_us, r.known_from_us"
    await conn.run_write(strip, {"g": group})
    for index in (ddl.FACT_START_INDEX, ddl.FACT_KNOWN_FROM_INDEX):
        await conn.run_write(ddl.DROP_INDEX, {"name": index})
        assert index not in await describe(conn)
    await store.setup(embedding_dim=DIM)
    existing = await describe(conn)
    assert existing[ddl.FACT_START_INDEX]["state"] == existing[ddl.FACT_KNOWN_FROM_INDEX]["state"] == "ONLINE"
    keys = (
        "MATCH ()-[r:RELATES_TO {group_id: $g}]->() "
        "RETURN r.uuid AS uuid, r.start_us AS start, r.known_from_us AS known"
    )
    stored = {r["uuid"]: (r["start"], r["known"]) for r in await conn.read(keys, {"g": group})}
    assert stored == {f.uuid: (convert.start_us(f), epoch_us(f.created_at)) for f in mine}
    assert [uuid for uuid, (start, _) in stored.items() if start == qs.START_UNBOUNDED] == [mine[3].uuid]
    await _as_of_searches(store, group, mine, query)
    await _known_at_searches(store, group, mine, query)


@pytest.mark.neo4j
async def test_setup_dates_the_undated_facts_of_an_older_graph_by_their_first_episode(
    store: Neo4jStore, group: str
) -> None:
    """A graph written before stated_at and start_us (its undated facts keyed as begun at any time, under
    valid_from_us): setup dates each fact by the earliest of its stored episodes, and keys it from that."""
    a, b = _entity(group, "a"), _entity(group, "b")
    later = Episode(group_id=group, content="b", reference_time=T0 + timedelta(days=30))
    first = await _write(store, group, [a, b])  # reference time T0
    await store.write_episode(EpisodeWrite(episode=later))
    undated = Fact(group_id=group, source_uuid=a.uuid, target_uuid=b.uuid, relation="SAID", text="undated",
                   episodes=[later.uuid, first.uuid, "never-stored"])  # fmt: skip
    ended = Fact(group_id=group, source_uuid=a.uuid, target_uuid=b.uuid, relation="SAID", text="ended before",
                 episodes=[later.uuid], invalid_at=T0)  # fmt: skip
    orphan = Fact(group_id=group, source_uuid=a.uuid, target_uuid=b.uuid, relation="SAID", text="unstated",
                  episodes=["never-stored"])  # fmt: skip
    dated = Fact(group_id=group, source_uuid=a.uuid, target_uuid=b.uuid, relation="SAID", text="dated",
                 episodes=[later.uuid], valid_at=T0 - timedelta(days=9))  # fmt: skip
    facts = [undated, ended, orphan, dated]
    await store.write_episode(EpisodeWrite(episode=first, facts=facts))
    conn = store._conn
    old = (
        "MATCH ()-[r:RELATES_TO {group_id: $g}]->() REMOVE r.start_us, r.stated_at "
        "SET r.valid_from_us = coalesce(r.valid_at.epochSeconds * 1000000, $unbounded)"
    )
    await conn.run_write(old, {"g": group, "unbounded": qs.START_UNBOUNDED})
    await conn.run_write(ddl.DROP_INDEX, {"name": ddl.FACT_START_INDEX})
    await conn.run_write(
        "CREATE INDEX epigraph_fact_valid_from FOR ()-[r:RELATES_TO]-() ON (r.group_id, r.valid_from_us)"
    )
    await store.setup(embedding_dim=DIM)
    assert "epigraph_fact_valid_from" not in await describe(conn)
    migrated = {f.uuid: f for f in await store.get_facts(group, [f.uuid for f in facts])}
    assert migrated[undated.uuid].stated_at == T0  # the earliest stored episode, not the first listed
    assert migrated[ended.uuid].stated_at == later.reference_time
    assert migrated[orphan.uuid].stated_at is None
    assert migrated[dated.uuid].stated_at == later.reference_time
    keys = (
        "MATCH ()-[r:RELATES_TO {group_id: $g}]->() "
        "RETURN r.uuid AS uuid, r.start_us AS start, r.valid_from_us AS old"
    )
    rows = await conn.read(keys, {"g": group})
    assert {r["uuid"]: r["start"] for r in rows} == {u: convert.start_us(f) for u, f in migrated.items()}
    assert {r["old"] for r in rows} == {None}
    assert convert.start_us(migrated[undated.uuid]) == epoch_us(T0)
    open_starts = {convert.start_us(migrated[ended.uuid]), convert.start_us(migrated[orphan.uuid])}
    assert open_starts == {qs.START_UNBOUNDED}
    early = FactFilter(time=TimeFilter(as_of=T0 - timedelta(days=1)))
    found = await store.facts_around(group, [a.uuid], early)
    assert {f.uuid for f in found} == {ended.uuid, orphan.uuid, dated.uuid}


@pytest.mark.neo4j
async def test_same_uuid_in_two_groups_names_two_things(store: Neo4jStore, group: str) -> None:
    other = f"o-{uuid.uuid4().hex}"
    shared = str(uuid.uuid4())
    await _write(store, group, [Entity(uuid=shared, group_id=group, name="Mine")])
    await _write(store, other, [Entity(uuid=shared, group_id=other, name="Theirs")])
    assert [e.name for e in await store.get_entities(group, [shared])] == ["Mine"]
    assert [e.name for e in await store.get_entities(other, [shared])] == ["Theirs"]


@pytest.mark.neo4j
async def test_a_fact_to_a_missing_entity_rolls_the_whole_write_back(store: Neo4jStore, group: str) -> None:
    a = _entity(group, "A")
    fact = Fact(
        group_id=group, source_uuid=a.uuid, target_uuid=str(uuid.uuid4()), relation="KNOWS", text="A knows ?"
    )
    with pytest.raises(StoreError, match="missing"):
        await _write(store, group, [a], [fact])
    stats = await store.stats(group)
    assert (stats.episodes, stats.entities, stats.facts) == (0, 0, 0)


@pytest.mark.neo4j
async def test_closed_store_raises_store_unavailable(group: str) -> None:
    backend = Neo4jStore(uri=_uri(), password=os.environ.get("EPIGRAPH_NEO4J_PASSWORD") or None)
    await backend.stats(group)
    await backend.close()
    await backend.close()
    with pytest.raises(StoreUnavailable, match="closed"):
        await backend.stats(group)


# --- error wrapping (no server needed) -----------------------------------------------------------------


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_closed_port_is_store_unavailable_quickly_without_the_password() -> None:
    secret = "s3cret-Passw0rd"
    store = Neo4jStore(f"bolt://127.0.0.1:{_closed_port()}", password=secret)
    started = time.monotonic()
    with pytest.raises(StoreUnavailable) as caught:
        await asyncio.wait_for(store.get_episode("g", "x"), timeout=20)
    assert time.monotonic() - started < 10
    assert secret not in str(caught.value)
    assert "127.0.0.1" in str(caught.value)
    await store.close()


@pytest.mark.neo4j
async def test_entities_by_names_uses_the_entity_index_for_any_name(store: Neo4jStore, group: str) -> None:
    """Names are looked up by hash, so huge names (over Lucene's 32 kB term limit) and quotes work too."""
    huge = "Ω" * 20_000  # 40 kB of UTF-8
    quoted = 'He said "hi" \\ there'
    entities = [_entity(group, huge), _entity(group, quoted, aliases=["Q"])]
    await _write(store, group, entities)
    found = await store.entities_by_names(group, [huge.lower(), f"  {quoted.upper()}  ", "q", "nobody"])
    assert [e.uuid for e in found[huge.lower()]] == [entities[0].uuid]
    assert [e.uuid for e in found[f"  {quoted.upper()}  "]] == [entities[1].uuid]
    assert [e.uuid for e in found["q"]] == [entities[1].uuid]
    assert found["nobody"] == []
    many = [f"name {i}" for i in range(1000)]  # more names than one Lucene query may hold
    assert (await store.entities_by_names(group, [*many, "Q"]))["Q"] == [entities[1]]


@pytest.mark.neo4j
async def test_three_english_fulltext_indexes_carry_the_exact_lookup_fields(store: Neo4jStore) -> None:
    existing = await describe(store._conn)
    fulltext = sorted(name for name, info in existing.items() if info["type"] == "FULLTEXT")
    assert fulltext == sorted(FULLTEXT_SPECS)
    for name in fulltext:
        assert fulltext_analyzer(existing[name]) == "english"
    assert "name_keys" in existing[q.ENTITY_TEXT_INDEX]["properties"]
    assert "episodes" in existing[q.FACT_TEXT_INDEX]["properties"]
    assert stale_fulltext(existing) == []


@pytest.mark.neo4j
async def test_setup_migrates_the_fulltext_indexes_of_older_graphs(store: Neo4jStore, group: str) -> None:
    """Older graphs had unstemmed text indexes, and keyword twins for names and provenance: setup drops
    the twins and rebuilds the text indexes with their analyzer and the exact-lookup fields."""
    conn = store._conn
    alice = _entity(group, "Alice")
    episode = _episode(group, "Alice hikes")
    hikes = Fact(
        group_id=group,
        source_uuid=alice.uuid,
        target_uuid=alice.uuid,
        relation="HIKES",
        text="Alice hikes",
        episodes=[episode.uuid],
    )
    mention = Mention(group_id=group, episode_uuid=episode.uuid, entity_uuid=alice.uuid)
    await store.write_episode(
        EpisodeWrite(episode=episode, entities=[alice], facts=[hikes], mentions=[mention])
    )
    keyword = "OPTIONS {indexConfig: {`fulltext.analyzer`: 'keyword'}}"
    old = {
        q.FACT_TEXT_INDEX: "CREATE FULLTEXT INDEX epigraph_fact_text FOR ()-[r:RELATES_TO]-() "
        "ON EACH [r.text, r.group_id]",  # the default analyzer: no stemming
        q.ENTITY_TEXT_INDEX: "CREATE FULLTEXT INDEX epigraph_entity_text FOR (n:Entity) "
        "ON EACH [n.name, n.aliases, n.summary, n.group_id] "
        "OPTIONS {indexConfig: {`fulltext.analyzer`: 'english'}}",
        "epigraph_entity_names": "CREATE FULLTEXT INDEX epigraph_entity_names FOR (n:Entity) "
        f"ON EACH [n.name_keys, n.group_id] {keyword}",
        "epigraph_fact_episodes": "CREATE FULLTEXT INDEX epigraph_fact_episodes FOR ()-[r:RELATES_TO]-() "
        f"ON EACH [r.episodes, r.group_id] {keyword}",
    }
    try:
        for name, statement in old.items():
            await conn.run_write(ddl.DROP_INDEX, {"name": name})
            await conn.run_write(statement)
        await conn.run_write(ddl.AWAIT_INDEXES, {"timeout": 300})
        assert sorted(stale_fulltext(await describe(conn))) == sorted(
            [q.FACT_TEXT_INDEX, q.ENTITY_TEXT_INDEX]
        )
        assert await store.search_facts_text([group], "hiking") == []  # unstemmed

        await store.setup(embedding_dim=DIM)
        existing = await describe(conn)
        assert stale_fulltext(existing) == []
        assert "epigraph_entity_names" not in existing and "epigraph_fact_episodes" not in existing
        assert [h.item.uuid for h in await store.search_facts_text([group], "hiking")] == [hikes.uuid]
        assert [e.uuid for e in (await store.entities_by_names(group, ["alice"]))["alice"]] == [alice.uuid]
        assert (await store.delete_episode(group, episode.uuid)).removed_facts == [hikes.uuid]
        await store.setup(embedding_dim=DIM)  # and now nothing to do
    finally:
        for name in ("epigraph_entity_names", "epigraph_fact_episodes"):
            await conn.run_write(ddl.DROP_INDEX, {"name": name})
        await store.setup(embedding_dim=DIM)  # never leave a wrong index to the tests that follow


@pytest.mark.neo4j
async def test_a_query_of_stop_words_only_finds_nothing(store: Neo4jStore, group: str) -> None:
    who = _entity(group, "The Who", summary="it is what it is")
    fact = Fact(group_id=group, source_uuid=who.uuid, target_uuid=who.uuid, relation="IS", text="this is it")
    await _write(store, group, [who], [fact])
    for text in ("the", "The a OF", "it's", "and or not", "to-be", "? the !"):
        assert await store.search_entities_text([group], text) == [], text
        assert await store.search_facts_text([group], text) == [], text
        assert await store.search_episodes_text([group], text) == [], text
    assert [h.item.uuid for h in await store.search_entities_text([group], "the who")] == [who.uuid]


@pytest.mark.neo4j
async def test_a_group_id_of_stop_words_is_searched_like_any_other(store: Neo4jStore, group: str) -> None:
    """Its phrase analyzes to nothing: the group clause must go, not silently drop that group."""
    rng = random.Random(uuid.uuid4().int)
    stop_group = "-".join(rng.choice(sorted(STOP_WORDS)) for _ in range(10))
    mine, theirs = _entity(group, "Zanzibar"), _entity(stop_group, "Zanzibar")
    await _write(store, group, [mine])
    await _write(store, stop_group, [theirs])
    both = await store.search_entities_text([stop_group, group], "zanzibar")
    assert sorted(h.item.uuid for h in both) == sorted([mine.uuid, theirs.uuid])
    assert [h.item.uuid for h in await store.search_entities_text([stop_group], "zanzibar")] == [theirs.uuid]


# --- entity rows: only changed ones are written -----------------------------------------------------------
def test_an_entity_row_hash_changes_with_every_field_it_sets() -> None:
    base = Entity(
        group_id="g",
        name="Ada",
        aliases=["A"],
        labels=["Person"],
        summary="s",
        attributes={"k": 1},
        name_embedding=[0.1, 0.2],
        created_at=datetime(2024, 1, 1, tzinfo=UTC),
    )
    variants = [
        base.model_copy(update={"name": "Ada L"}),
        base.model_copy(update={"aliases": ["A", "Lovelace"]}),
        base.model_copy(update={"labels": ["Scientist"]}),
        base.model_copy(update={"summary": "s2"}),
        base.model_copy(update={"attributes": {"k": 2}}),
        base.model_copy(update={"name_embedding": [0.1, 0.2000001]}),
        base.model_copy(update={"name_embedding": None}),
        base.model_copy(update={"created_at": datetime(2024, 1, 2, tzinfo=UTC)}),
        base.model_copy(update={"group_id": "h"}),
        base.model_copy(update={"uuid": str(uuid.uuid4())}),
    ]
    digest = convert.entity_row_hash(base)
    assert convert.entity_row_hash(base.model_copy()) == digest
    assert convert.entity_row(base, digest)["props"]["row_hash"] == digest
    hashes = {convert.entity_row_hash(v) for v in variants}
    assert digest not in hashes and len(hashes) == len(variants)


async def _tamper(store: Neo4jStore, group: str, entity: Entity, statement: str) -> None:
    await store._conn.run_write(
        f"MATCH (e:Entity {{group_id: $group_id, uuid: $uuid}}) {statement}",
        {"group_id": group, "uuid": entity.uuid},
    )


@pytest.mark.neo4j
async def test_an_unchanged_entity_is_not_rewritten_and_a_changed_one_is(
    store: Neo4jStore, group: str
) -> None:
    """Edits made behind the store's back show which rows a write sent: an unchanged entity's node is
    left alone (the edit survives), a changed one, or one stored before row hashes existed, is rewritten."""
    ada = _entity(group, "Ada", [1.0] + [0.0] * (DIM - 1), summary="first")
    await _write(store, group, [ada])
    await _tamper(store, group, ada, "SET e.summary = 'edited'")
    await _write(store, group, [ada])
    assert [e.summary for e in await store.get_entities(group, [ada.uuid])] == ["edited"]

    moved = ada.model_copy(update={"name_embedding": [0.0, 1.0] + [0.0] * (DIM - 2)})
    await _write(store, group, [moved])
    [stored] = await store.get_entities(group, [ada.uuid])
    assert (stored.summary, stored.name_embedding) == ("first", moved.name_embedding)
    hits = await store.search_entities_vector([group], [0.0, 1.0] + [0.0] * (DIM - 2), 1)
    assert [(h.item.uuid, round(h.score, 6)) for h in hits] == [(ada.uuid, 1.0)]

    await _tamper(store, group, moved, "SET e.summary = 'old', e.row_hash = null")
    await _write(store, group, [moved])
    assert [e.summary for e in await store.get_entities(group, [ada.uuid])] == ["first"]


@pytest.mark.neo4j
async def test_setup_drops_the_indexes_earlier_versions_created(store: Neo4jStore) -> None:
    conn = store._conn
    for statement in (
        "CREATE INDEX epigraph_fact_valid_at FOR ()-[r:RELATES_TO]-() ON (r.valid_at)",
        "CREATE INDEX epigraph_mention_group FOR ()-[m:MENTIONS]-() ON (m.group_id)",
    ):
        await conn.run_write(statement)
    assert {"epigraph_fact_valid_at", "epigraph_mention_group"} <= set(await describe(conn))
    await store.setup(embedding_dim=DIM)
    assert not set(ddl.OBSOLETE_INDEXES) & set(await describe(conn))


# --- vectors: cosine is defined for finite, non-zero vectors ------------------------------------------
@pytest.mark.parametrize(
    ("vector", "dim"),
    [
        ([0.5, -1.0, 2.0], 3),
        ([1e308, 1e308], 2),  # finite values whose sum overflows: the exact check decides
        ([0.0, 1e-300], 2),
        ([0.0, 0.0], None),
        ([float("nan"), 1.0], None),
        ([1.0, float("inf")], None),
        ([float("inf"), float("-inf")], None),
        ([], None),
    ],
)
def test_an_embedding_is_stored_with_its_dimension_only_when_cosine_is_defined(
    vector: list[float], dim: int | None
) -> None:
    stored, stored_dim = convert._embedding(vector)
    assert (stored, stored_dim) == (vector, dim)  # the same float objects, so NaN compares equal here
    assert convert.cosine_dim(vector) == dim
    assert repr(stored) == f"<vector of {len(vector)} floats>"


# --- plans: every key lookup is an index seek, whatever the graph's statistics ------------------------------
def _operators(plan: dict) -> list[str]:
    """Every operator of an EXPLAIN plan (``summary.plan``), without the ``@database`` suffix."""
    own = plan["operatorType"].split("@")[0]
    return [own, *(op for child in plan.get("children", []) for op in _operators(child))]


def _details(plan: dict) -> list[tuple[str, str]]:
    """(operator, its ``Details``: e.g. an index seek's predicates) of every operator of an EXPLAIN plan."""
    own = (plan["operatorType"].split("@")[0], str(plan.get("args", {}).get("Details", "")))
    return [own, *(pair for child in plan.get("children", []) for pair in _details(child))]


_HINTED_STATEMENTS = {
    name: value
    for module in (q, qs, qd, qe, qdel)
    for name, value in vars(module).items()
    if name.isupper() and not name.startswith("_") and isinstance(value, str) and "INDEX SEEK" in value
}
_HINTED = sorted(_HINTED_STATEMENTS)
_LIST_PARAMS = {"uuids", "frontier", "seen", "removed", "relations", "labels", "group_ids"}


def test_the_write_statements_keep_their_plan() -> None:
    assert {"WRITE_EPISODE", "UNCHANGED_ENTITIES", "SCAN_FACTS_VECTOR", "COUNT_FACTS_KNOWN"} <= set(_HINTED)
    assert {"MENTIONS_OF", "FACTS_TOUCHING", "DELETE_ENTITIES", "GET_CORRECTION"} <= set(_HINTED)
    assert q.WRITE_EPISODE.startswith(q._FIXED_PLAN) and q.UNCHANGED_ENTITIES.startswith(q._FIXED_PLAN)


@pytest.mark.neo4j
@pytest.mark.parametrize("name", _HINTED)
async def test_every_key_lookup_is_an_index_seek(store: Neo4jStore, name: str) -> None:
    """Planned afresh on the server as it is now: no label, type or index scan anywhere (on a young graph
    the planner used to scan the whole key index once per row), and a seek for every hint."""
    statement = _HINTED_STATEMENTS[name]
    params: dict[str, object] = {
        p: [] if p in _LIST_PARAMS else "x" for p in re.findall(r"\$(\w+)", statement)
    }
    params.update(rows={}, include_retired=False, as_of=None, known_at=None, limit=10, cap=10, window=2)
    params.update(vector=[0.5] * DIM, start_max=0, known_from_max=0, facts=[])
    driver = await store._conn.driver()
    replanned = "CYPHER replan=force EXPLAIN " + statement.removeprefix(q._FIXED_PLAN)
    async with driver.session(database=store._conn.database) as session:
        summary = await (await session.run(replanned, params)).consume()
    assert summary.plan is not None
    operators = _operators(summary.plan)
    assert not [op for op in operators if "Scan" in op], operators
    assert len([op for op in operators if "Seek" in op]) >= statement.count("INDEX SEEK"), operators


@pytest.mark.neo4j
@pytest.mark.parametrize("name", ["DELETE_SOLE_FACTS", "DETACH_FROM_FACTS"])
async def test_delete_episode_finds_its_facts_through_the_provenance_index(
    store: Neo4jStore, name: str
) -> None:
    """Not by reading every fact of the group: the plan asks the fact index and touches no other index."""
    query = exact_query(q.FACT_EPISODES_FIELD, ["u"], "g")
    params = {"group_id": "g", "uuid": "u", "index": q.FACT_TEXT_INDEX, "query": query}
    driver = await store._conn.driver()
    async with driver.session(database=store._conn.database) as session:
        summary = await (await session.run("EXPLAIN " + getattr(qdel, name), params)).consume()
    assert summary.plan is not None
    operators = _operators(summary.plan)
    assert "ProcedureCall" in operators, operators
    assert not [op for op in operators if "Scan" in op or "Seek" in op], operators
