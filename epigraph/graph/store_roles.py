"""The store's optional roles besides the derived views and corrections: whole groups (list, count,
dump, load, delete), bulk writes, forgetting, retention policies, the redaction vault, what changed in
a time window and the decision records. A feature asks for each by itself (``graph.roles.role``);
``graph.store`` declares the core and the other roles, and names these in its unions (the rules every
store follows are in its docstring)."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Iterable, Sequence
from typing import Protocol, runtime_checkable

from .changes import ChangeRecords, Window
from .decisions import DecisionRecord
from .forgetting import ForgetOutcome, ForgetRecord, ForgetRequest, RetentionPolicy
from .store_records import DumpItem, EpisodeWrite, GroupDump, StoreStats, VaultEntry, VaultHeader


@runtime_checkable
class WholeGroups(Protocol):
    """Whole groups: which exist, their counts, and the consistent dump, the load and the deletion of
    a group (``transfer``)."""

    async def groups(self) -> list[str]:
        """Every group that holds an episode, an entity, a correction or a forgetting's audit record,
        sorted (a cross-group read)."""

    async def stats(self, group_id: str | None = None) -> StoreStats:
        """Counts of one group, or of every group when ``group_id`` is None (a cross-group read)."""

    def dump(self, group_ids: Sequence[str], *, vectors: bool = False) -> AsyncGenerator[DumpItem, None]:
        """Every record of the groups, read from one consistent state (see ``graph.store``): per
        group in the given order, its episodes (by reference_time, created_at, uuid), the summaries it
        owes (one ``OwedSummaries``, when it owes any), entities and facts (by created_at, uuid),
        mentions (by episode, entity), corrections (by created_at, uuid), then its derived records:
        communities (as ``communities`` orders them) and conversation summaries (by key), and last its
        forgetting's audit records (by at, uuid) and its retention policy.
        Embeddings only with ``vectors``. Close the iterator (``aclosing``) to let the groups' writers go
        on early."""

    async def load_group(self, dump: GroupDump) -> None:
        """Write a whole group in one transaction, into a group that holds nothing, derived records
        included (:class:`~epigraph.errors.ConflictError` otherwise, nothing written). Records are
        written as given: ids, times, provenance, invalidations, corrections, communities with their
        members, conversation summaries with their versions, the summaries owed, audit records and the
        retention policy."""

    async def delete_group(self, group_id: str) -> StoreStats:
        """Delete every record of the group in one transaction (derived records, claims, audit records
        and its retention policy too); returns what it held (all zero for an unknown group)."""


@runtime_checkable
class BulkWrites(Protocol):
    """Many episodes written in one call (an optional role: a bulk load where the store can go faster
    than one ``write_episode`` after another)."""

    async def write_episodes(self, writes: Iterable[EpisodeWrite]) -> None:
        """``write_episode`` for each, in order; the first failure stops it and is raised (the episodes
        before it stay written, it and the rest are not). Faster than the loop where a store can overlap
        one episode's preparation with the previous one's write."""


@runtime_checkable
class Forgetting(Protocol):
    """Forgetting in one group: a subject (an entity, its facts, its names in what stays) or old episodes
    (retention), in one transaction, with its audit record (``graph.forgetting``)."""

    async def forget(self, request: ForgetRequest) -> ForgetOutcome:
        """In one transaction, which no other writer of the group runs beside: read the group's records,
        plan ``request`` over them (``forget_plan.plan_forgetting``: the preview's plan when nothing
        changed), refuse with :class:`~epigraph.errors.ConflictError` (nothing written) when
        ``request.expect`` is given and is not that plan's digest, or when a rewritten text has no
        embedding in ``request.vectors``; else write it (``ForgetWrite``: the deletions, the rewritten
        records with their embeddings, the communities, the owed marks) and its audit record. With
        ``request.compact``, the store then compacts what it keeps on disk, so that no byte of what was
        deleted or rewritten stays in its files where the store can help it (``Compaction``). The
        in-memory indexes (terms, vectors) follow at the commit."""

    async def forgettings(self, group_id: str, limit: int = 100) -> list[ForgetRecord]:
        """The group's audit records, newest first (``at``, then uuid)."""


