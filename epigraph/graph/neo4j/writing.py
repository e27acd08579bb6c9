"""``write_episode``'s transaction: which entities changed, then ``cypher.WRITE_EPISODE`` per chunk.

An episode write is prepared outside the transaction (:func:`prepare`: checks, converted rows, the
entities' ``row_hash``; ``Neo4jStore.write_episodes`` does it in a worker thread for the next episode
while the previous one is written). Inside it (:func:`write_tx`):

0. a write ``unless_done`` first takes the group's lock (``cypher.LOCK_GROUP``) and the episode node's
   write lock, then reads its status, and writes nothing when it is ``done`` (two writers of one episode:
   the second waits, then sees it done); any other write takes the group's lock in ``WRITE_EPISODE``;
1. one read returns the entities already stored with the same ``row_hash``; only the others are sent
   (an episode re-sends every entity it mentions, and decoding an unchanged 384-float vector cost the
   server more than the fact it came with);
2. optionally, wait for the previous episode of a bulk write to commit (so the two never wait on each
   other's locks);
3. ``WRITE_EPISODE`` once per chunk of at most ``BATCH`` rows (usually one), each fact end and mentioned
   entity a position in the chunk's ``endpoints`` (looked up once); every fact and mention must come
   back written, else the transaction fails and rolls back;
4. the summaries it pays are cleared of their owed marks, then those it leaves owed are marked;
5. its decision record written (``decisions``), the group's older than the retention deleted.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import neo4j

from ...errors import StoreError
from ..model import Entity, Episode, EpisodeStatus, Fact, Mention
from ..store import EpisodeWrite
from . import convert
from . import cypher as q
from .connection import Connection
from .decisions import forget_before_tx, write_records_tx

BATCH = 2000  # rows (of any kind) per WRITE_EPISODE statement
WRITE_KINDS = ("episodes", "entities", "facts", "mentions")  # the statement's order

Rows = dict[str, list[dict[str, Any]]]  # WRITE_EPISODE parameters: rows by kind


def _chunks(rows: Rows) -> list[Rows]:
    """``WRITE_EPISODE`` parameters of at most ``BATCH`` rows each, in ``WRITE_KINDS`` order.

    Usually one chunk (one round trip). Chunks keep the order, so every fact or mention finds the
    entities and the episode written by the same or an earlier statement of the transaction.
    """
    chunks: list[Rows] = [{kind: [] for kind in WRITE_KINDS}]
    size = 0
    for kind in WRITE_KINDS:
        for row in rows[kind]:
            if size == BATCH:
                chunks.append({k: [] for k in WRITE_KINDS})
                size = 0
            chunks[-1][kind].append(row)
            size += 1
    return chunks


@dataclass(frozen=True, slots=True)
class Prepared:
    """An episode write checked and converted, but for its entity rows (which depend on the graph)."""

    write: EpisodeWrite
    hashes: list[str]  # convert.entity_row_hash of each entity
    rows: Rows  # episodes, facts, mentions


def prepare(write: EpisodeWrite, dim: int | None) -> Prepared:
    write.check()
    check_dims(write, dim)
    rows = {
        "episodes": [convert.episode_row(write.episode)],
        "facts": [convert.fact_row(f) for f in write.facts],
        "mentions": [convert.mention_row(m) for m in write.mentions],
    }
    return Prepared(write, [convert.entity_row_hash(e) for e in write.entities], rows)


def _statement_rows(chunk: Rows) -> dict[str, Any]:
    """``WRITE_EPISODE``'s ``$rows`` for one chunk. Fact ends and mentioned entities become positions in
    ``endpoints``, so the statement looks each entity up once, not once per fact end and mention; the
    mentions are grouped by episode (one lookup of it)."""
    position: dict[str, int] = {}

    def at(uuid: str) -> int:
        return position.setdefault(uuid, len(position))

    facts = []
    for fact in chunk["facts"]:
        row = {key: value for key, value in fact.items() if key not in ("source_uuid", "target_uuid")}
        facts.append({**row, "source": at(fact["source_uuid"]), "target": at(fact["target_uuid"])})
    by_episode: dict[str, list[int]] = {}
    for row in chunk["mentions"]:
        by_episode.setdefault(row["episode_uuid"], []).append(at(row["entity_uuid"]))
    return {
        "episodes": chunk["episodes"],
        "entities": chunk["entities"],
        "facts": facts,
        "mentions": [
            {"episode_uuid": ep, "entities": list(dict.fromkeys(ends))} for ep, ends in by_episode.items()
        ],
        "endpoints": list(position),
    }


def check_dims(write: EpisodeWrite, dim: int | None) -> None:
    """Every embedding has the graph's dimension (the vector indexes would silently skip the others)."""
    check_record_dims([write.episode], write.entities, write.facts, dim)


def check_record_dims(
    episodes: Sequence[Episode], entities: Sequence[Entity], facts: Sequence[Fact], dim: int | None
) -> None:
    """Every embedding of these records has the graph's dimension ``dim`` (when known)."""
    if dim is None:
        return
    vectors = [*(e.content_embedding for e in episodes), *(e.name_embedding for e in entities)]
    vectors += [f.text_embedding for f in facts]
    for vector in vectors:
        if vector is not None and len(vector) != dim:
            raise StoreError(f"embedding of dimension {len(vector)}; this store holds dimension {dim}")


async def _unchanged_entities(
    tx: neo4j.AsyncManagedTransaction, group_id: str, entities: Sequence[Entity], hashes: list[str]
) -> set[str]:
    """The ``hashes`` already stored, as ``row_hash``, on their entities (one index seek per entity)."""
    if not entities:
        return set()
    keys = [{"uuid": e.uuid, "row_hash": h} for e, h in zip(entities, hashes, strict=True)]
    params = {"group_id": group_id, "rows": {"entities": keys}}
    record = await (await tx.run(q.UNCHANGED_ENTITIES, params)).single(strict=True)
    return set(record["hashes"])


