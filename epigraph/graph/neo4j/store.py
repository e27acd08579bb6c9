"""Neo4jStore: the GraphStore Protocol (the core and every optional role) over a real Neo4j 5.26+
(Community is enough).

Connection: the official async driver, created lazily inside the running event loop (``auth=None`` when
there is no password), the database named on every call (``database_`` / ``database=``), one-shot reads
as auto-commit ``session.run`` (one round trip) and exactly one ``execute_write`` transaction per
``write_episode`` / ``delete_episode``. Driver errors become :class:`~epigraph.errors.StoreError` /
:class:`~epigraph.errors.StoreUnavailable`.

Storage encoding: see ``convert`` (native DATETIME values, LIST<FLOAT> embeddings, JSON attributes) and
``cypher`` (graph layout, every statement). The episode write: ``writing``. Search policy: ``search``;
a filter's parameters: ``filters``; lookups of several statements: ``lookups``.
Schema: ``schema``.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Iterable, Sequence
from datetime import datetime
from typing import TypeVar

import neo4j

from ...errors import StoreError
from ..changes import ChangeRecords, Window
from ..corrections import Correction
from ..decisions import DecisionRecord
from ..derived import Community, ConversationSummary
from ..entity_time import bounded
from ..forgetting import ForgetOutcome, ForgetRecord, ForgetRequest, RetentionPolicy
from ..model import Entity, Episode, EpisodeStatus, Fact, Mention, to_utc
from ..store import (
    ALL_OF_CHAIN,
    ANY_ENTITY,
    ANY_FACT,
    CURRENT,
    Chain,
    ChainRead,
    Claim,
    DeletionResult,
    DumpItem,
    EntityFilter,
    EpisodeWrite,
    FactFilter,
    GroupDump,
    Hit,
    StoreStats,
    TimeFilter,
    VaultEntry,
    VaultHeader,
)
from . import changes as change_reads
from . import (
    claims,
    convert,
    decisions,
    derived,
    entity_time,
    forgetting,
    groups,
    lookups,
    schema,
    search,
    vault,
    writing,
)
from . import cypher as q
from . import cypher_edit as qe
from . import cypher_entity_time as qt
from . import cypher_forget as qf
from . import cypher_search as qs
from . import cypher_vault as qv
from .connection import Connection
from .corrections import apply_correction_tx
from .deletion import delete_episode_tx
from .filters import episode_params, fact_params, narrowings

T = TypeVar("T", Entity, Fact)


def _unique(values: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(values))


def _in_order(items: list[T], uuids: Sequence[str]) -> list[T]:
    """``items`` in the order of ``uuids`` (first occurrence); missing ones skipped."""
    by_uuid = {item.uuid: item for item in items}
    return [by_uuid[u] for u in _unique(uuids) if u in by_uuid]


class Neo4jStore:
    """The temporal graph in Neo4j. See the module docstring and ``graph.store.GraphStore``."""

    def __init__(
        self,
        uri: str,
        user: str = "neo4j",
        password: str | None = None,
        database: str = "neo4j",
        *,
        driver: neo4j.AsyncDriver | None = None,
        connection_timeout: float = 10.0,
        max_retry_time: float = 15.0,
    ) -> None:
        """``driver``: an existing ``AsyncDriver`` to borrow (then ``close`` leaves it open)."""
        self._conn = Connection(
            uri,
            user,
            password,
            database,
            driver=driver,
            connection_timeout=connection_timeout,
            max_retry_time=max_retry_time,
        )
        self._vector_dims: dict[str, int | None] | None = None

    def __repr__(self) -> str:
        return f"Neo4jStore(uri={self._conn.uri!r}, database={self._conn.database!r})"

    async def __aenter__(self) -> Neo4jStore:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # --- lifecycle -------------------------------------------------------------------------------------
    async def setup(self, embedding_dim: int) -> None:
        await schema.setup(self._conn, embedding_dim)
        self._vector_dims = {name: embedding_dim for name in schema.VECTOR_SPECS}

    async def close(self) -> None:
        await self._conn.close()

    async def _dim(self) -> int | None:
        """The embedding dimension of this graph (``None`` before any setup)."""
        return await self._index_dim(q.ENTITY_VECTOR_INDEX)

    async def _index_dim(self, index: str) -> int | None:
        """The dimension of one of our vector indexes (``None`` when it does not exist)."""
        if self._vector_dims is None:
            existing = await schema.describe(self._conn)
            self._vector_dims = {
                name: schema.vector_dimensions(existing[name]) if name in existing else None
                for name in schema.VECTOR_SPECS
            }
        return self._vector_dims.get(index)

    # --- episodes ----------------------------------------------------------------------------------------
    async def save_episode(self, episode: Episode) -> None:
        writing.check_dims(EpisodeWrite(episode=episode), await self._dim())
        rows = [convert.episode_row(episode)]
        await self._conn.run_write(q.UPSERT_EPISODES, {"rows": {"episodes": rows}}, what="save_episode")

    async def get_episode(self, group_id: str, uuid: str) -> Episode | None:
        records = await self._conn.read(q.GET_EPISODE, {"group_id": group_id, "uuid": uuid})
        return convert.episode_from(records[0]["ep"]) if records else None

    async def episodes(
        self,
        group_id: str,
        *,
        since: datetime | None = None,
        until: datetime | None = None,
        status: EpisodeStatus | None = None,
        limit: int = 100,
        newest_first: bool = True,
    ) -> list[Episode]:
        if limit <= 0:
            return []
        params = {
            "group_id": group_id,
            "since": None if since is None else to_utc(since),
            "until": None if until is None else to_utc(until),
            "status": None if status is None else EpisodeStatus(status).value,
            "limit": limit,
        }
        statement = q.EPISODES_NEWEST if newest_first else q.EPISODES_OLDEST
        return [convert.episode_from(r["ep"]) for r in await self._conn.read(statement, params)]

    async def episodes_mentioning(
        self, group_id: str, entity_uuid: str, limit: int = 100, time: TimeFilter = CURRENT
    ) -> list[Episode]:
        if limit <= 0:
            return []
        params = {"group_id": group_id, "entity_uuid": entity_uuid, "limit": limit, **episode_params(time)}
        return [convert.episode_from(r["ep"]) for r in await self._conn.read(q.EPISODES_MENTIONING, params)]

    async def episodes_around(
        self, group_id: str, uuids: Sequence[str], window: int = 1, time: TimeFilter = CURRENT
    ) -> list[Episode]:
        if not uuids or window <= 0:
            return []
        params = {"group_id": group_id, "uuids": list(dict.fromkeys(uuids)), "window": window}
        params.update(episode_params(time))
        found = [convert.episode_from(r["ep"]) for r in await self._conn.read(q.EPISODES_AROUND, params)]
        return sorted(found, key=lambda e: (e.reference_time, e.created_at, e.uuid))

    async def delete_episode(self, group_id: str, uuid: str) -> DeletionResult:
        async def work(tx: neo4j.AsyncManagedTransaction) -> DeletionResult:
            return await delete_episode_tx(tx, group_id, uuid)

        return await self._conn.write(work, what="delete_episode")

    # --- claims ------------------------------------------------------------------------------------------
    async def claim_episode(self, group_id: str, uuid: str, owner: str, seconds: float) -> Claim | None:
        async def work(tx: neo4j.AsyncManagedTransaction) -> Claim | None:
            return await claims.claim_tx(tx, group_id, uuid, owner, seconds)

        return await self._conn.write(work, what="claim_episode")

    async def release_episode(self, group_id: str, uuid: str, owner: str) -> None:
        async def work(tx: neo4j.AsyncManagedTransaction) -> None:
            await claims.release_tx(tx, group_id, uuid, owner)

        await self._conn.write(work, what="release_episode")

    # --- the atomic write ----------------------------------------------------------------------------------
    async def write_episode(self, write: EpisodeWrite) -> bool:
        """One transaction; see ``writing``."""
        return await writing.write_one(self._conn, writing.prepare(write, await self._dim()))

    async def write_episodes(self, writes: Iterable[EpisodeWrite]) -> None:
        """One transaction per episode, pipelined (``writing.write_all``)."""
        await writing.write_all(self._conn, writes, await self._dim())

    # --- lookups ------------------------------------------------------------------------------------------
    async def get_entities(
        self, group_id: str, uuids: Sequence[str], time: TimeFilter = CURRENT
    ) -> list[Entity]:
        return await lookups.get_entities(self._conn, group_id, uuids, time)

    async def get_facts(self, group_id: str, uuids: Sequence[str]) -> list[Fact]:
        if not uuids:
            return []
        records = await self._conn.read(q.GET_FACTS, {"group_id": group_id, "uuids": _unique(uuids)})
        return _in_order([convert.fact_from(r["fact"]) for r in records], uuids)

    async def entities_by_names(
        self, group_id: str, names: Sequence[str], time: TimeFilter = CURRENT
    ) -> dict[str, list[Entity]]:
        found = await lookups.entities_by_names(self._conn, group_id, names)
        return await entity_time.by_names_as_of(self._conn, group_id, found, time)

    async def facts_between(
        self, group_id: str, a_uuid: str, b_uuid: str, flt: FactFilter = ANY_FACT
    ) -> list[Fact]:
        params = {"group_id": group_id, "a": a_uuid, "b": b_uuid, **fact_params(flt)}
        return [convert.fact_from(r["fact"]) for r in await self._conn.read(q.FACTS_BETWEEN, params)]

    async def facts_around(
        self, group_id: str, entity_uuids: Sequence[str], flt: FactFilter = ANY_FACT, limit: int = 200
    ) -> list[Fact]:
        if not entity_uuids or limit <= 0:
            return []
        params = {"group_id": group_id, "uuids": _unique(entity_uuids), "limit": limit, **fact_params(flt)}
        return [convert.fact_from(r["fact"]) for r in await self._conn.read(q.FACTS_AROUND, params)]

    async def neighbours(
        self, group_id: str, entity_uuids: Sequence[str], depth: int = 1, flt: FactFilter = ANY_FACT
    ) -> dict[str, int]:
        return await lookups.neighbours(self._conn, group_id, entity_uuids, depth, flt)

    async def mention_counts(
        self, group_id: str, entity_uuids: Sequence[str], time: TimeFilter = CURRENT
    ) -> dict[str, int]:
        """Every requested uuid is a key (0 when never mentioned or unknown)."""
        counts = dict.fromkeys(entity_uuids, 0)
        if not counts:
            return counts
        if bounded(time):
            return await entity_time.mention_counts(self._conn, group_id, list(counts), time)
        params = {"group_id": group_id, "uuids": list(counts)}
        counts.update({r["uuid"]: int(r["n"]) for r in await self._conn.read(q.MENTION_COUNTS, params)})
        return counts

    # --- search ------------------------------------------------------------------------------------------
    async def search_entities_text(
        self, group_ids: Sequence[str], query: str, limit: int = 10, flt: EntityFilter = ANY_ENTITY
    ) -> list[Hit[Entity]]:
        pairs = await search.fulltext(
            self._conn, qt.SEARCH_ENTITIES_TEXT, index=q.ENTITY_TEXT_INDEX, fields=q.ENTITY_TEXT_FIELDS,
            group_ids=group_ids, text=query, limit=limit, uuid_of=lambda item: item["uuid"],
            params=entity_time.search_params(flt),
        )  # fmt: skip
        hits = [Hit(convert.entity_from(item), score) for item, score in pairs]
        return await entity_time.hits_as_of(self._conn, hits, flt.time)

    async def search_facts_text(
        self, group_ids: Sequence[str], query: str, limit: int = 10, flt: FactFilter = ANY_FACT
    ) -> list[Hit[Fact]]:
        pairs = await search.fulltext(
            self._conn, qs.SEARCH_FACTS_TEXT, index=q.FACT_TEXT_INDEX, fields=q.FACT_TEXT_FIELDS,
            group_ids=group_ids, text=query, limit=limit, uuid_of=lambda item: item["props"]["uuid"],
            params=fact_params(flt),
        )  # fmt: skip
        return [Hit(convert.fact_from(item), score) for item, score in pairs]

    async def search_episodes_text(
        self, group_ids: Sequence[str], query: str, limit: int = 10, time: TimeFilter = CURRENT
    ) -> list[Hit[Episode]]:
        pairs = await search.fulltext(
            self._conn, qs.SEARCH_EPISODES_TEXT, index=q.EPISODE_TEXT_INDEX, fields=q.EPISODE_TEXT_FIELDS,
            group_ids=group_ids, text=query, limit=limit, uuid_of=lambda item: item["uuid"],
            params=episode_params(time),
        )  # fmt: skip
        return [Hit(convert.episode_from(item), score) for item, score in pairs]

    async def search_entities_vector(
        self,
        group_ids: Sequence[str],
        vector: Sequence[float],
        limit: int = 10,
        flt: EntityFilter = ANY_ENTITY,
    ) -> list[Hit[Entity]]:
        pairs = await search.vector(
            self._conn, qt.SEARCH_ENTITIES_VECTOR, qt.SCAN_ENTITIES_VECTOR, index=q.ENTITY_VECTOR_INDEX,
            index_dim=await self._index_dim(q.ENTITY_VECTOR_INDEX), group_ids=group_ids, query=vector,
            limit=limit, embedding_of=lambda item: item["name_embedding"], uuid_of=lambda item: item["uuid"],
            params=entity_time.search_params(flt),
        )  # fmt: skip
        hits = [Hit(convert.entity_from(item), score) for item, score in pairs]
        return await entity_time.hits_as_of(self._conn, hits, flt.time)

    async def search_facts_vector(
        self, group_ids: Sequence[str], vector: Sequence[float], limit: int = 10, flt: FactFilter = ANY_FACT
    ) -> list[Hit[Fact]]:
        pairs = await search.vector(
            self._conn, qs.SEARCH_FACTS_VECTOR, qs.SCAN_FACTS_VECTOR, index=q.FACT_VECTOR_INDEX,
            index_dim=await self._index_dim(q.FACT_VECTOR_INDEX), group_ids=group_ids, query=vector,
            limit=limit, embedding_of=lambda item: item["props"]["text_embedding"],
            uuid_of=lambda item: item["props"]["uuid"], params=fact_params(flt),
            narrowings=narrowings(flt.time),
        )  # fmt: skip
        return [Hit(convert.fact_from(item), score) for item, score in pairs]

    async def search_episodes_vector(
        self, group_ids: Sequence[str], vector: Sequence[float], limit: int = 10, time: TimeFilter = CURRENT
    ) -> list[Hit[Episode]]:
        """Episodes by cosine of ``content_embedding`` (episodes without one are not candidates)."""
        pairs = await search.vector(
            self._conn, qs.SEARCH_EPISODES_VECTOR, qs.SCAN_EPISODES_VECTOR, index=q.EPISODE_VECTOR_INDEX,
            index_dim=await self._index_dim(q.EPISODE_VECTOR_INDEX), group_ids=group_ids, query=vector,
            limit=limit, embedding_of=lambda item: item["content_embedding"],
            uuid_of=lambda item: item["uuid"], params=episode_params(time),
        )  # fmt: skip
        return [Hit(convert.episode_from(item), score) for item, score in pairs]

    async def stats(self, group_id: str | None = None) -> StoreStats:
        params = {"group_id": group_id, **fact_params(ANY_FACT)}
        return convert.stats_from((await self._conn.read(q.STATS, params, what="stats"))[0])

    # --- derived records (see derived) ---------------------------------------------------------------
    async def fact_endpoints(self, group_id: str, flt: FactFilter = ANY_FACT) -> list[tuple[str, str]]:
        return await derived.fact_endpoints(self._conn, group_id, fact_params(flt))

    async def communities(self, group_id: str) -> list[Community]:
        return await derived.communities(self._conn, group_id)

    async def replace_communities(self, group_id: str, communities: Sequence[Community]) -> None:
        await derived.replace_communities(self._conn, group_id, list(communities), await self._dim())

    async def chains(self, group_id: str) -> list[Chain]:
        return await derived.chains(self._conn, group_id)

    async def owed_summaries(self, group_id: str) -> list[str]:
        found = await self._conn.read(q.OWED_SUMMARIES, {"group_id": group_id}, what="owed_summaries")
        return [str(record["uuid"]) for record in found]

    async def chain_episodes(self, group_id: str, key: str, read: ChainRead = ALL_OF_CHAIN) -> list[Episode]:
        return await derived.chain_episodes(self._conn, group_id, key, read)

    async def conversation_summaries(
        self, group_id: str, keys: Sequence[str] | None = None
    ) -> list[ConversationSummary]:
        return await derived.conversation_summaries(self._conn, group_id, keys)

    async def save_conversation_summary(self, summary: ConversationSummary) -> bool:
        return await derived.save_conversation_summary(self._conn, summary)

    # --- corrections by hand -----------------------------------------------------------------------------
    async def apply_correction(self, correction: Correction) -> None:
        correction.check()
        writing.check_record_dims([], correction.after.entities, correction.after.facts, await self._dim())

        async def work(tx: neo4j.AsyncManagedTransaction) -> None:
            await apply_correction_tx(tx, correction)

        await self._conn.write(work, what=f"apply_correction {correction.uuid}")

    async def corrections(
        self, group_id: str, *, subject: str | None = None, limit: int = 100
    ) -> list[Correction]:
        if limit <= 0:
            return []
        params = {"group_id": group_id, "subject": subject, "limit": limit}
        return [convert.correction_from(r["record"]) for r in await self._conn.read(qe.CORRECTIONS, params)]

    async def get_correction(self, group_id: str, uuid: str) -> Correction | None:
        records = await self._conn.read(qe.GET_CORRECTION, {"group_id": group_id, "uuid": uuid})
        return convert.correction_from(records[0]["record"]) if records else None

    async def mentions(self, group_id: str, entity_uuids: Sequence[str]) -> list[Mention]:
        if not entity_uuids:
            return []
        params = {"group_id": group_id, "uuids": _unique(entity_uuids)}
        return [convert.mention_from(group_id, r) for r in await self._conn.read(qe.MENTIONS_OF, params)]

    # --- what changed -----------------------------------------------------------------------------------
    async def changes(self, group_id: str, window: Window, limit: int = 1000) -> ChangeRecords:
        return await change_reads.changes(self._conn, group_id, window, limit)

    # --- decision records ---------------------------------------------------------------------------------
    async def decision_records(self, group_id: str, episode_uuids: Sequence[str]) -> list[DecisionRecord]:
        return await decisions.records_of(self._conn, group_id, episode_uuids)

    async def decisions_naming(self, group_id: str, name: str, limit: int = 50) -> list[DecisionRecord]:
        return await decisions.records_naming(self._conn, group_id, name, limit)

    # --- whole groups ------------------------------------------------------------------------------------
    async def groups(self) -> list[str]:
        return [r["g"] for r in await self._conn.read(qe.GROUPS, what="groups")]

    async def dump(
        self, group_ids: Sequence[str], *, vectors: bool = False
    ) -> AsyncGenerator[DumpItem, None]:
        """See ``groups``: read in one transaction holding the groups' locks."""
        async for item in groups.dump(self._conn, list(group_ids), vectors):
            yield item

    async def load_group(self, dump: GroupDump) -> None:
        dump.check()
        dim = await self._dim()

        async def work(tx: neo4j.AsyncManagedTransaction) -> None:
            await groups.load_group_tx(tx, dump, dim)

        await self._conn.write(work, what=f"load_group {dump.group_id}")

    # --- the redaction vault --------------------------------------------------------------------------------
    async def vault_header(self, group_id: str, proposed: VaultHeader) -> VaultHeader:
        async def work(tx: neo4j.AsyncManagedTransaction) -> VaultHeader:
            return await vault.vault_header_tx(tx, group_id, proposed)

        return await self._conn.write(work, what="vault_header")

    async def placeholders(self, group_id: str, entries: Sequence[VaultEntry]) -> list[int]:
        async def work(tx: neo4j.AsyncManagedTransaction) -> list[int]:
            return await vault.placeholders_tx(tx, group_id, entries)

        return await self._conn.write(work, what="placeholders")

    async def sealed_values(
        self, group_id: str, refs: Sequence[tuple[str, int]]
    ) -> dict[tuple[str, int], bytes]:
        params = {"group_id": group_id, "refs": [[kind, number] for kind, number in refs]}
        return vault.sealed_from(await self._conn.read(qv.SEALED, params, what="sealed_values"))

    async def read_vault_header(self, group_id: str) -> VaultHeader | None:
        rows = await self._conn.read(qv.READ_HEADER, {"group_id": group_id}, what="read_vault_header")
        return vault.header_of(rows[0]) if rows else None

    async def known_placeholders(self, group_id: str, digests: Sequence[bytes]) -> list[int | None]:
        if not digests:
            return []
        params = {"group_id": group_id, "digests": list(digests)}
        rows = await self._conn.read(qv.KNOWN, params, what="known_placeholders")
        return [None if row["number"] is None else int(row["number"]) for row in rows]

    async def held_placeholders(self, group_id: str) -> list[tuple[str, int]]:
        rows = await self._conn.read(qv.ROWS, {"group_id": group_id}, what="held_placeholders")
        return vault.held_from(rows)

    async def reserve_placeholders(
        self, group_id: str, refs: Sequence[tuple[str, int]]
    ) -> list[tuple[str, int]]:
        async def work(tx: neo4j.AsyncManagedTransaction) -> list[tuple[str, int]]:
            return await vault.reserve_tx(tx, group_id, refs)

        return await self._conn.write(work, what="reserve_placeholders")

    async def delete_group(self, group_id: str) -> StoreStats:
        params = fact_params(ANY_FACT)

        async def work(tx: neo4j.AsyncManagedTransaction) -> StoreStats:
            return await groups.delete_group_tx(tx, group_id, params)

        return await self._conn.write(work, what=f"delete_group {group_id}")

    # --- forgetting (see forgetting) --------------------------------------------------------------------
    async def forget(self, request: ForgetRequest) -> ForgetOutcome:
        """One write transaction under the group's lock: the group read as a dump reads it, planned,
        written (see ``forgetting``). Nothing to compact: Neo4j manages its own files."""
        dim = await self._dim()
        for vector in request.vectors.values():
            if dim is not None and len(vector) != dim:
                raise StoreError(f"embedding of dimension {len(vector)}; this store holds dimension {dim}")

        async def work(tx: neo4j.AsyncManagedTransaction) -> ForgetOutcome:
            await (await tx.run(q.LOCK_GROUP, {"group_id": request.group_id})).consume()
            items = [item async for item in groups.group_items(tx, request.group_id, vectors=False)]
            return await forgetting.forget_tx(tx, request, items)

        return await self._conn.write(work, what=f"forget in group {request.group_id}")

    async def forgettings(self, group_id: str, limit: int = 100) -> list[ForgetRecord]:
        if limit <= 0:
            return []
        params = {"group_id": group_id, "limit": limit}
        rows = await self._conn.read(qf.FORGETTINGS_NEWEST, params, what="forgettings")
        return [forgetting.record_from(row) for row in rows]

    async def retention_policies(self, group_id: str | None = None) -> list[RetentionPolicy]:
        rows = await self._conn.read(qf.RETENTION, {"group_id": group_id}, what="retention_policies")
        return [forgetting.policy_from(row) for row in rows]

    async def set_retention(self, policy: RetentionPolicy) -> None:
        async def work(tx: neo4j.AsyncManagedTransaction) -> None:
            await forgetting.set_retention_tx(tx, policy)

        await self._conn.write(work, what="set_retention")

    async def clear_retention(self, group_id: str) -> bool:
        rows = await self._conn.run_write(qf.CLEAR_RETENTION, {"group_id": group_id}, what="clear_retention")
        return bool(rows and rows[0]["cleared"])