@runtime_checkable
class Retention(Protocol):
    """The groups' retention policies: how many days each keeps its episodes (``forget.retention``
    forgets the older ones)."""

    async def retention_policies(self, group_id: str | None = None) -> list[RetentionPolicy]:
        """The group's policy (none, or one), or every group's when ``group_id`` is None, by group."""

    async def set_retention(self, policy: RetentionPolicy) -> None:
        """Store ``policy`` as its group's (replacing the one it had)."""

    async def clear_retention(self, group_id: str) -> bool:
        """Drop the group's policy; whether it had one."""


@runtime_checkable
class RedactionVault(Protocol):
    """The placeholders of a group's redacted personal data (``epigraph.privacy``): which number
    stands for which digest, and the originals only as sealed by the caller's key. Deleted with the
    group (``delete_group``); a value no text holds any more leaves it with the forgetting that took its
    last text out (``Forgetting.forget``); not part of a dump."""

    async def vault_header(self, group_id: str, proposed: VaultHeader) -> VaultHeader:
        """The group's vault header; ``proposed`` is stored and returned when it has none yet (of two
        processes proposing at once, one header wins and both get it)."""

    async def placeholders(self, group_id: str, entries: Sequence[VaultEntry]) -> list[int]:
        """Each entry's placeholder number, in order: the stored one of its digest, else the next free
        number of its kind (1, 2, ...), stored with its ``sealed`` value, atomically (two processes
        never give one number to two digests, nor two numbers to one)."""

    async def sealed_values(
        self, group_id: str, refs: Sequence[tuple[str, int]]
    ) -> dict[tuple[str, int], bytes]:
        """The sealed originals of the given ``(kind, number)`` placeholders the vault keeps."""

    async def read_vault_header(self, group_id: str) -> VaultHeader | None:
        """The group's vault header, or None when it has no vault; never writes (a search, a check)."""

    async def known_placeholders(self, group_id: str, digests: Sequence[bytes]) -> list[int | None]:
        """Each digest's placeholder number, in order, or None where the vault has none; never writes."""

    async def held_placeholders(self, group_id: str) -> list[tuple[str, int]]:
        """The ``(kind, number)`` placeholders the vault holds a value for (reserved ones not), by kind
        and number; never writes (a forgetting's preview: which values it would take out)."""

    async def reserve_placeholders(
        self, group_id: str, refs: Sequence[tuple[str, int]]
    ) -> list[tuple[str, int]]:
        """Take the ``(kind, number)`` placeholders that text from elsewhere holds (a loaded dump), so the
        vault never gives them to a new value: each is kept under :func:`reserved_digest`. Returns the
        ones the vault already numbers for a value of its own (a clash), and then reserves none;
        reserving again is a no-op."""


@runtime_checkable
class ChangeReads(Protocol):
    """What changed in a time window: the records ``graph.changes.what_changed`` reads."""

    async def changes(self, group_id: str, window: Window, limit: int = 1000) -> ChangeRecords:
        """The group's records for ``window`` (``graph.changes.ChangeRecords``): every fact with a time
        in it on either axis (a start, ``valid_at`` or ``stated_at``; ``invalid_at``; ``created_at``;
        ``expired_at``), every correction and every forgetting's audit record made in it, each at most
        ``limit`` (the oldest recorded first; ``truncated`` when more were there), with the stored
        entities and episodes they name (``graph.changes.cited``). Unbounded sides of the window are no
        bound."""


@runtime_checkable
class DecisionReads(Protocol):
    """The decision records episodes were written with (``graph.decisions``; ``EpisodeWrite.decisions``)."""

    async def decision_records(self, group_id: str, episode_uuids: Sequence[str]) -> list[DecisionRecord]:
        """The records of those of ``episode_uuids`` that have one, in their order (an unknown uuid gives
        none)."""

    async def decisions_naming(self, group_id: str, name: str, limit: int = 50) -> list[DecisionRecord]:
        """The records of the group whose name steps are about ``name`` (normalized alike: as said or as
        repaired, ``DecisionRecord.names``), newest first, at most ``limit``."""
