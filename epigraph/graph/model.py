"""The temporal graph's data: Episode, Entity, Fact, Mention. Pure, frozen pydantic models.

Validation happens here, at the boundary, so that nothing unsafe reaches a store:

- ``group_id``: 1-128 characters from ``[A-Za-z0-9_.:@-]`` (it partitions everything and is used in keys).
- entity labels: identifiers ``[A-Za-z_][A-Za-z0-9_]*`` (at most 64 characters).
- fact relations: SCREAMING_SNAKE_CASE ``[A-Z][A-Z0-9]*(_[A-Z0-9]+)*`` (at most 64 characters).
- ids (``uuid``, endpoints, provenance, mentions): 1-256 characters without control characters.
- a fact's event time: ``invalid_at`` is not before ``valid_at`` (when both are set).
- datetimes: given as datetimes or ISO 8601 strings (never numbers), always timezone-aware and normalized
  to UTC. **A naive datetime is read as UTC** (documented choice: chat exports and LLM replies usually
  omit the zone, and silently using the machine's local zone would make the same data mean different
  things on different machines).

Models are frozen: change one with ``model_copy(update=...)``. pydantic does not validate ``update``, so
the library passes only values that already are valid (UTC datetimes from ``pipeline.dating``, ids of
stored records); a caller with raw values builds a new model instead
(``Fact.model_validate({**fact.model_dump(), "valid_at": raw})``), which runs every check above.
"""

from __future__ import annotations

import hashlib
import re
import uuid as uuidlib
from collections.abc import Callable, Iterable
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, model_validator

GROUP_ID_RE = re.compile(r"[A-Za-z0-9_.:@-]{1,128}")  # all of these: fullmatch
LABEL_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
RELATION_RE = re.compile(r"[A-Z][A-Z0-9]*(_[A-Z0-9]+)*")
UUID_RE = re.compile(r"[^\x00-\x1f\x7f-\x9f]{1,256}")  # no control character (Unicode category Cc)

_EPISODE_NAMESPACE = uuidlib.UUID("6f1c1c9e-3a51-4d0c-9a57-8a0b1f0c5e21")


def check_group_id(value: str) -> str:
    if not GROUP_ID_RE.fullmatch(value):
        raise ValueError(f"group_id must be 1-128 characters of [A-Za-z0-9_.:@-], got {value!r}")
    return value


def check_label(value: str) -> str:
    if not LABEL_RE.fullmatch(value):
        raise ValueError(f"label must be an identifier ([A-Za-z_][A-Za-z0-9_]*, <= 64 chars), got {value!r}")
    return value


def check_relation(value: str) -> str:
    if len(value) > 64 or not RELATION_RE.fullmatch(value):
        raise ValueError(f"relation must be SCREAMING_SNAKE_CASE (<= 64 chars), got {value!r}")
    return value


def check_uuid(value: str) -> str:
    """An id: 1-256 characters without control characters (generated ids are UUIDs; callers may bring
    their own, and every store must keep them as one exact key: SQLite's JSON functions stop a string at
    a NUL, and a key nobody can type or print is a bug, not an id)."""
    if not UUID_RE.fullmatch(value):
        raise ValueError(f"uuid must be 1-256 characters without control characters, got {value[:80]!r}")
    return value


def to_utc(value: Any) -> Any:
    """Parse ISO strings, read naive datetimes as UTC, normalize aware ones to UTC. Anything else is
    refused (``ValueError``): pydantic would read a number as seconds since 1970, and ``12345`` where a
    time belongs (a dump, a request, an input file) is a mistake, not 1970-01-01T03:25:45Z."""
    if isinstance(value, str):
        text = value.strip()
        if text.endswith(("Z", "z")):
            text = text[:-1] + "+00:00"
        value = datetime.fromisoformat(text)
    if isinstance(value, datetime):
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    raise ValueError(f"expected an ISO 8601 date-time such as 2024-05-02T10:00:00Z, got {value!r}")


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def epoch_us(value: datetime) -> int:
    """Microseconds since the epoch, UTC (a naive datetime is read as UTC): how both stores keep the
    datetimes they compare as integers (SQLite columns, Neo4j's as-of key)."""
    utc: datetime = to_utc(value)
    return (utc - _EPOCH) // timedelta(microseconds=1)


