"""EmbeddedStore: the GraphStore on one SQLite file (WAL, FTS5) with numpy BM25 and vector search.

Every SQLite call runs on ONE dedicated SQLite thread that owns the connection and the in-memory indexes,
serialized, foreground calls first (:class:`.connection.Connection`, the threading model); ``:memory:``
works the same way.

The file is opened, and its schema created or checked, on the first call (``setup`` or any other), so
constructing a store does no I/O. Errors from SQLite surface as :class:`~epigraph.errors.StoreError`
(:class:`~epigraph.errors.StoreUnavailable` when the file cannot be opened or the store is closed,
:class:`~epigraph.errors.SchemaMismatch` for a file written by a newer schema).
"""

from __future__ import annotations

import asyncio
import itertools
import sqlite3
from collections.abc import AsyncGenerator, Callable, Iterable, Sequence
from datetime import datetime
from types import TracebackType
from typing import Concatenate, ParamSpec, TypeVar

from ...errors import StoreError
from ..changes import ChangeRecords, Window
from ..corrections import Correction
from ..decisions import DecisionRecord
from ..derived import Community, ConversationSummary
from ..forgetting import ForgetOutcome, ForgetRecord, ForgetRequest, RetentionPolicy
from ..model import Entity, Episode, EpisodeStatus, Fact, Mention, utc_now
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
from . import (
    audit,
    claims,
    corrections,
    decisions,
    derived,
    entity_time,
    forgetting,
    groups,
    reads,
    search,
    vault,
    writes,
)
from .ann import EXACT_BELOW
from .changes import changes as read_changes
from .connection import Connection
from .db import Db

P = ParamSpec("P")
R = TypeVar("R")


