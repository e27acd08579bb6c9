"""The fault bench's view of a group's graph: snapshots without generated ids (names and times), the
checks a state reached by a crash must pass (nothing of an episode that is not done, no done episode
without its writes, no duplicate, no dangling endpoint; SQLite's own ``integrity_check``, and Cypher
queries of our own on Neo4j), and the reference: the graph after each prefix of the episodes.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Callable
from contextlib import aclosing
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from bench.robustness.fault_child import OPTIONS, ingest, read_rows
from epigraph import KnowledgeGraph, Settings
from epigraph.client import store_from_settings
from epigraph.graph.model import Entity, Episode, EpisodeStatus, Fact, Mention
from epigraph.graph.store import GraphStore


def label_of(when: datetime, content: str) -> str:
    """An episode named by its time and text (its uuid differs between runs of other groups)."""
    return f"{when.isoformat()} {content}"


@dataclass
class Snapshot:
    """A group's graph without ids: done episodes (labels, in time order), entities (name, summary),
    facts (endpoints by name, text, times, supporting and retiring episodes by label), mentions; and
    what no state reached by a crash may hold (``half_written``: a record of an episode that is not
    done, a done episode without its mentions, an entity no done episode mentions; ``dangling``: a fact
    or mention whose endpoint is missing)."""

    statuses: Counter[str]
    done: list[str]
    entities: list[tuple[Any, ...]]
    facts: list[tuple[Any, ...]]
    mentions: list[tuple[str, str]]
    half_written: list[str]
    dangling: list[str]

    def graph(self) -> tuple[Any, ...]:
        return (self.done, self.entities, self.facts, self.mentions)

    def duplicates(self) -> list[str]:
        """Two copies of one entity (a name twice) or of one fact (same ends, text and start)."""
        names = Counter(e[0] for e in self.entities)
        keys = Counter(f[:5] for f in self.facts)
        return [f"entity {n!r} x{c}" for n, c in names.items() if c > 1] + [
            f"fact {k!r} x{c}" for k, c in keys.items() if c > 1
        ]


async def snapshot(store: GraphStore, group: str) -> Snapshot:
    eps: list[Episode] = []
    ents: dict[str, Entity] = {}
    facts: list[Fact] = []
    mentions: list[Mention] = []
    async with aclosing(store.dump([group])) as records:
        async for item in records:
            if isinstance(item, Episode):
                eps.append(item)
            elif isinstance(item, Entity):
                ents[item.uuid] = item
            elif isinstance(item, Fact):
                facts.append(item)
            elif isinstance(item, Mention):
                mentions.append(item)
    label = {e.uuid: label_of(e.reference_time, e.content) for e in eps}
    done = {e.uuid for e in eps if e.status == EpisodeStatus.DONE}
    half: list[str] = []
    dangling: list[str] = []

    def name(uuid: str) -> str:
        if uuid not in ents:
            dangling.append(f"entity {uuid} is missing")
            return f"<missing {uuid}>"
        return ents[uuid].name

    def episode(uuid: str, what: str) -> str:
        if uuid not in done:
            half.append(f"{what} names episode {label.get(uuid, uuid)!r}, which is not done")
        return label.get(uuid, f"<missing {uuid}>")

    def when(t: datetime | None) -> str | None:
        return t.isoformat() if t else None

    fact_rows = []
    for f in facts:
        supported = tuple(sorted(episode(u, f"fact {f.text!r}") for u in f.episodes))
        retired = episode(f.invalidated_by.episode_uuid, f"fact {f.text!r}") if f.invalidated_by else None
        fact_rows.append((name(f.source_uuid), f.relation, name(f.target_uuid), f.text, when(f.valid_at),
                          when(f.invalid_at), f.expired_at is not None, supported, retired))  # fmt: skip
    mention_rows = [(episode(m.episode_uuid, "a mention"), name(m.entity_uuid)) for m in mentions]
    mentioned = {m.entity_uuid for m in mentions if m.episode_uuid in done}
    half += [
        f"entity {e.name!r} is mentioned by no done episode" for u, e in ents.items() if u not in mentioned
    ]
    with_mentions = {m.episode_uuid for m in mentions}
    half += [f"done episode {label[u]!r} has no mentions" for u in sorted(done - with_mentions)]
    return Snapshot(
        statuses=Counter(e.status.value for e in eps),
        done=sorted(label[u] for u in done),
        entities=sorted((e.name, e.summary) for e in ents.values()),
        facts=sorted(fact_rows, key=repr),
        mentions=sorted(mention_rows),
        half_written=half,
        dangling=dangling,
    )


async def with_store(settings: Settings, use: Callable[[GraphStore], Any]) -> Any:
    store = store_from_settings(settings)
    try:
        await store.setup(embedding_dim=HASH_DIM)
        return await use(store)
    finally:
        await store.close()


HASH_DIM = 384


def sqlite_integrity(path: Path) -> list[str]:
    """``PRAGMA integrity_check`` and ``foreign_key_check`` of the file as a crash left it."""
    con = sqlite3.connect(path)
    try:
        problems = [r[0] for r in con.execute("PRAGMA integrity_check") if r[0] != "ok"]
        problems += [f"foreign key: {r}" for r in con.execute("PRAGMA foreign_key_check")]
    finally:
        con.close()
    return problems


NEO4J_CHECKS = {
    "two nodes with one key": "MATCH (n) WHERE (n:Entity OR n:Episode) AND n.group_id = $g "
    "WITH labels(n) AS l, n.uuid AS u, count(*) AS c WHERE c > 1 RETURN count(*) AS bad",
    "a fact between nodes that are not entities of its group": "MATCH (a)-[r:RELATES_TO]->(b) "
    "WHERE r.group_id = $g AND NOT (a:Entity AND b:Entity AND a.group_id = $g AND b.group_id = $g) "
    "RETURN count(r) AS bad",
    "a fact without a uuid or episodes": "MATCH ()-[r:RELATES_TO]->() WHERE r.group_id = $g "
    "AND (r.uuid IS NULL OR r.episodes IS NULL OR size(r.episodes) = 0) RETURN count(r) AS bad",
    "a fact naming an episode that does not exist": "MATCH ()-[r:RELATES_TO]->() WHERE r.group_id = $g "
    "UNWIND r.episodes AS u OPTIONAL MATCH (ep:Episode {group_id: $g, uuid: u}) WITH ep WHERE ep IS NULL "
    "RETURN count(*) AS bad",
    "a mention across groups or to a non-entity": "MATCH (ep:Episode {group_id: $g})-[m:MENTIONS]->(e) "
    "WHERE NOT (e:Entity AND e.group_id = $g) RETURN count(m) AS bad",
}


async def neo4j_integrity(settings: Settings, group: str) -> list[str]:
    """The consistency queries of ``NEO4J_CHECKS`` (each counts what must not exist)."""
    import neo4j

    password = settings.neo4j_password.get_secret_value() if settings.neo4j_password else None
    auth = (settings.neo4j_user, password) if password else None
    assert settings.neo4j_uri
    driver = neo4j.AsyncGraphDatabase.driver(settings.neo4j_uri, auth=auth)
    problems = []
    try:
        for what, query in NEO4J_CHECKS.items():
            records, _, _ = await driver.execute_query(query, g=group, database_=settings.neo4j_database)
            if records[0]["bad"]:
                problems.append(f"{what}: {records[0]['bad']}")
    finally:
        await driver.close()
    return problems


# --- the reference -------------------------------------------------------------------------------------
async def reference(settings: Settings, file: Path, group: str) -> list[tuple[Any, ...]]:
    """The graph after each prefix of the episodes (index k: after k episodes), by one uninterrupted
    in-process run that adds them one at a time."""
    rows = read_rows(file)
    async with KnowledgeGraph(settings, options=OPTIONS) as kg:
        graphs = [(await snapshot(kg.store, group)).graph()]
        for row in rows:
            (result,) = await ingest(kg, [row])
            if not result.ok:
                raise SystemExit(f"the reference run failed on {row}: {result.episode.error}")
            graphs.append((await snapshot(kg.store, group)).graph())
    return graphs


def missing(expected: tuple[Any, ...], got: tuple[Any, ...]) -> list[str]:
    """What of ``expected``'s episodes, entities, facts and mentions ``got`` does not hold."""
    out = []
    for kind, want, have in zip(("episode", "entity", "fact", "mention"), expected, got, strict=True):
        left = Counter(map(repr, want))
        left.subtract(Counter(map(repr, have)))
        out += [f"{kind} {k}" for k, c in left.items() if c > 0]
    return out