def utc_now() -> datetime:
    return datetime.now(UTC)


class IncreasingClock:
    """Creation times that never repeat or go back: each reading is at least 1 us after the previous one,
    so episodes stamped in one burst (or by a clock that stepped back) keep the order they were given."""

    def __init__(self, clock: Callable[[], datetime] = utc_now) -> None:
        self._clock = clock
        self._last: datetime | None = None

    def __call__(self) -> datetime:
        now = self._clock()
        if self._last is not None and now <= self._last:
            now = self._last + timedelta(microseconds=1)
        self._last = now
        return now


def new_uuid() -> str:
    return str(uuidlib.uuid4())


def normalize_name(name: str) -> str:
    """The key exact-name dedup uses: case-folded, whitespace collapsed, outer punctuation stripped."""
    return " ".join(name.casefold().split()).strip(" \t.,;:!?\"'`()[]{}")


def content_hash(content: str) -> str:
    return hashlib.sha256(content.encode("utf-8")).hexdigest()


def episode_uuid(
    group_id: str, content_hash_: str, reference_time: datetime, given_id: str | None = None
) -> str:
    """Deterministic episode id, so re-ingesting the same episode is a no-op.

    Keyed by the caller's id when given, else by (group, content hash, reference time).
    """
    key = (
        f"id\x00{given_id}"
        if given_id is not None
        else f"{content_hash_}\x00{to_utc(reference_time).isoformat()}"
    )
    return str(uuidlib.uuid5(_EPISODE_NAMESPACE, f"{group_id}\x00{key}"))


GroupId = Annotated[str, AfterValidator(check_group_id)]
Label = Annotated[str, AfterValidator(check_label)]
Relation = Annotated[str, AfterValidator(check_relation)]
Uuid = Annotated[str, AfterValidator(check_uuid)]
# Before: ISO strings and naive values read as UTC. After: whatever pydantic parsed (a date, bytes, an epoch
# number) ends aware in UTC too.
UtcDatetime = Annotated[datetime, BeforeValidator(to_utc), AfterValidator(to_utc)]
Embedding = list[float]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class EpisodeKind(StrEnum):
    MESSAGE = "message"
    TEXT = "text"
    JSON = "json"


class EpisodeStatus(StrEnum):
    PENDING = "pending"
    DONE = "done"
    FAILED = "failed"


