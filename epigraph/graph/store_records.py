"""The store's records: what the Protocols of :mod:`epigraph.graph.store` take and return (hits, filters,
an episode's atomic write, deletions, dumps, claims, counts, conversation chains) and the checks the two
stores share on them. Re-exported by ``graph.store``, where consumers import them from."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Generic, TypeVar

from pydantic import BaseModel

from ..errors import StoreError
from .corrections import Correction
from .decisions import DecisionRecord
from .derived import Community, ConversationSummary
from .forgetting import ForgetRecord, RetentionPolicy
from .model import Entity, Episode, EpisodeStatus, Fact, Mention, records_problem
from .temporal import CURRENT, TimeFilter

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Hit(Generic[T]):
    """One search result and its retriever score (BM25 or cosine; higher is better)."""

    item: T
    score: float


@dataclass(frozen=True, slots=True)
class FactFilter:
    time: TimeFilter = CURRENT
    relations: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True)
class EntityFilter:
    labels: tuple[str, ...] | None = None
    time: TimeFilter = CURRENT
    """Entities that exist under it (``entity_time.entity_exists``, applied inside the store's query),
    returned as they were then (``entity_time.entity_as_of``)."""


ANY_FACT = FactFilter()
"""Current facts of any relation: the default fact filter."""
ANY_ENTITY = EntityFilter()
"""Entities with any labels: the default entity filter."""


@dataclass(frozen=True, slots=True)
class EpisodeWrite:
    """Everything one episode adds or changes, written in one transaction."""

    episode: Episode
    entities: Sequence[Entity] = ()
    facts: Sequence[Fact] = ()
    mentions: Sequence[Mention] = ()
    unless_done: bool = False
    """Write only if the stored episode is not ``done`` yet: ``write_episode`` checks it inside its
    transaction, under the episode's write lock, and returns ``False`` without writing anything when it
    is (another writer finished it first). The pipeline sets it, so of two writers of one episode (a
    frozen Kafka worker and the next owner of its partition) exactly one takes effect."""
    owed_summaries: Sequence[str] = ()
    """Entities (uuids) whose summaries this episode made stale and left to the end of its batch
    (``summary_mode="batch"``): marked owed in the same transaction, so a run killed before that summary
    leaves the marks for the next one (``ingestion.ingestor``)."""
    paid_summaries: Sequence[str] = ()
    """Entities (uuids) whose owed marks this write clears: their summaries are written with it (cleared
    before ``owed_summaries`` are marked)."""
    decisions: DecisionRecord | None = None
    """What the episode's stages decided (``graph.decisions``), stored with it (replacing the record of
    an earlier run of it), gone with it."""
    forget_decisions_before: datetime | None = None
    """The retention of decision records: the group's records made before this are deleted in the same
    transaction (``RecordOptions.days``)."""

    def check(self) -> None:
        """Raise StoreError for what no store may hold, before anything is written: an entity, fact or
        mention of another group than the episode's, or a fact whose event time ends before it starts
        (``model.inverted_interval``: a ``model_copy`` can carry one past the model's own check)."""
        records = [*self.entities, *self.facts, *self.mentions]
        problem = records_problem(self.episode.group_id, records, "the episode write")
        decided = self.decisions
        if (
            problem is None
            and decided is not None
            and (decided.group_id, decided.episode_uuid)
            != (
                self.episode.group_id,
                self.episode.uuid,
            )
        ):
            problem = f"the decision record of episode {decided.episode_uuid!r} is not this episode's"
        if problem:
            raise StoreError(problem)


@dataclass(frozen=True, slots=True)
class DeletionResult:
    """What ``delete_episode`` did, so the caller can refresh summaries of the touched entities."""

    removed_facts: list[str] = field(default_factory=list)
    restored_facts: list[str] = field(default_factory=list)
    updated_facts: list[str] = field(default_factory=list)
    removed_entities: list[str] = field(default_factory=list)
    touched_entities: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class OwedSummaries:
    """The entities of a group whose summaries are owed (``EpisodeWrite.owed_summaries``), as a dump
    reads them: one per group that owes any, before its entities."""

    group_id: str
    entity_uuids: tuple[str, ...]


DumpRecord = (
    Episode | Entity | Fact | Mention | Correction | Community | ConversationSummary
    | ForgetRecord | RetentionPolicy | DecisionRecord
)  # fmt: skip
"""A record of a dump (a line of its own in a dump file, ``transfer.format``)."""
DumpItem = DumpRecord | OwedSummaries
"""What a dump reads (``WholeGroups.dump``): its records, and the summaries each group owes."""


@dataclass(frozen=True, slots=True)
class GroupDump:
    """Everything of one group, as ``WholeGroups.load_group`` writes it (``transfer.format``: the file)."""

    group_id: str
    episodes: Sequence[Episode] = ()
    entities: Sequence[Entity] = ()
    facts: Sequence[Fact] = ()
    mentions: Sequence[Mention] = ()
    corrections: Sequence[Correction] = ()
    communities: Sequence[Community] = ()
    conversations: Sequence[ConversationSummary] = ()
    owed_summaries: Sequence[str] = ()
    """Entities (uuids of ``entities``) whose summaries are owed: marked owed by the load."""
    forgettings: Sequence[ForgetRecord] = ()
    """The group's audit records of forgetting (``graph.forgetting``)."""
    retention: RetentionPolicy | None = None
    """The group's retention policy (``graph.forgetting``), if it has one."""
    decisions: Sequence[DecisionRecord] = ()
    """The decision records of ``episodes`` (``graph.decisions``)."""

    def check(self) -> None:
        """Raise StoreError for what no store may hold, before anything is written: a record of another
        group (a correction's slices count), or a fact whose event time ends before it starts."""
        inside = (record for c in self.corrections for _, record in c.slice_records())
        records: list[BaseModel] = [*self.episodes, *self.entities, *self.facts, *self.mentions]
        records += [*self.corrections, *inside, *self.decisions]
        derived: list[BaseModel] = [*self.communities, *self.conversations, *self.forgettings]
        if self.retention is not None:
            derived.append(self.retention)
        problem = records_problem(self.group_id, [*records, *derived], "the load")
        if problem:
            raise StoreError(problem)


@dataclass(frozen=True, slots=True)
class Claim:
    """Who runs an episode, until when (``claim_episode``): a lease, not a lock; it lapses by itself."""

    owner: str
    expires_at: datetime


@dataclass(frozen=True, slots=True)
class StoreStats:
    episodes: int
    entities: int
    facts: int
    current_facts: int
    mentions: int
    owed_summaries: int = 0
    """Entities whose summaries a batch still owes (``ViewUpkeep.owed_summaries``)."""
    decision_records: int = 0
    """Episodes stored with a decision record (``graph.decisions``)."""
    decision_bytes: int = 0
    """What those records take, as stored (their JSON's UTF-8 bytes)."""


@dataclass(frozen=True, slots=True)
class Chain:
    """One chain of episodes: those of a group sharing a ``source_description`` (``derived.chain_key``)."""

    key: str
    episodes: int
    first_at: datetime
    """Reference time of its earliest episode."""
    last_at: datetime
    """Reference time of its latest episode."""


@dataclass(frozen=True, slots=True)
class ChainRead:
    """Which episodes of a chain ``chain_episodes`` reads, and in which direction."""

    recorded_after: datetime | None = None
    """Only those recorded (``created_at``) after this time."""
    status: EpisodeStatus | None = None
    limit: int = 1000
    newest_first: bool = False


ALL_OF_CHAIN = ChainRead()


def check_communities(group_id: str, communities: Sequence[Community]) -> None:
    """Raise StoreError for a set of communities no store may hold, before anything is written: one of
    another group, two with one uuid, or an entity in two of them."""
    owner: dict[str, str] = {}
    seen: set[str] = set()
    for community in communities:
        if community.group_id != group_id:
            raise StoreError(
                f"community {community.uuid[:80]!r} of group {community.group_id!r} in a write for group "
                f"{group_id!r}: nothing crosses groups"
            )
        if community.uuid in seen:
            raise StoreError(f"community {community.uuid[:80]!r} given twice; nothing was written")
        seen.add(community.uuid)
        for member in community.members:
            if member in owner:
                raise StoreError(
                    f"entity {member[:80]!r} is in communities {owner[member][:80]!r} and "
                    f"{community.uuid[:80]!r}: an entity belongs to one community; nothing was written"
                )
            owner[member] = community.uuid


def unknown_member(group_id: str, uuid: str) -> StoreError:
    """The error of a community write naming a member that is no entity of the group."""
    return StoreError(
        f"community member {uuid[:80]!r} is no entity of group {group_id!r}; nothing was written"
    )


@dataclass(frozen=True, slots=True)
class VaultHeader:
    """A group's redaction vault (``RedactionVault``): the random ``salt`` its placeholders' digests
    and keys are derived with, and ``key_check`` (a digest of the caller's key, never the key) when
    it keeps the originals: None when it drops them."""

    salt: bytes
    key_check: bytes | None = None


@dataclass(frozen=True, slots=True)
class VaultEntry:
    """One piece of personal data a placeholder stands for: its kind, the keyed ``digest`` of its
    normal form (what finds its placeholder again) and, when the vault keeps originals, the value
    encrypted (``sealed``); never the value itself."""

    kind: str
    digest: bytes
    sealed: bytes | None = None


RESERVED = b"reserved\0"


def holds_value(digest: bytes) -> bool:
    """Whether a vault row of this digest stands for a value (not a reserved placeholder)."""
    return not digest.startswith(RESERVED)


def reserved_digest(kind: str, number: int) -> bytes:
    """What a reserved placeholder is kept under in a vault (``RedactionVault.reserve_placeholders``):
    no value's digest (an HMAC-SHA256 of 32 random-looking bytes) starts with :data:`RESERVED`."""
    return RESERVED + f"{kind}\0{number}".encode()