def _expect_written(rows: dict[str, Any], record: neo4j.Record) -> None:
    """Every fact and mention row was written; else one of its endpoints is missing (the write fails)."""
    ends = rows["endpoints"]
    wanted = {
        "fact": [row["uuid"] for row in rows["facts"]],
        "mention": [f"{row['episode_uuid']} {ends[i]}" for row in rows["mentions"] for i in row["entities"]],
    }
    for kind, keys in wanted.items():
        missing = sorted(set(keys) - set(record[f"{kind}s_written"]))
        if missing:
            raise StoreError(
                f"{len(missing)} {kind}(s) point at an entity or episode missing from the group "
                f"(first: {missing[0]}); the episode write was rolled back"
            )


async def _done_already(tx: neo4j.AsyncManagedTransaction, write: EpisodeWrite) -> bool:
    """Whether the stored episode is ``done``, read under its write lock (taken first, held until the
    transaction ends), so a concurrent writer of the same episode waits for this one and then sees it."""
    params = {"group_id": write.episode.group_id, "uuid": write.episode.uuid}
    await (await tx.run(q.LOCK_EPISODE, params)).consume()
    record = await (await tx.run(q.EPISODE_STATUS, params)).single()
    return record is not None and record["status"] == EpisodeStatus.DONE.value


async def write_tx(
    tx: neo4j.AsyncManagedTransaction, prepared: Prepared, after: asyncio.Task[bool] | None = None
) -> bool:
    """The write of one prepared episode inside ``tx`` (steps 0-3 of the module docstring); ``False``
    when ``unless_done`` found the episode already ``done`` (nothing written)."""
    write = prepared.write
    if write.unless_done and await _done_already(tx, write):
        return False
    unchanged = await _unchanged_entities(tx, write.episode.group_id, write.entities, prepared.hashes)
    pairs = zip(write.entities, prepared.hashes, strict=True)
    entities = [convert.entity_row(e, h) for e, h in pairs if h not in unchanged]
    if after is not None:
        await after  # the previous episode committed (its failure rolls this one back)
    await write_rows(tx, write.episode.group_id, {**prepared.rows, "entities": entities})
    await settle_summaries(tx, write)
    group_id = write.episode.group_id
    if write.forget_decisions_before is not None:
        await forget_before_tx(tx, group_id, write.forget_decisions_before)
    if write.decisions is not None:
        await write_records_tx(tx, group_id, [write.decisions])
    return True


async def settle_summaries(tx: neo4j.AsyncManagedTransaction, write: EpisodeWrite) -> None:
    """Clear the owed marks of ``write.paid_summaries``, then mark ``write.owed_summaries`` (entities of
    the episode's group), in the write's transaction."""
    steps = ((q.PAY_SUMMARIES, write.paid_summaries), (q.OWE_SUMMARIES, write.owed_summaries))
    for statement, uuids in steps:
        if uuids:
            params = {"group_id": write.episode.group_id, "uuids": list(uuids)}
            await (await tx.run(statement, params)).consume()


async def write_one(conn: Connection, prepared: Prepared, after: asyncio.Task[bool] | None = None) -> bool:
    """One episode's write in one transaction, its statements after ``after`` has committed."""

    async def work(tx: neo4j.AsyncManagedTransaction) -> bool:
        return await write_tx(tx, prepared, after)

    return await conn.write(work, what=f"write_episode {prepared.write.episode.uuid}")


async def write_all(conn: Connection, writes: Iterable[EpisodeWrite], dim: int | None) -> None:
    """One transaction per episode, pipelined: while one is written, the next one's rows are built in a
    worker thread and its transaction reads which entities changed; its own statements wait until the
    previous transaction has committed (so neither waits on the other's locks)."""
    tasks: list[asyncio.Task[bool]] = []  # the last two episodes' writes, in order
    try:
        for write in writes:
            prepared = await asyncio.to_thread(prepare, write, dim)
            after = tasks[-1] if tasks else None
            tasks = [*tasks[-1:], asyncio.create_task(write_one(conn, prepared, after=after))]
            if after is not None:
                await after
    finally:
        # Writes in flight finish (commit, or roll back after an earlier failure); the earliest
        # failure is the one raised.
        for result in await asyncio.gather(*tasks, return_exceptions=True):
            if isinstance(result, BaseException):
                raise result


async def write_rows(tx: neo4j.AsyncManagedTransaction, group_id: str, rows: Rows) -> None:
    """``WRITE_EPISODE`` over ``rows`` (episodes, entities, facts, mentions; ``convert``'s rows), one
    statement per chunk; raises StoreError (the transaction rolls back) when a fact or mention could not
    be written. Corrections and loads write through it too (with their own episodes, or none)."""
    for chunk in _chunks(rows):
        statement_rows = _statement_rows(chunk)
        params = {"group_id": group_id, "rows": statement_rows}
        record = await (await tx.run(q.WRITE_EPISODE, params)).single(strict=True)
        _expect_written(statement_rows, record)


def rows_of(
    episodes: Sequence[Episode],
    entities: Sequence[Entity],
    facts: Sequence[Fact],
    mentions: Sequence[Mention],
) -> Rows:
    """:func:`write_rows`' rows of these records (every entity row with its hash)."""
    return {
        "episodes": [convert.episode_row(e) for e in episodes],
        "entities": [convert.entity_row(e, convert.entity_row_hash(e)) for e in entities],
        "facts": [convert.fact_row(f) for f in facts],
        "mentions": [convert.mention_row(m) for m in mentions],
    }
