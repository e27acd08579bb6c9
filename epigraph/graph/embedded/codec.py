"""Rows <-> domain models for the embedded store. See ``schema`` for the encoding rules.

Decoding uses ``model_construct`` (no validation): every stored row was validated as a model on its way
in and is rebuilt here with the exact field types (UTC datetimes, enums, lists), so re-validating would
only cost time (it was most of a vector search: a 384-float list per fact).
"""

from __future__ import annotations

import functools
import json
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import pydantic_core

from ..corrections import Correction
from ..model import (
    Entity,
    Episode,
    EpisodeKind,
    EpisodeStatus,
    Fact,
    IngestReport,
    Invalidation,
    Mention,
    epoch_us,
)
from ..temporal import start_key

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_F32 = np.dtype("<f4")


@dataclass(frozen=True, slots=True)
class Table:
    """A row table, its columns (embedding excluded) and the side table holding its embeddings."""

    name: str
    vectors: str
    columns: tuple[str, ...]

    def select(self, alias: str, vectors: bool = True) -> str:
        """The select list of a full record: its columns, then its embedding blob (or NULL; always
        NULL without ``vectors``)."""
        cols = ", ".join(f"{alias}.{c}" for c in self.columns)
        if not vectors:
            return f"{cols}, NULL"
        return f"{cols}, (SELECT v.vector FROM {self.vectors} AS v WHERE v.id = {alias}.id)"


EPISODES = Table(
    "episodes",
    "episode_vectors",
    ("uuid", "group_id", "name", "content", "kind", "source_description", "reference_time", "created_at",
     "content_hash", "status", "error", "report"),
)  # fmt: skip
ENTITIES = Table(
    "entities",
    "entity_vectors",
    ("uuid", "group_id", "name", "aliases", "labels", "summary", "attributes", "created_at"),
)
FACTS = Table(
    "facts",
    "fact_vectors",
    ("uuid", "group_id", "source_uuid", "target_uuid", "relation", "text", "episodes", "valid_at",
     "invalid_at", "created_at", "expired_at", "inv_fact", "inv_episode", "inv_previous", "attributes",
     "stated_at", "start_key"),
)  # fmt: skip
"""``start_key`` is derived (``graph.temporal.start_key``, the vector index's "begun by" time): written,
never decoded."""


# --- scalars ----------------------------------------------------------------------------------------


to_us = epoch_us  # how every datetime column is stored


def to_us_or_none(value: datetime | None) -> int | None:
    return None if value is None else to_us(value)


def from_us(value: int | None) -> datetime | None:
    return None if value is None else _EPOCH + timedelta(microseconds=value)


def _from_us(value: int) -> datetime:
    return _EPOCH + timedelta(microseconds=value)


def to_blob(vector: Sequence[float] | None) -> bytes | None:
    """float32 little-endian bytes; ``None`` stays ``None``. (``struct``: faster than numpy here.)"""
    if vector is None:
        return None
    return _floats(len(vector)).pack(*vector)


