"""Neo4j-only behaviour the store contract cannot express.

- pure: Lucene escaping and query building (no server);
- against a real server (``EPIGRAPH_NEO4J_URI``, like the contract suite): hostile fulltext input,
  schema mismatch on a dimension change, exact top-k for a small group in a bigger graph, uuids that
  collide across groups, and rolled-back writes;
- error wrapping: a closed port gives StoreUnavailable quickly, without the password in the message.
"""

from __future__ import annotations

import asyncio
import os
import socket
import time
import uuid
from collections.abc import AsyncIterator, Sequence
from datetime import UTC, datetime

import numpy as np
import pytest

from epigraph.errors import SchemaMismatch, StoreError, StoreUnavailable
from epigraph.graph.model import Entity, Episode, Fact, Mention
from epigraph.graph.neo4j import Neo4jStore
from epigraph.graph.neo4j.lucene import MAX_TERMS, build_query, escape, escape_term, terms
from epigraph.graph.store import EpisodeWrite

DIM = 8
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


def test_build_query_without_terms_or_with_unphrasable_groups() -> None:
    assert build_query([("text", 1.0)], "?? !!", ["g"]) == ""
    assert build_query([("text", 1.0)], "alice", ["---"]) == "+(text:(alice))"
    assert build_query([("text", 1.0)], "alice", []) == "+(text:(alice))"


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
async def test_small_group_gets_exact_top_k_in_a_crowded_index(store: Neo4jStore, group: str) -> None:
    rng = np.random.default_rng(7)
    crowd = f"crowd-{uuid.uuid4().hex}"
    query = rng.normal(size=DIM)
    # The crowd sits right on the query, so the index's candidates are all outside `group`.
    near = [(query + rng.normal(scale=0.01, size=DIM)).tolist() for _ in range(300)]
    await _write(store, crowd, [_entity(crowd, f"c{i}", v) for i, v in enumerate(near)])
    mine = [rng.normal(size=DIM).tolist() for _ in range(12)]
    entities = [_entity(group, f"m{i}", v) for i, v in enumerate(mine)]
    await _write(store, group, entities)
    hits = await store.search_entities_vector([group], query.tolist(), limit=5)
    matrix = np.asarray(mine)
    cos = matrix @ query / (np.linalg.norm(matrix, axis=1) * np.linalg.norm(query))
    expected = [entities[i].uuid for i in np.argsort(-cos)[:5]]
    assert [h.item.uuid for h in hits] == expected
    assert [h.score for h in hits] == pytest.approx(sorted(cos, reverse=True)[:5])


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
async def test_entities_by_names_uses_the_keyword_index_for_any_name(store: Neo4jStore, group: str) -> None:
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
