"""Forgetting: what a caller asks a store to forget, what the store writes, and the record it keeps.

- :class:`ForgetRequest`: a group's subjects (entity uuids), the spellings of their names to take out of
  what stays, episodes to delete outright (retention), and what becomes of the episodes that mention a
  subject or name one (``"redact"``: kept with the names replaced; ``"delete"``: deleted, with what only
  they support). ``graph.forget_plan`` turns it and the group's records into a :class:`ForgetWrite`.
- :class:`ForgetRecord`: the audit record written in the same transaction: when, by which call, which
  records went or were rewritten (ids and counts), and the subject as a salted hash, never its name
  (:func:`subject_hash`; :meth:`ForgetRecord.is_of` checks a name against it).
- :class:`RetentionPolicy`: a group's retention, its episodes older than ``days`` forgotten by the same
  code (``forget.retention``).

Why facts retired by a forgotten fact stay retired, and the rest of the rules:
docs/decisions/2026-12-01-forgetting.md.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from pydantic import Field

from .corrections import Correction
from .decisions import DecisionRecord
from .derived import Community
from .model import Entity, Episode, Fact, GroupId, UtcDatetime, Uuid, _Frozen, new_uuid, normalize_name
from .scrub import PLACEHOLDER

EpisodesChoice = Literal["redact", "delete"]
"""What becomes of the episodes that mention a forgotten subject or name it."""
EPISODE_CHOICES: tuple[EpisodesChoice, ...] = ("redact", "delete")
RECORD_PREFIX = "forgetting:"
"""Every audit record's uuid starts with it."""


def subject_hash(name: str, salt: str | None = None) -> str:
    """``sha256:<salt>:<digest>`` of the normalized ``name`` (a new random salt unless given): what an
    audit record keeps of its subject. Whoever knows a name can check it against the record; the record
    alone does not say it (a list of likely names could still be tried against it: see the decision
    record)."""
    salt = salt or secrets.token_hex(16)
    digest = hashlib.sha256(f"{salt}\x00{normalize_name(name)}".encode()).hexdigest()
    return f"sha256:{salt}:{digest}"


class ForgetRecord(_Frozen):
    """The audit record of one forgetting (a subject's, or a retention pass's)."""

    uuid: Uuid = Field(default_factory=lambda: RECORD_PREFIX + new_uuid())
    group_id: GroupId
    at: UtcDatetime
    call: str = Field(min_length=1, max_length=64, pattern=r"^[a-z][a-z0-9_. /-]*$")
    """Which door asked: ``python``, ``cli``, ``http``, ``mcp``, ``retention``."""
    episodes: EpisodesChoice = "redact"
    subject: str | None = Field(default=None, pattern=r"^sha256:[0-9a-f]{32}:[0-9a-f]{64}$")
    """:func:`subject_hash` of the subject's name; None for a retention pass."""
    older_than: UtcDatetime | None = None
    """A retention pass: the episodes said before this time were forgotten."""
    counts: dict[str, int] = Field(default_factory=dict)
    ids: dict[str, list[str]] = Field(default_factory=dict)

    def is_of(self, name: str) -> bool:
        """Whether this record forgot the subject called ``name`` (any spelling that normalizes alike)."""
        if self.subject is None:
            return False
        salt = self.subject.split(":")[1]
        return hmac.compare_digest(subject_hash(name, salt), self.subject)


class RetentionPolicy(_Frozen):
    """A group keeps its episodes ``days`` days (by reference time); older ones, and what only they
    support, are forgotten."""

    group_id: GroupId
    days: int = Field(ge=1, le=36_500)
    updated_at: UtcDatetime


@dataclass(frozen=True, slots=True)
class ForgetRequest:
    """What to forget in one group (see the module docstring); ``now`` is the plan's clock, fixed at
    the preview so that the apply plans exactly the same (``expect``: the preview's digest)."""

    group_id: str
    now: datetime
    entities: tuple[str, ...] = ()
    names: tuple[str, ...] = ()
    episodes: tuple[str, ...] = ()
    mentioning: EpisodesChoice = "redact"
    placeholder: str = PLACEHOLDER
    call: str = "python"
    subject: str | None = None
    """The subject's :func:`subject_hash`, for the audit record."""
    older_than: datetime | None = None
    compose_max: int = 4
    """Facts an entity summary is composed of, without a model (``SummaryOptions.compose_max``)."""
    vectors: Mapping[str, Sequence[float]] = field(default_factory=dict)
    """The embeddings of the rewritten texts (``ForgetPlan.texts``), by text."""
    expect: str | None = None
    """Apply only a plan of this digest (ConflictError, nothing written, otherwise)."""
    compact: bool = True
    """After the commit, let the store compact its files (the embedded store: see ``compaction``)."""


@dataclass(frozen=True, slots=True)
class ForgetWrite:
    """What a store writes in the forgetting's one transaction: deletions first (facts, then entities,
    episodes with their decision records, corrections, the conversation summaries of
    ``conversations_dropped``), then the rewritten records, the group's whole set of communities, the
    owed marks, the redaction vault's freed values and the audit record."""

    group_id: str
    delete_facts: tuple[str, ...] = ()
    delete_entities: tuple[str, ...] = ()
    delete_episodes: tuple[str, ...] = ()
    delete_corrections: tuple[str, ...] = ()
    conversations_dropped: tuple[str, ...] = ()
    episodes: tuple[Episode, ...] = ()
    entities: tuple[Entity, ...] = ()
    facts: tuple[Fact, ...] = ()
    corrections: tuple[Correction, ...] = ()
    """Rewritten: each replaces the stored correction of its uuid."""
    communities: tuple[Community, ...] | None = None
    """The group's communities afterwards (None: left as they are)."""
    decisions: tuple[DecisionRecord, ...] = ()
    """Rewritten: each replaces the stored decision record of its episode (those of the episodes deleted
    go with them)."""
    owed: tuple[str, ...] = ()
    vault_freed: tuple[tuple[str, int], ...] = ()
    """The ``(kind, number)`` placeholders whose values leave the redaction vault (no text that stays
    holds them): each row's digest becomes a reserved one and its sealed original is deleted."""
    record: ForgetRecord | None = None


@dataclass(frozen=True, slots=True)
class Compaction:
    """What the store's compaction after a forgetting did (the embedded store's file)."""

    done: bool
    seconds: float
    steps: dict[str, float] = field(default_factory=dict)
    """Seconds per step."""
    size_before: int = 0
    size_after: int = 0
    note: str = ""


@dataclass(frozen=True, slots=True)
class ForgetOutcome:
    """What a store's ``forget`` wrote: its audit record, what is left to rebuild with a model (the
    entity summaries marked owed, the conversations whose summaries were dropped, whether communities
    were left stale) and its compaction."""

    record: ForgetRecord
    owed: tuple[str, ...] = ()
    conversations: tuple[str, ...] = ()
    communities_stale: bool = False
    compaction: Compaction | None = None


__all__ = [
    "EPISODE_CHOICES",
    "Compaction",
    "EpisodesChoice",
    "ForgetOutcome",
    "ForgetRecord",
    "ForgetRequest",
    "ForgetWrite",
    "RetentionPolicy",
    "subject_hash",
]