def from_blob(blob: bytes | None) -> list[float] | None:
    """The list of floats of a blob (``struct``: faster than numpy's ``tolist``)."""
    return None if blob is None else list(_floats(len(blob) // 4).unpack(blob))


@functools.cache
def _floats(n: int) -> struct.Struct:
    return struct.Struct(f"<{n}f")


def blob_array(blob: bytes) -> np.ndarray:
    return np.frombuffer(blob, dtype=_F32)


def to_json(value: Any) -> str:
    """JSON text; values JSON has no type for (datetimes, ...) are written as pydantic writes them."""
    if not value and type(value) in _EMPTY:  # most aliases, labels and attributes: 3 per entity written
        return _EMPTY[type(value)]
    return pydantic_core.to_json(value).decode("utf-8")


_EMPTY: dict[type, str] = {list: "[]", dict: "{}"}


# --- episodes ---------------------------------------------------------------------------------------


def episode_row(e: Episode) -> tuple[Any, ...]:
    """Column values in ``EPISODES.columns`` order."""
    return (
        e.uuid,
        e.group_id,
        e.name,
        e.content,
        e.kind.value,
        e.source_description,
        to_us(e.reference_time),
        to_us(e.created_at),
        e.content_hash,
        e.status.value,
        e.error,
        e.report.model_dump_json(),
    )


def decode_episode(row: Sequence[Any]) -> Episode:
    """A row of ``EPISODES.select``: the columns, then the embedding blob."""
    r = dict(zip((*EPISODES.columns, "vector"), row, strict=True))
    return Episode.model_construct(
        uuid=r["uuid"],
        group_id=r["group_id"],
        name=r["name"],
        content=r["content"],
        kind=EpisodeKind(r["kind"]),
        source_description=r["source_description"],
        reference_time=_from_us(r["reference_time"]),
        created_at=_from_us(r["created_at"]),
        content_hash=r["content_hash"],
        status=EpisodeStatus(r["status"]),
        error=r["error"],
        report=IngestReport.model_validate_json(r["report"]),
        content_embedding=from_blob(r["vector"]),
    )


# --- entities ---------------------------------------------------------------------------------------


def entity_row(e: Entity) -> tuple[Any, ...]:
    """Column values in ``ENTITIES.columns`` order."""
    return (
        e.uuid,
        e.group_id,
        e.name,
        to_json(e.aliases),
        to_json(e.labels),
        e.summary,
        to_json(e.attributes),
        to_us(e.created_at),
    )


def decode_entity(row: Sequence[Any]) -> Entity:
    """A row of ``ENTITIES.select``: the columns, then the embedding blob."""
    r = dict(zip((*ENTITIES.columns, "vector"), row, strict=True))
    return Entity.model_construct(
        uuid=r["uuid"],
        group_id=r["group_id"],
        name=r["name"],
        aliases=json.loads(r["aliases"]),
        labels=json.loads(r["labels"]),
        summary=r["summary"],
        attributes=json.loads(r["attributes"]),
        name_embedding=from_blob(r["vector"]),
        created_at=_from_us(r["created_at"]),
    )


# --- facts ------------------------------------------------------------------------------------------


def fact_row(f: Fact) -> tuple[Any, ...]:
    """Column values in ``FACTS.columns`` order; ``invalidated_by`` is spread over the ``inv_`` columns."""
    inv = f.invalidated_by
    return (
        f.uuid,
        f.group_id,
        f.source_uuid,
        f.target_uuid,
        f.relation,
        f.text,
        to_json(f.episodes),
        to_us_or_none(f.valid_at),
        to_us_or_none(f.invalid_at),
        to_us(f.created_at),
        to_us_or_none(f.expired_at),
        None if inv is None else inv.fact_uuid,
        None if inv is None else inv.episode_uuid,
        None if inv is None else to_us_or_none(inv.previous_invalid_at),
        to_json(f.attributes),
        to_us_or_none(f.stated_at),
        to_us_or_none(start_key(f)),
    )


def decode_fact(row: Sequence[Any]) -> Fact:
    """A row of ``FACTS.select``: the columns, then the embedding blob."""
    r = dict(zip((*FACTS.columns, "vector"), row, strict=True))
    invalidation = None
    if r["inv_fact"] is not None:
        invalidation = Invalidation.model_construct(
            fact_uuid=r["inv_fact"],
            episode_uuid=r["inv_episode"],
            previous_invalid_at=from_us(r["inv_previous"]),
        )
    return Fact.model_construct(
        uuid=r["uuid"],
        group_id=r["group_id"],
        source_uuid=r["source_uuid"],
        target_uuid=r["target_uuid"],
        relation=r["relation"],
        text=r["text"],
        text_embedding=from_blob(r["vector"]),
        episodes=json.loads(r["episodes"]),
        valid_at=from_us(r["valid_at"]),
        invalid_at=from_us(r["invalid_at"]),
        stated_at=from_us(r["stated_at"]),
        created_at=_from_us(r["created_at"]),
        expired_at=from_us(r["expired_at"]),
        invalidated_by=invalidation,
        attributes=json.loads(r["attributes"]),
    )


# --- mentions and corrections -----------------------------------------------------------------------


def decode_mention(group_id: str, episode_uuid: str, entity_uuid: str) -> Mention:
    return Mention.model_construct(group_id=group_id, episode_uuid=episode_uuid, entity_uuid=entity_uuid)


def correction_row(c: Correction) -> tuple[str, str, int, str]:
    """(group_id, uuid, created_at, record) of the ``corrections`` table: the record without embeddings."""
    return c.group_id, c.uuid, to_us(c.created_at), c.stored().model_dump_json()


def decode_correction(record: str) -> Correction:
    return Correction.model_validate_json(record)
