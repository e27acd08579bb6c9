"""The store's Protocols: the only thing the pipeline, search and the rest know about storage.

Async Protocols in domain types, one per role, cut along what consumers call, so a consumer asks only
for what it calls (and a fake or a third store implements only that). The roles: :class:`EpisodeLog`
(the ingestion queue's writes and claims), :class:`GraphLookups`, :class:`GraphSearch`,
:class:`ViewReads` and :class:`ViewUpkeep` (the derived views read, and kept: with the entity summaries
a batch still owes), :class:`CorrectionReads`, :class:`CorrectionWrites`, :class:`ChangeReads` (what
changed in a time window), :class:`WholeGroups` (list, count, dump, load, delete), :class:`BulkWrites`,
:class:`Forgetting` (a subject or old episodes forgotten, with the audit record), :class:`Retention`
(the groups' retention policies) and :class:`RedactionVault` (the placeholders of personal data
redacted at the door, ``epigraph.privacy``).

:class:`GraphStore` is the core every store implements (25 methods): the episode log, the lookups and
the search, with ``setup`` and ``close``; ingestion, search, ``ask`` and the entity view need nothing
else. The other roles are optional: a feature asks for its role with ``graph.roles.role``, which raises
:class:`~epigraph.errors.StoreRoleMissing` (naming the feature, the role and the methods missing) when
the store has not got it; the readers of an optional role degrade without it (``graph.roles.optional``:
search, ``ask`` and the explore views take :class:`GraphReads` and read :class:`ViewReads` and
:class:`CorrectionReads` when the store has them). The unions at the end of the module declare nothing
of their own: each names the roles one consumer combines. Every Protocol has at most 25 methods, its
roles' included (``tests/graph/test_store_roles.py``).

Two implementations pass one contract suite (``tests/graph``), each implementing every role:
``graph.embedded.EmbeddedStore`` (SQLite, the default) and ``graph.neo4j.Neo4jStore``. Their rules:

- every read and write is scoped by ``group_id``; nothing crosses groups;
- ``write_episode`` is atomic: all of one episode's entities, facts (new and updated, including the ones it
  invalidated), mentions, the summaries it leaves owed or pays, and the episode itself, or nothing;
  ``write_episodes`` (bulk loads) writes many in order, each atomically, and stops at the first that
  fails (the ones before it stay written);
- upserts are idempotent (by uuid): writing the same thing twice changes nothing;
- temporal filtering follows ``graph.temporal`` exactly (see :class:`~epigraph.graph.temporal.TimeFilter`,
  defined there with its executable definitions, ``matches`` for facts and ``episode_matches`` for
  episodes, and re-exported here), inside the store's query;
- strings are stored verbatim; user text never becomes query syntax;
- an episode has at most one live claim (``claim_episode``): a lease with an owner and an expiry, taken
  atomically against other processes and connections, judged by the store's own clock.
- ``apply_correction``, ``load_group``, ``delete_group`` and ``forget`` are atomic too, and ``dump`` reads one
  consistent state of its groups (a snapshot, or with the groups' writers held off), so a dump taken
  while episodes are written never holds half an episode.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol, runtime_checkable

from .changes import ChangeRecords, Window
from .corrections import Correction
from .derived import Community, ConversationSummary
from .model import Entity, Episode, EpisodeStatus, Fact, Mention
from .store_records import (
    ALL_OF_CHAIN,
    ANY_ENTITY,
    ANY_FACT,
    Chain,
    ChainRead,
    Claim,
    DeletionResult,
    DumpItem,
    DumpRecord,
    EntityFilter,
    EpisodeWrite,
    FactFilter,
    GroupDump,
    Hit,
    OwedSummaries,
    StoreStats,
    VaultEntry,
    VaultHeader,
    check_communities,
    holds_value,
    reserved_digest,
    unknown_member,
)
from .store_roles import Forgetting, WholeGroups
from .temporal import CURRENT as CURRENT
from .temporal import EVERYTHING as EVERYTHING
from .temporal import TimeFilter as TimeFilter

# The records live in store_records; consumers import them from here, beside the Protocols.
__all__ = [
    "ALL_OF_CHAIN",
    "ANY_ENTITY",
    "ANY_FACT",
    "Chain",
    "ChainRead",
    "ChangeRecords",
    "Claim",
    "DeletionResult",
    "DumpItem",
    "DumpRecord",
    "EntityFilter",
    "EpisodeWrite",
    "FactFilter",
    "GroupDump",
    "Hit",
    "OwedSummaries",
    "StoreStats",
    "VaultEntry",
    "VaultHeader",
    "Window",
    "check_communities",
    "holds_value",
    "reserved_digest",
    "unknown_member",
]


@runtime_checkable
class EpisodeLog(Protocol):
    """What the ingestion queue writes: an episode's record and status, its one atomic write (with
    everything it adds), its removal, and the claim of the process that runs it."""

    async def save_episode(self, episode: Episode) -> None:
        """Upsert the episode alone (used to save it ``pending`` first and to mark it ``failed``)."""

    async def write_episode(self, write: EpisodeWrite) -> bool:
        """Write it atomically; ``True``, or ``False`` when ``write.unless_done`` and the stored episode
        was already ``done`` (nothing written)."""

    async def delete_episode(self, group_id: str, uuid: str) -> DeletionResult:
        """Remove an episode with provenance cleanup, atomically.

        Facts only it supports are removed; it is dropped from other facts' ``episodes``; facts it
        invalidated are restored (``invalid_at`` back to ``previous_invalid_at``, ``expired_at`` and
        ``invalidated_by`` cleared); entities that no other episode mentions are removed with their facts.
        """

    async def claim_episode(self, group_id: str, uuid: str, owner: str, seconds: float) -> Claim | None:
        """Claim the stored episode for ``owner`` until ``seconds`` from now (the store's clock), in one
        atomic step against every other connection: taken when it has no claim or its claim lapsed,
        renewed when ``owner`` holds it, refused when another owner's claim is live. Returns the claim in
        force afterwards (``owner``'s, or the other owner's when refused); None when the group has no
        such episode. Deleting the episode drops its claim; saving or writing it keeps it."""

    async def release_episode(self, group_id: str, uuid: str, owner: str) -> None:
        """Drop ``owner``'s claim on the episode (a claim of another owner, or none, stays as it is)."""


@runtime_checkable
class GraphLookups(Protocol):
    """Lookups of a group's episodes, entities, facts and mentions: by key, name, time and
    neighbourhood."""

    async def get_episode(self, group_id: str, uuid: str) -> Episode | None: ...

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
        """Episodes whose reference_time is in ``[since, until)``; ties ordered by created_at."""

    async def episodes_mentioning(
        self, group_id: str, entity_uuid: str, limit: int = 100, time: TimeFilter = CURRENT
    ) -> list[Episode]:
        """The episodes that mention the entity and pass ``time`` (``temporal.episode_matches``), newest
        first."""

    async def episodes_around(
        self, group_id: str, uuids: Sequence[str], window: int = 1, time: TimeFilter = CURRENT
    ) -> list[Episode]:
        """The neighbours of the episodes ``uuids``: the episodes 1 to ``window`` places before or after
        one of them in the group's episode order (reference_time, then created_at, then uuid) among those
        passing ``time`` (``temporal.episode_matches``), except ``uuids`` themselves; oldest first, each
        once. Unknown uuids have none. Search reads the turns around its hits with it (their session
        neighbours)."""

    async def get_entities(
        self, group_id: str, uuids: Sequence[str], time: TimeFilter = CURRENT
    ) -> list[Entity]:
        """The entities ``uuids`` (in that order) as they were under ``time``
        (``entity_time.entity_as_of``: those that did not exist yet left out; only the aliases said
        by then; a summary written later withheld)."""

    async def get_facts(self, group_id: str, uuids: Sequence[str]) -> list[Fact]: ...

    async def entities_by_names(
        self, group_id: str, names: Sequence[str], time: TimeFilter = CURRENT
    ) -> dict[str, list[Entity]]:
        """For each given name, the entities whose normalized name or alias equals its normalized form,
        as they were under ``time`` (as ``get_entities``: an alias said only later finds nothing)."""

    async def facts_between(
        self, group_id: str, a_uuid: str, b_uuid: str, flt: FactFilter = ANY_FACT
    ) -> list[Fact]:
        """Facts with endpoints {a, b} in either direction."""

    async def facts_around(
        self, group_id: str, entity_uuids: Sequence[str], flt: FactFilter = ANY_FACT, limit: int = 200
    ) -> list[Fact]:
        """Facts with at least one endpoint in ``entity_uuids``."""

    async def neighbours(
        self, group_id: str, entity_uuids: Sequence[str], depth: int = 1, flt: FactFilter = ANY_FACT
    ) -> dict[str, int]:
        """BFS over facts passing ``flt``: entity uuid -> hop distance (1..depth) from the nearest start
        entity; only entities that exist under ``flt.time`` are reached (``entity_time.entity_exists``)."""

    async def mention_counts(
        self, group_id: str, entity_uuids: Sequence[str], time: TimeFilter = CURRENT
    ) -> dict[str, int]:
        """The mentions of each entity by episodes passing ``time`` (``temporal.episode_matches``);
        every requested uuid is a key (0 when none)."""

    async def mentions(self, group_id: str, entity_uuids: Sequence[str]) -> list[Mention]:
        """The mentions of these entities (by any episode of the group)."""


@runtime_checkable
class GraphSearch(Protocol):
    """The fulltext (BM25) and vector search of entities, facts and episodes, across groups
    (``search`` fuses them)."""

    async def search_entities_text(
        self, group_ids: Sequence[str], query: str, limit: int = 10, flt: EntityFilter = ANY_ENTITY
    ) -> list[Hit[Entity]]: ...

    async def search_facts_text(
        self, group_ids: Sequence[str], query: str, limit: int = 10, flt: FactFilter = ANY_FACT
    ) -> list[Hit[Fact]]: ...

    async def search_episodes_text(
        self, group_ids: Sequence[str], query: str, limit: int = 10, time: TimeFilter = CURRENT
    ) -> list[Hit[Episode]]:
        """Episodes by BM25 of ``content`` among those passing ``time`` (``temporal.episode_matches``)."""

    async def search_entities_vector(
        self,
        group_ids: Sequence[str],
        vector: Sequence[float],
        limit: int = 10,
        flt: EntityFilter = ANY_ENTITY,
    ) -> list[Hit[Entity]]: ...

    async def search_facts_vector(
        self, group_ids: Sequence[str], vector: Sequence[float], limit: int = 10, flt: FactFilter = ANY_FACT
    ) -> list[Hit[Fact]]: ...

    async def search_episodes_vector(
        self, group_ids: Sequence[str], vector: Sequence[float], limit: int = 10, time: TimeFilter = CURRENT
    ) -> list[Hit[Episode]]:
        """Episodes by cosine of ``content_embedding`` (episodes without one are not candidates) among those
        passing ``time`` (``temporal.episode_matches``)."""


@runtime_checkable
class ViewReads(Protocol):
    """The derived views (``graph.derived``) as their readers see them: a group's communities and its
    conversations' summaries."""

    async def communities(self, group_id: str) -> list[Community]:
        """The group's communities, each with its members as stored (an entity deleted since is no longer
        listed; a community left without members is not returned); most members first, then by name and
        uuid."""

    async def conversation_summaries(
        self, group_id: str, keys: Sequence[str] | None = None
    ) -> list[ConversationSummary]:
        """The stored summaries of the chains ``keys`` (every chain's when None), ordered by key."""


@runtime_checkable
class ViewUpkeep(Protocol):
    """What keeping the derived views reads and writes (the overview): the facts' endpoints communities
    are computed from, the conversation chains, and the communities and summaries written back."""

    async def fact_endpoints(self, group_id: str, flt: FactFilter = ANY_FACT) -> list[tuple[str, str]]:
        """``(source_uuid, target_uuid)`` of every fact of the group passing ``flt``, one pair per fact, in
        no particular order: the graph communities are computed from (no text or vector is read)."""

    async def replace_communities(self, group_id: str, communities: Sequence[Community]) -> None:
        """Make ``communities`` the group's communities, atomically: the group's others are deleted, these
        written with exactly these members. Refused with StoreError, nothing written, for a community of
        another group, a uuid given twice, an entity in two communities (``check_communities``) or a
        member that is no entity of the group."""

    async def chains(self, group_id: str) -> list[Chain]:
        """The group's chains (episodes sharing a usable ``source_description``), ordered by key."""

    async def chain_episodes(self, group_id: str, key: str, read: ChainRead = ALL_OF_CHAIN) -> list[Episode]:
        """The episodes of the chain ``key`` in chain order (reference_time, created_at, uuid; reversed
        with ``read.newest_first``), however they arrived; only those recorded after
        ``read.recorded_after`` and of ``read.status``, when given; at most ``read.limit``."""

    async def save_conversation_summary(self, summary: ConversationSummary) -> bool:
        """Store ``summary`` if the stored one's version is ``summary.version - 1`` (none stored: version
        1), atomically; ``False``, nothing written, when another writer got there first."""

    async def owed_summaries(self, group_id: str) -> list[str]:
        """The uuids of the group's entities whose summaries are owed (``EpisodeWrite.owed_summaries``,
        not yet cleared by a write's ``paid_summaries``; a deleted entity owes nothing), sorted."""


@runtime_checkable
class CorrectionReads(Protocol):
    """Corrections by hand (``graph.corrections``), listed and read."""

    async def corrections(
        self, group_id: str, *, subject: str | None = None, limit: int = 100
    ) -> list[Correction]:
        """The group's corrections, newest first (``created_at``, then uuid); with ``subject``, those
        touching that entity or fact uuid (``Correction.subjects``)."""

    async def get_correction(self, group_id: str, uuid: str) -> Correction | None: ...


@runtime_checkable
class CorrectionWrites(Protocol):
    """A correction by hand applied, atomically against the state it was made from."""

    async def apply_correction(self, correction: Correction) -> None:
        """In one transaction: check that the graph still holds ``correction.before``
        (``corrections.conflict``; :class:`~epigraph.errors.ConflictError` and nothing written when it
        does not), make it ``correction.after`` (``Correction.plan``) and store ``correction.stored()``.
        ``correction.check()`` failing raises StoreError before anything is read."""


# The unions below declare nothing of their own: each names the roles one consumer calls.


@runtime_checkable
class GraphReads(GraphLookups, GraphSearch, Protocol):
    """The graph read: lookups and search (the per-episode step, search, edits)."""


@runtime_checkable
class DerivedViews(ViewReads, ViewUpkeep, Protocol):
    """The derived views, read and kept: communities and conversation chains with their summaries."""


@runtime_checkable
class CorrectionLog(CorrectionReads, CorrectionWrites, Protocol):
    """Corrections by hand, applied and listed."""


@runtime_checkable
class IngestStore(EpisodeLog, GraphReads, Protocol):
    """What ingestion uses: the queue writes and claims episodes, the per-episode step reads and
    searches the graph it adds to."""


@runtime_checkable
class OverviewStore(GraphLookups, DerivedViews, Protocol):
    """What the overview reads and keeps: the derived views, and the entities they name."""


@runtime_checkable
class EditStore(GraphReads, CorrectionLog, Protocol):
    """The graph with its corrections by hand: editing (which resolves, applies and undoes them)."""


@runtime_checkable
class CorrectionHistoryStore(GraphReads, CorrectionReads, Protocol):
    """What the corrections' history reads (``Corrections.history``): the corrections, and the graph
    the entities a name denotes are found in."""


@runtime_checkable
class TransferStore(WholeGroups, ViewReads, CorrectionReads, Protocol):
    """Export and load: the dump and the load of whole groups, and whether a group holds anything."""


@runtime_checkable
class ForgetStore(GraphLookups, WholeGroups, Forgetting, Protocol):
    """What forgetting uses: the subject found by name, the preview read from a dump, the forgetting
    applied and its records listed (and, when the store keeps one, the :class:`RedactionVault`'s held
    placeholders, asked for apart)."""


@runtime_checkable
class GraphStore(EpisodeLog, GraphReads, Protocol):
    """The core every store implements (25 methods): the episode log and claims (the ingestion queue),
    the lookups and the search (the per-episode step, search, ``ask``, the entity view), and the
    store's own opening and closing. What ``KnowledgeGraph`` takes (``store=``); every other role is
    optional and asked for by the feature that needs it (``graph.roles.role``). See the module
    docstring for the rules."""

    async def setup(self, embedding_dim: int) -> None:
        """Create schema / indexes if missing (idempotent). Vector indexes use ``embedding_dim``."""

    async def close(self) -> None: ...