class EmbeddedStore:
    """GraphStore (the core and every optional role) on a single SQLite file; ``path=":memory:"`` for a
    throwaway graph. ``create=False``: a missing file raises :class:`~epigraph.errors.StoreNotFound` on
    first use instead of becoming an empty graph (what reading commands want)."""

    def __init__(
        self, path: str = "./epigraph.db", *, create: bool = True, exact_below: int | None = EXACT_BELOW
    ) -> None:
        self.path = path
        self.create = create
        self.exact_below = exact_below
        self._conn = Connection(repr(self), path, create, exact_below)

    def __repr__(self) -> str:
        return f"EmbeddedStore({self.path!r})"

    async def __aenter__(self) -> EmbeddedStore:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    # --- plumbing (the calls on the SQLite thread: connection.Connection) ------------------------------
    async def _run(self, fn: Callable[Concatenate[Db, P], R], *args: P.args, **kwargs: P.kwargs) -> R:
        return await self._conn.run(fn, *args, **kwargs)

    async def _read(
        self, fn: Callable[Concatenate[sqlite3.Connection, P], R], *args: P.args, **kwargs: P.kwargs
    ) -> R:
        return await self._conn.read(fn, *args, **kwargs)

    # --- lifecycle ------------------------------------------------------------------------------------
    async def setup(self, embedding_dim: int) -> None:
        """Create or check the schema and record the embedding dimension (idempotent)."""
        await self._run(Db.set_dim, embedding_dim)

    async def close(self) -> None:
        """Close the connection and stop the SQLite thread once the calls already made have run.

        Idempotent; calls made afterwards raise StoreUnavailable.
        """
        await self._conn.close()

    # --- episodes -------------------------------------------------------------------------------------
    async def save_episode(self, episode: Episode) -> None:
        await self._run(writes.save_episode, episode)

    async def get_episode(self, group_id: str, uuid: str) -> Episode | None:
        return await self._read(reads.get_episode, group_id, uuid)

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
        return await self._read(reads.episodes, group_id, since, until, status, limit, newest_first)

    async def episodes_mentioning(
        self, group_id: str, entity_uuid: str, limit: int = 100, time: TimeFilter = CURRENT
    ) -> list[Episode]:
        return await self._read(reads.episodes_mentioning, group_id, entity_uuid, limit, time)

    async def episodes_around(
        self, group_id: str, uuids: Sequence[str], window: int = 1, time: TimeFilter = CURRENT
    ) -> list[Episode]:
        return await self._read(reads.episodes_around, group_id, list(uuids), window, time)

    async def delete_episode(self, group_id: str, uuid: str) -> DeletionResult:
        return await self._run(writes.delete_episode, group_id, uuid)

    async def write_episode(self, write: EpisodeWrite) -> bool:
        return await self._run(writes.write_episode, write)

    async def claim_episode(self, group_id: str, uuid: str, owner: str, seconds: float) -> Claim | None:
        return await self._run(claims.claim_episode, group_id, uuid, owner, seconds)

    async def release_episode(self, group_id: str, uuid: str, owner: str) -> None:
        await self._run(claims.release_episode, group_id, uuid, owner)

    # `writes` (the Protocol's name, so keyword calls work on every store) shadows the module here only.
    async def write_episodes(self, writes: Iterable[EpisodeWrite]) -> None:
        for write in writes:
            await self.write_episode(write)

    # --- lookups --------------------------------------------------------------------------------------
    async def get_entities(
        self, group_id: str, uuids: Sequence[str], time: TimeFilter = CURRENT
    ) -> list[Entity]:
        return await self._read(entity_time.get_entities, group_id, list(uuids), time)

    async def get_facts(self, group_id: str, uuids: Sequence[str]) -> list[Fact]:
        return await self._read(reads.get_facts, group_id, list(uuids))

    async def entities_by_names(
        self, group_id: str, names: Sequence[str], time: TimeFilter = CURRENT
    ) -> dict[str, list[Entity]]:
        return await self._read(entity_time.entities_by_names, group_id, list(names), time)

    async def facts_between(
        self, group_id: str, a_uuid: str, b_uuid: str, flt: FactFilter = ANY_FACT
    ) -> list[Fact]:
        return await self._read(reads.facts_between, group_id, a_uuid, b_uuid, flt, utc_now())

    async def facts_around(
        self, group_id: str, entity_uuids: Sequence[str], flt: FactFilter = ANY_FACT, limit: int = 200
    ) -> list[Fact]:
        return await self._read(reads.facts_around, group_id, list(entity_uuids), flt, limit, utc_now())

    async def neighbours(
        self, group_id: str, entity_uuids: Sequence[str], depth: int = 1, flt: FactFilter = ANY_FACT
    ) -> dict[str, int]:
        return await self._read(entity_time.neighbours, group_id, list(entity_uuids), depth, flt, utc_now())

    async def mention_counts(
        self, group_id: str, entity_uuids: Sequence[str], time: TimeFilter = CURRENT
    ) -> dict[str, int]:
        return await self._read(entity_time.mention_counts, group_id, list(entity_uuids), time)

    # --- search ---------------------------------------------------------------------------------------
    async def search_entities_text(
        self, group_ids: Sequence[str], query: str, limit: int = 10, flt: EntityFilter = ANY_ENTITY
    ) -> list[Hit[Entity]]:
        return await self._run(search.search_entities_text, list(group_ids), query, limit, flt)

    async def search_facts_text(
        self, group_ids: Sequence[str], query: str, limit: int = 10, flt: FactFilter = ANY_FACT
    ) -> list[Hit[Fact]]:
        return await self._run(search.search_facts_text, list(group_ids), query, limit, flt, utc_now())

    async def search_episodes_text(
        self, group_ids: Sequence[str], query: str, limit: int = 10, time: TimeFilter = CURRENT
    ) -> list[Hit[Episode]]:
        return await self._run(search.search_episodes_text, list(group_ids), query, limit, time)

    async def search_entities_vector(
        self,
        group_ids: Sequence[str],
        vector: Sequence[float],
        limit: int = 10,
        flt: EntityFilter = ANY_ENTITY,
    ) -> list[Hit[Entity]]:
        return await self._run(search.search_entities_vector, list(group_ids), list(vector), limit, flt)

    async def search_facts_vector(
        self, group_ids: Sequence[str], vector: Sequence[float], limit: int = 10, flt: FactFilter = ANY_FACT
    ) -> list[Hit[Fact]]:
        return await self._run(
            search.search_facts_vector, list(group_ids), list(vector), limit, flt, utc_now()
        )

    async def search_episodes_vector(
        self, group_ids: Sequence[str], vector: Sequence[float], limit: int = 10, time: TimeFilter = CURRENT
    ) -> list[Hit[Episode]]:
        return await self._run(search.search_episodes_vector, list(group_ids), list(vector), limit, time)

    async def prepare_vectors(self, group_ids: Sequence[str]) -> int:
        """Load the groups' vectors and build the approximate index of every one large enough
        (``exact_below`` rows, usearch installed), waiting until they are ready; returns how
        many there are, and writes them next to the database (``ann_file``: read instead of built on the
        next open). Searches do the same on first use, and search exactly until the index is ready:
        call this at startup to have the index's speed from the first search."""
        building = await self._run(Db.start_indexes, list(group_ids))
        for future in building:
            await asyncio.wrap_future(future)
        ready = await self._run(Db.indexes_ready, list(group_ids))
        await self._run(Db.save_indexes)
        return ready

    async def stats(self, group_id: str | None = None) -> StoreStats:
        return await self._read(reads.stats, group_id, utc_now())

    # --- derived records ------------------------------------------------------------------------------
    async def fact_endpoints(self, group_id: str, flt: FactFilter = ANY_FACT) -> list[tuple[str, str]]:
        return await self._read(derived.fact_endpoints, group_id, flt, utc_now())

    async def communities(self, group_id: str) -> list[Community]:
        return await self._read(derived.communities, group_id)

    async def replace_communities(self, group_id: str, communities: Sequence[Community]) -> None:
        await self._run(derived.replace_communities, group_id, list(communities))

    async def chains(self, group_id: str) -> list[Chain]:
        return await self._read(derived.chains, group_id)

    async def chain_episodes(self, group_id: str, key: str, read: ChainRead = ALL_OF_CHAIN) -> list[Episode]:
        return await self._read(derived.chain_episodes, group_id, key, read)

    async def conversation_summaries(
        self, group_id: str, keys: Sequence[str] | None = None
    ) -> list[ConversationSummary]:
        wanted = None if keys is None else list(keys)
        return await self._read(derived.conversation_summaries, group_id, wanted)

    async def save_conversation_summary(self, summary: ConversationSummary) -> bool:
        return await self._run(derived.save_conversation_summary, summary)

    async def owed_summaries(self, group_id: str) -> list[str]:
        return await self._read(derived.owed_summaries, group_id)

    # --- corrections by hand ----------------------------------------------------------------------------
    async def apply_correction(self, correction: Correction) -> None:
        await self._run(corrections.apply_correction, correction)

    async def corrections(
        self, group_id: str, *, subject: str | None = None, limit: int = 100
    ) -> list[Correction]:
        return await self._read(reads.corrections, group_id, subject, limit)

    async def get_correction(self, group_id: str, uuid: str) -> Correction | None:
        return await self._read(reads.get_correction, group_id, uuid)

    async def mentions(self, group_id: str, entity_uuids: Sequence[str]) -> list[Mention]:
        return await self._read(reads.mentions, group_id, list(entity_uuids))

    # --- what changed ---------------------------------------------------------------------------------
    async def changes(self, group_id: str, window: Window, limit: int = 1000) -> ChangeRecords:
        return await self._read(read_changes, group_id, window, limit)

    # --- decision records ------------------------------------------------------------------------------
    async def decision_records(self, group_id: str, episode_uuids: Sequence[str]) -> list[DecisionRecord]:
        return await self._read(decisions.records_of, group_id, list(episode_uuids))

    async def decisions_naming(self, group_id: str, name: str, limit: int = 50) -> list[DecisionRecord]:
        return await self._read(decisions.records_naming, group_id, name, limit)

    # --- whole groups -----------------------------------------------------------------------------------
    async def groups(self) -> list[str]:
        return await self._read(reads.groups)

    async def dump(
        self, group_ids: Sequence[str], *, vectors: bool = False
    ) -> AsyncGenerator[DumpItem, None]:
        """See ``groups``: a file is read through a snapshot connection of its own, page by page in a
        thread of its own (``asyncio.to_thread``); ``:memory:`` in one call on the store's SQLite thread."""
        wanted = list(group_ids)
        if self.path == ":memory:":
            for item in await self._run(groups.read_all, wanted, vectors):
                yield item
            return
        await self._read(reads.groups)  # the file exists and has the current schema
        try:
            snapshot = await asyncio.to_thread(groups.Snapshot, self.path)
        except sqlite3.Error as exc:
            raise StoreError(f"cannot read a snapshot of {self.path!r}: {exc}") from exc
        try:
            rows = groups.records(snapshot.conn, wanted, vectors)
            while page := await asyncio.to_thread(_page, rows):
                for item in page:
                    yield item
        except sqlite3.Error as exc:
            raise StoreError(f"SQLite error while dumping {self.path!r}: {exc}") from exc
        finally:
            await asyncio.to_thread(snapshot.close)

    async def load_group(self, dump: GroupDump) -> None:
        await self._run(groups.load_group, dump)

    async def delete_group(self, group_id: str) -> StoreStats:
        return await self._run(groups.delete_group, group_id)

    # --- forgetting -------------------------------------------------------------------------------------
    async def forget(self, request: ForgetRequest) -> ForgetOutcome:
        return await self._run(forgetting.forget, request)

    async def forgettings(self, group_id: str, limit: int = 100) -> list[ForgetRecord]:
        return await self._read(audit.forgettings, group_id, limit)

    async def retention_policies(self, group_id: str | None = None) -> list[RetentionPolicy]:
        return await self._read(audit.retention_policies, group_id)

    async def set_retention(self, policy: RetentionPolicy) -> None:
        await self._run(audit.set_retention, policy)

    async def clear_retention(self, group_id: str) -> bool:
        return await self._run(audit.clear_retention, group_id)

    # --- the redaction vault ----------------------------------------------------------------------------
    async def vault_header(self, group_id: str, proposed: VaultHeader) -> VaultHeader:
        return await self._run(vault.vault_header, group_id, proposed)

    async def placeholders(self, group_id: str, entries: Sequence[VaultEntry]) -> list[int]:
        return await self._run(vault.placeholders, group_id, list(entries))

    async def sealed_values(
        self, group_id: str, refs: Sequence[tuple[str, int]]
    ) -> dict[tuple[str, int], bytes]:
        return await self._read(vault.sealed_values, group_id, list(refs))

    async def read_vault_header(self, group_id: str) -> VaultHeader | None:
        return await self._read(vault.read_vault_header, group_id)

    async def known_placeholders(self, group_id: str, digests: Sequence[bytes]) -> list[int | None]:
        return await self._read(vault.known_placeholders, group_id, list(digests))

    async def held_placeholders(self, group_id: str) -> list[tuple[str, int]]:
        return await self._read(vault.held_placeholders, group_id)

    async def reserve_placeholders(
        self, group_id: str, refs: Sequence[tuple[str, int]]
    ) -> list[tuple[str, int]]:
        return await self._run(vault.reserve_placeholders, group_id, list(refs))


DUMP_PAGE = 500
"""Records a dump of a file reads per trip to a thread (``asyncio.to_thread``)."""


def _page(rows: Iterable[DumpItem]) -> list[DumpItem]:
    return list(itertools.islice(rows, DUMP_PAGE))
