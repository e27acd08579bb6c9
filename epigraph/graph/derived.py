"""Records derived from the graph: communities of entities and the running summaries of conversations.

Neither is a source of truth: a community is a cluster the clustering found among the current facts
(``overview.clusters``) with a name and a summary a model wrote from its members' summaries; a
conversation summary folds a chain's episodes into a few sentences. Both are rebuilt from the graph when
lost, so they are kept beside it, not inside the episode write.

- :class:`Community`: keyed by ``(group_id, uuid)``; ``members`` are entity uuids of the same group, an
  entity in at most one community of its group (``ViewUpkeep.replace_communities`` checks both), and a
  member entity that is deleted leaves its community in both stores.
- :class:`ConversationSummary`: keyed by ``(group_id, key)``, the key being the chain's: the episodes'
  ``source_description`` (see :func:`chain_key`). ``covered_until`` is the ``created_at`` of the newest
  episode folded in (system time: an episode that arrives late, with an older reference time, is still
  new to the summary); ``version`` makes concurrent updates safe (a store writes version n only over n-1).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import Annotated, Any

from pydantic import AfterValidator, Field, field_validator

from .model import Embedding, Fact, GroupId, UtcDatetime, Uuid, _Frozen, new_uuid, utc_now

CHAIN_KEY_RE = re.compile(r"[^\x00-\x1f\x7f-\x9f]{1,512}")
"""A chain key: 1-512 characters without control characters (an episode's ``source_description``)."""


def check_chain_key(value: str) -> str:
    if not CHAIN_KEY_RE.fullmatch(value):
        raise ValueError(
            f"a conversation key is 1-512 characters without control characters, got {value[:80]!r}"
        )
    return value


ChainKey = Annotated[str, AfterValidator(check_chain_key)]


def chain_key(source_description: str) -> str | None:
    """The chain an episode belongs to: its ``source_description`` (the ``source`` of an input line,
    ``source_description=`` in Python, an importer's ``meta.source``); ``None`` for an episode with no
    usable source, which belongs to no chain."""
    return source_description if CHAIN_KEY_RE.fullmatch(source_description) else None


def chronological(facts: Iterable[Fact]) -> list[Fact]:
    """Facts in the order a summary tells them: by start (``valid_at``, else when learned), then uuid."""
    return sorted(facts, key=lambda f: (f.valid_at or f.created_at, f.created_at, f.uuid))


def compose_summary(facts: Sequence[Fact], limit: int) -> str:
    """An entity summary without a model: its newest ``limit`` believed facts, oldest first, joined
    (``pipeline.summaries``; a forgetting composes the summaries it rewrites the same way)."""
    newest = chronological(facts)[-limit:] if limit > 0 else []
    return " ".join(
        f.text.rstrip() if f.text.rstrip().endswith(".") else f.text.rstrip() + "." for f in newest
    )


def members_digest(members: Iterable[str]) -> str:
    """A fingerprint of a set of entity uuids (order and repeats do not matter)."""
    sha = hashlib.sha256()
    for uuid in sorted(set(members)):
        sha.update(uuid.encode("utf-8") + b"\x00")
    return sha.hexdigest()[:32]


class Community(_Frozen):
    """A cluster of entities of one group, with a model-written name and summary."""

    uuid: Uuid = Field(default_factory=new_uuid)
    group_id: GroupId
    name: str = Field(min_length=1, max_length=200)
    summary: str = Field(default="", max_length=4000)
    members: list[Uuid] = Field(min_length=1)
    """Entity uuids of the group, each once (stored and read back sorted)."""
    embedding: Embedding | None = None
    """Of ``name: summary``: what a community search compares a query with."""
    summarized: str = ""
    """``members_digest`` of the members the name and summary were written for; ``""``: never written
    by a model. Differs from the current members' digest when an update could not re-summarize."""
    created_at: UtcDatetime = Field(default_factory=utc_now)
    """When this community (this id) first formed."""
    updated_at: UtcDatetime = Field(default_factory=utc_now)
    """When its members, name or summary last changed."""

    @field_validator("members")
    @classmethod
    def _distinct(cls, members: list[str]) -> list[str]:
        if len(set(members)) != len(members):
            raise ValueError("a community lists each member once")
        return sorted(members)

    @property
    def stale(self) -> bool:
        """Its name and summary were written for other members (or never by a model)."""
        return self.summarized != members_digest(self.members)


def community_text(name: str, summary: str) -> str:
    """What a community's ``embedding`` embeds: its name and summary."""
    return f"{name}: {summary}".strip(": ")


class ConversationSummary(_Frozen):
    """The running summary of one chain of episodes (a conversation or session)."""

    group_id: GroupId
    key: ChainKey
    summary: str = Field(default="", max_length=8000)
    episodes: int = Field(default=0, ge=0)
    """How many episodes have been folded in."""
    first_at: UtcDatetime | None = None
    """Reference time of the earliest episode folded in."""
    last_at: UtcDatetime | None = None
    """Reference time of the latest episode folded in."""
    covered_until: UtcDatetime | None = None
    """``created_at`` of the most recently recorded episode folded in (None: nothing yet)."""
    version: int = Field(default=1, ge=1)
    updated_at: UtcDatetime = Field(default_factory=utc_now)


def stored_summary(row: Mapping[str, Any], time: Callable[[Any], datetime | None]) -> ConversationSummary:
    """A summary as a store read it (its fields by name, each time decoded by ``time``); not validated
    again: it was on its way in."""
    return ConversationSummary.model_construct(
        group_id=row["group_id"],
        key=row["key"],
        summary=row.get("summary") or "",
        episodes=int(row.get("episodes") or 0),
        first_at=time(row.get("first_at")),
        last_at=time(row.get("last_at")),
        covered_until=time(row.get("covered_until")),
        version=int(row["version"]),
        updated_at=time(row["updated_at"]),
    )