class PromptUsage(_Frozen):
    """LLM usage of one prompt within one episode."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0


class IngestReport(_Frozen):
    """What ingesting one episode cost and what went wrong along the way."""

    llm_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    per_prompt: dict[str, PromptUsage] = Field(default_factory=dict)
    embedding_requests: int = 0
    embedded_texts: int = 0
    round_trips: int = 0
    stage_ms: dict[str, float] = Field(default_factory=dict)
    dropped_lines: int = 0
    names_refused: int = 0
    """Extracted names ``NameOptions.things`` refused (not a thing the message names)."""
    truncated: bool = False
    warnings: list[str] = Field(default_factory=list)
    calls_ahead: int = 0
    """Model calls made before the episode's commit, while earlier episodes of its group were still being
    committed (``IngestOptions.in_flight``), whose replies its commit used: counted once in ``llm_calls``."""
    calls_ahead_unused: int = 0
    """Model calls made ahead that the commit did not use (what they asked changed once earlier episodes
    were committed): counted in ``llm_calls`` and the tokens, since they were spent."""


class Episode(_Frozen):
    uuid: Uuid = Field(default_factory=new_uuid)
    group_id: GroupId
    name: str = ""
    content: str
    kind: EpisodeKind = EpisodeKind.MESSAGE
    source_description: str = ""
    reference_time: UtcDatetime
    created_at: UtcDatetime = Field(default_factory=utc_now)
    content_hash: str = ""
    status: EpisodeStatus = EpisodeStatus.PENDING
    error: str | None = None
    report: IngestReport = Field(default_factory=IngestReport)
    content_embedding: Embedding | None = None
    """Optional: set when episodes themselves are searched by vector (e.g. raw chat retrieval)."""

    def model_post_init(self, __context: Any) -> None:
        if not self.content_hash:
            object.__setattr__(self, "content_hash", content_hash(self.content))


class Entity(_Frozen):
    uuid: Uuid = Field(default_factory=new_uuid)
    group_id: GroupId
    name: str = Field(min_length=1)
    aliases: list[str] = Field(default_factory=list)
    labels: list[Label] = Field(default_factory=list)
    summary: str = ""
    attributes: dict[str, Any] = Field(default_factory=dict)
    name_embedding: Embedding | None = None
    created_at: UtcDatetime = Field(default_factory=utc_now)
    summary_withheld: UtcDatetime | None = Field(default=None, exclude=True)
    """Never stored: set only on an entity read as of a time before its summary was written
    (``graph.entity_time.entity_as_of``), whose ``summary`` is then empty: when what the summary draws
    on was said (or recorded). Left out of every dump of the record; readers say so
    (``entity_time.withheld_note``)."""

    @property
    def normalized_names(self) -> set[str]:
        return {normalize_name(n) for n in (self.name, *self.aliases)}


class Invalidation(_Frozen):
    """Why and by what a fact was retired, with what it takes to undo it."""

    fact_uuid: Uuid
    episode_uuid: Uuid
    previous_invalid_at: UtcDatetime | None = None


class Fact(_Frozen):
    """A bi-temporal edge between two entities.

    Event time: ``valid_at`` / ``invalid_at`` (when it was true in the world; ``None`` = not stated),
    and ``stated_at``: the reference time of the earliest episode that stated it. A fact without
    ``valid_at`` starts at ``stated_at`` for every reader, not at the beginning of time
    (``graph.temporal.start_of`` has the rule and its one exception).
    System time: ``created_at`` / ``expired_at`` (when the graph learned it / retired it).
    """

    uuid: Uuid = Field(default_factory=new_uuid)
    group_id: GroupId
    source_uuid: Uuid
    target_uuid: Uuid
    relation: Relation
    text: str = Field(min_length=1)
    text_embedding: Embedding | None = None
    episodes: list[Uuid] = Field(default_factory=list)
    valid_at: UtcDatetime | None = None
    invalid_at: UtcDatetime | None = None
    stated_at: UtcDatetime | None = None
    created_at: UtcDatetime = Field(default_factory=utc_now)
    expired_at: UtcDatetime | None = None
    invalidated_by: Invalidation | None = None
    attributes: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _interval_in_order(self) -> Fact:
        problem = inverted_interval(self)
        if problem:
            raise ValueError(problem)
        return self


def inverted_interval(fact: Fact) -> str | None:
    """What is wrong with ``fact``'s event time, if it ends before it starts (else ``None``).

    Such an interval would match no as-of query: the fact would be silently lost. An empty interval,
    ``invalid_at == valid_at``, is allowed (a fact retired the moment it began). ``Fact`` checks this when
    it is built; stores check it again on write, since ``model_copy(update=...)`` skips validation.
    """
    if fact.valid_at is None or fact.invalid_at is None or fact.invalid_at >= fact.valid_at:
        return None
    return (
        f"fact {fact.uuid[:80]!r}: invalid_at {fact.invalid_at.isoformat()} is before "
        f"valid_at {fact.valid_at.isoformat()}"
    )


def records_problem(group_id: str, records: Iterable[BaseModel], what: str) -> str | None:
    """What no store may hold among ``records`` written as ``what`` (e.g. "a write") of ``group_id``: a
    record of another group, or a fact whose event time ends before it starts (``inverted_interval``:
    a ``model_copy`` can carry one past the model's own check). ``None`` when there is nothing."""
    for item in records:
        other = getattr(item, "group_id", group_id)
        if other != group_id:
            kind = type(item).__name__
            return f"{kind} of group {other!r} in {what} of group {group_id!r}: nothing crosses groups"
        if isinstance(item, Fact):
            problem = inverted_interval(item)
            if problem:
                return f"{problem}; {what} was refused"
    return None


class Mention(_Frozen):
    group_id: GroupId
    episode_uuid: Uuid
    entity_uuid: Uuid


_SPEAKER = re.compile(r"\s*([^:\n]{1,80}?)\s*:\s")


def speaker_of(episode: Episode) -> str | None:
    """The speaker of a message episode (its ``"Speaker: "`` prefix), or None."""
    if episode.kind is not EpisodeKind.MESSAGE:
        return None
    found = _SPEAKER.match(episode.content)
    return found.group(1) if found else None
