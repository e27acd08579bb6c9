"""Neo4jStore: the GraphStore Protocol (the core and every optional role) over a real Neo4j 5.26+
(Community is enough).

Connection: the official async driver, created lazily inside the running event loop (``auth=None`` when
there is no password), the database named on every call (``database_`` / ``database=``), one-shot reads
as auto-commit ``session.run`` (one round trip) and exactly one ``execute_write`` transaction per
``write_episode`` / ``delete_episode``. Driver errors become :class:`~epigraph.errors.StoreError` /
:class:`~epigraph.errors.StoreUnavailable`.

Storage encoding: see ``convert`` (native DATETIME values, LIST<FLOAT> embeddings, JSON attributes) and
``cypher`` (graph layout, every statement). The episode write: ``writing``. Search policy: ``search``;
a filter's parameters: ``filters``; lookups of several statements: ``lookups``. Schema: ``schema``.
The methods' bodies live in the helper modules, the connection passed in: ``reads`` (episodes, facts,
mentions, the six searches, stats), ``claims``, ``deletion``, ``derived``, ``corrections``, ``changes``,
``decisions``, ``groups``, ``vault`` and ``forgetting``.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Iterable, Sequence
from datetime import datetime

import neo4j

from ...errors import StoreError
from ..changes import ChangeRecords, Window
from ..corrections import Correction
from ..decisions import DecisionRecord
from ..derived import Community, ConversationSummary
from ..forgetting import ForgetOutcome, ForgetRecord, ForgetRequest, RetentionPolicy
from ..model import Entity, Episode, EpisodeStatus, Fact, Mention
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
    corrections,
    decisions,
    deletion,
    derived,
    entity_time,
    forgetting,
    groups,
    lookups,
    reads,
    schema,
    vault,
    writing,
)
from . import cypher as q
from .connection import Connection
from .filters import fact_params


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
        return await reads.get_episode(self._conn, group_id, uuid)

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
        return await reads.episodes(
            self._conn,
            group_id,
            since=since,
            until=until,
            status=status,
            limit=limit,
            newest_first=newest_first,
        )

    async def episodes_mentioning(
        self, group_id: str, entity_uuid: str, limit: int = 100, time: TimeFilter = CURRENT
    ) -> list[Episode]:
        return await reads.episodes_mentioning(self._conn, group_id, entity_uuid, limit, time)

    async def episodes_around(
        self, group_id: str, uuids: Sequence[str], window: int = 1, time: TimeFilter = CURRENT
    ) -> list[Episode]:
        return await reads.episodes_around(self._conn, group_id, uuids, window, time)

    async def delete_episode(self, group_id: str, uuid: str) -> DeletionResult:
        return await deletion.delete_episode(self._conn, group_id, uuid)

    # --- claims ------------------------------------------------------------------------------------------
    async def claim_episode(self, group_id: str, uuid: str, owner: str, seconds: float) -> Claim | None:
        return await claims.claim(self._conn, group_id, uuid, owner, seconds)

    async def release_episode(self, group_id: str, uuid: str, owner: str) -> None:
        await claims.release(self._conn, group_id, uuid, owner)

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
        return await reads.get_facts(self._conn, group_id, uuids)

    async def entities_by_names(
        self, group_id: str, names: Sequence[str], time: TimeFilter = CURRENT
    ) -> dict[str, list[Entity]]:
        found = await lookups.entities_by_names(self._conn, group_id, names)
        return await entity_time.by_names_as_of(self._conn, group_id, found, time)

    async def facts_between(
        self, group_id: str, a_uuid: str, b_uuid: str, flt: FactFilter = ANY_FACT
    ) -> list[Fact]:
        return await reads.facts_between(self._conn, group_id, a_uuid, b_uuid, flt)

    async def facts_around(
        self, group_id: str, entity_uuids: Sequence[str], flt: FactFilter = ANY_FACT, limit: int = 200
    ) -> list[Fact]:
        return await reads.facts_around(self._conn, group_id, entity_uuids, flt, limit)

    async def neighbours(
        self, group_id: str, entity_uuids: Sequence[str], depth: int = 1, flt: FactFilter = ANY_FACT
    ) -> dict[str, int]:
        return await lookups.neighbours(self._conn, group_id, entity_uuids, depth, flt)

    async def mention_counts(
        self, group_id: str, entity_uuids: Sequence[str], time: TimeFilter = CURRENT
    ) -> dict[str, int]:
        """Every requested uuid is a key (0 when never mentioned or unknown)."""
        return await reads.mention_counts(self._conn, group_id, entity_uuids, time)

    # --- search ------------------------------------------------------------------------------------------
    async def search_entities_text(
        self, group_ids: Sequence[str], query: str, limit: int = 10, flt: EntityFilter = ANY_ENTITY
    ) -> list[Hit[Entity]]:
        return await reads.search_entities_text(self._conn, group_ids, query, limit, flt)

    async def search_facts_text(
        self, group_ids: Sequence[str], query: str, limit: int = 10, flt: FactFilter = ANY_FACT
    ) -> list[Hit[Fact]]:
        return await reads.search_facts_text(self._conn, group_ids, query, limit, flt)

    async def search_episodes_text(
        self, group_ids: Sequence[str], query: str, limit: int = 10, time: TimeFilter = CURRENT
    ) -> list[Hit[Episode]]:
        return await reads.search_episodes_text(self._conn, group_ids, query, limit, time)

    async def search_entities_vector(
        self,
        group_ids: Sequence[str],
        vector: Sequence[float],
        limit: int = 10,
        flt: EntityFilter = ANY_ENTITY,
    ) -> list[Hit[Entity]]:
        return await reads.search_entities_vector(
            self._conn, group_ids, vector, limit, flt, index_dim=await self._index_dim(q.ENTITY_VECTOR_INDEX)
        )

    async def search_facts_vector(
        self, group_ids: Sequence[str], vector: Sequence[float], limit: int = 10, flt: FactFilter = ANY_FACT
    ) -> list[Hit[Fact]]:
        return await reads.search_facts_vector(
            self._conn, group_ids, vector, limit, flt, index_dim=await self._index_dim(q.FACT_VECTOR_INDEX)
        )

    async def search_episodes_vector(
        self, group_ids: Sequence[str], vector: Sequence[float], limit: int = 10, time: TimeFilter = CURRENT
    ) -> list[Hit[Episode]]:
        """Episodes by cosine of ``content_embedding`` (episodes without one are not candidates)."""
        return await reads.search_episodes_vector(
            self._conn,
            group_ids,
            vector,
            limit,
            time,
            index_dim=await self._index_dim(q.EPISODE_VECTOR_INDEX),
        )

    async def stats(self, group_id: str | None = None) -> StoreStats:
        return await reads.stats(self._conn, group_id)

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
        return await derived.owed_summaries(self._conn, group_id)

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
        correction.check()  # before anything is read
        await corrections.apply_correction(self._conn, correction, await self._dim())

    async def corrections(
        self, group_id: str, *, subject: str | None = None, limit: int = 100
    ) -> list[Correction]:
        return await corrections.corrections(self._conn, group_id, subject, limit)

    async def get_correction(self, group_id: str, uuid: str) -> Correction | None:
        return await corrections.get_correction(self._conn, group_id, uuid)

    async def mentions(self, group_id: str, entity_uuids: Sequence[str]) -> list[Mention]:
        return await reads.mentions(self._conn, group_id, entity_uuids)

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
        return await groups.group_ids(self._conn)

    async def dump(
        self, group_ids: Sequence[str], *, vectors: bool = False
    ) -> AsyncGenerator[DumpItem, None]:
        """See ``groups``: read in one transaction holding the groups' locks."""
        async for item in groups.dump(self._conn, list(group_ids), vectors):
            yield item

    async def load_group(self, dump: GroupDump) -> None:
        dump.check()  # before anything is read
        await groups.load_group(self._conn, dump, await self._dim())

    # --- the redaction vault (see vault) ------------------------------------------------------------------
    async def vault_header(self, group_id: str, proposed: VaultHeader) -> VaultHeader:
        return await vault.vault_header(self._conn, group_id, proposed)

    async def placeholders(self, group_id: str, entries: Sequence[VaultEntry]) -> list[int]:
        return await vault.placeholders(self._conn, group_id, entries)

    async def sealed_values(
        self, group_id: str, refs: Sequence[tuple[str, int]]
    ) -> dict[tuple[str, int], bytes]:
        return await vault.sealed_values(self._conn, group_id, refs)

    async def read_vault_header(self, group_id: str) -> VaultHeader | None:
        return await vault.read_vault_header(self._conn, group_id)

    async def known_placeholders(self, group_id: str, digests: Sequence[bytes]) -> list[int | None]:
        return await vault.known_placeholders(self._conn, group_id, digests)

    async def held_placeholders(self, group_id: str) -> list[tuple[str, int]]:
        return await vault.held_placeholders(self._conn, group_id)

    async def reserve_placeholders(
        self, group_id: str, refs: Sequence[tuple[str, int]]
    ) -> list[tuple[str, int]]:
        return await vault.reserve_placeholders(self._conn, group_id, refs)

    async def delete_group(self, group_id: str) -> StoreStats:
        return await groups.delete_group(self._conn, group_id, fact_params(ANY_FACT))

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
        return await forgetting.forgettings(self._conn, group_id, limit)

    async def retention_policies(self, group_id: str | None = None) -> list[RetentionPolicy]:
        return await forgetting.retention_policies(self._conn, group_id)

    async def set_retention(self, policy: RetentionPolicy) -> None:
        await forgetting.set_retention(self._conn, policy)

    async def clear_retention(self, group_id: str) -> bool:
        return await forgetting.clear_retention(self._conn, group_id)
