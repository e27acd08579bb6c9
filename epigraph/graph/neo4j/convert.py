"""Model <-> Neo4j property maps.

Encoding (what every statement in ``cypher.py`` relies on):

- **datetimes** are native Neo4j ``DATETIME`` values in UTC. They compare chronologically in Cypher and
  are range-indexable, so ``graph.temporal``'s filters become plain ``<=`` / ``<`` comparisons. ``None``
  is a missing property (Cypher ``null``).
- **embeddings** (entity name, fact text, episode content) are ``LIST<FLOAT>`` (float64 on the wire),
  sent as :class:`Vector` (a ``list[float]`` with a short ``repr``: the driver formats every parameter
  of a RUN for its debug log even when that log is off, and a long list of floats is slow to ``repr``). Next
  to each one, ``*_embedding_dim`` holds its length when cosine is defined for it (finite, non-zero
  norm) and is absent otherwise, so the exact-scan fallback never feeds ``vector.similarity.cosine`` a
  vector it rejects.
- **reads return datetimes as epoch microseconds** (``cypher._props``), turned back into UTC datetimes
  here: exact, and far cheaper than the driver's DATETIME decoding.
- **writes send datetimes as ISO-8601 strings** that the statements turn into ``DATETIME`` with
  ``datetime(...)``: the driver's own datetime encoding is slow per value, and a bulk write holds
  thousands.
- **attributes** and the episode's ``report`` are JSON strings; lists of strings stay lists.
- entities also carry ``norm_names`` (normalized name + aliases) and ``name_keys`` (their hashes: the
  terms ``entities_by_names`` looks up in the entity fulltext index), and ``row_hash``: a digest of the
  fields the row derives from (:func:`entity_row_hash`), so a write sends only entities whose stored
  row differs (see ``writing``).
- a fact's ``invalidated_by`` is flattened to ``invalidated_by_fact`` / ``invalidated_by_episode`` /
  ``previous_invalid_at``; its endpoints are the relationship's nodes, not properties. It also carries
  two keys in epoch microseconds that the exact vector scan seeks
  (``cypher_search.SCAN_FACTS_VECTOR``, ``SCAN_FACTS_KNOWN_VECTOR``): ``start_us``, its
  ``graph.temporal.start_key`` or the least int64 when its start is open, and ``known_from_us``, its
  ``created_at``.
"""

from __future__ import annotations

import hashlib
import json
import math
import struct
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import pydantic_core

from ..corrections import Correction
from ..model import Entity, Episode, Fact, IngestReport, Invalidation, Mention, epoch_us, normalize_name
from ..store import StoreStats
from ..temporal import start_key
from . import cypher_search as qs

Props = dict[str, Any]


def to_json(value: Any) -> str:
    """JSON text; values JSON has no type for (datetimes, ...) are written as pydantic writes them."""
    return pydantic_core.to_json(value).decode("utf-8")


def name_key(normalized_name: str) -> str:
    """The fixed-size term a normalized name is indexed under (hex; no escaping, no Lucene term limit)."""
    return hashlib.sha256(normalized_name.encode("utf-8")).hexdigest()[:32]


class Vector(list[float]):
    """A ``list[float]`` whose ``repr`` is its length, not its values (see the module docstring)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"<vector of {len(self)} floats>"


def to_vector(values: Sequence[float] | Any) -> Vector:
    """A :class:`Vector` of Python floats from any sequence of numbers (numpy arrays included)."""
    return Vector(np.asarray(values, dtype=np.float64).tolist())


def _cosine_defined(vector: Vector) -> bool:
    """Finite and not all zero. A sum of floats is finite only if every one is, so the exact numpy check
    runs only when the sum is not (a non-finite value, or an overflow of finite ones)."""
    if not vector:
        return False
    if not math.isfinite(sum(vector)) and not np.isfinite(np.asarray(vector, dtype=np.float64)).all():
        return False
    return any(vector)


def cosine_dim(vector: Sequence[float] | None) -> int | None:
    """``len(vector)`` when cosine similarity is defined for it (finite, non-zero), else ``None``."""
    if vector is None:
        return None
    converted = to_vector(vector)
    return len(converted) if _cosine_defined(converted) else None


def _embedding(values: Sequence[float] | None) -> tuple[Vector | None, int | None]:
    """The vector to store and its ``*_embedding_dim`` (``None`` when cosine is undefined for it).

    ``values`` is a model's embedding, a ``list[float]`` by validation: copied as it is, without the
    numpy round trip of :func:`to_vector` (a bulk write holds thousands of vectors)."""
    if values is None:
        return None, None
    vector = Vector(values)
    return vector, (len(vector) if _cosine_defined(vector) else None)


def iso(value: datetime | None) -> str | None:
    """A datetime parameter for ``datetime($x)`` in Cypher (``datetime(null)`` is null)."""
    return None if value is None else value.isoformat()


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def from_micros(micros: int) -> datetime:
    """A UTC datetime from the epoch microseconds that read statements return (cypher._props)."""
    return _EPOCH + timedelta(microseconds=micros)


def start_us(fact: Fact) -> int:
    """A fact's key in the as-of index (``cypher_search.SCAN_FACTS_VECTOR``): ``temporal.start_key``, or
    the least int64 for an open start."""
    key = start_key(fact)
    return qs.START_UNBOUNDED if key is None else epoch_us(key)


def _dt(props: Mapping[str, Any], key: str) -> datetime | None:
    value = props.get(key)
    return None if value is None else from_micros(value)


# --- episodes -----------------------------------------------------------------------------------------
def episode_row(ep: Episode) -> Props:
    """One row for ``cypher.UPSERT_EPISODES``: the key, ``props`` to set, datetimes as ISO strings."""
    embedding, dim = _embedding(ep.content_embedding)
    props = {
        "uuid": ep.uuid,
        "group_id": ep.group_id,
        "name": ep.name,
        "content": ep.content,
        "kind": ep.kind.value,
        "source_description": ep.source_description,
        "content_hash": ep.content_hash,
        "status": ep.status.value,
        "error": ep.error,
        "report_json": ep.report.model_dump_json(),
        "content_embedding": embedding,
        "content_embedding_dim": dim,
    }
    return {
        "uuid": ep.uuid,
        "group_id": ep.group_id,
        "props": props,
        "reference_time": iso(ep.reference_time),
        "created_at": iso(ep.created_at),
    }


def episode_from(props: Mapping[str, Any]) -> Episode:
    report = props.get("report_json")
    embedding = props.get("content_embedding")
    return Episode(
        uuid=props["uuid"],
        group_id=props["group_id"],
        name=props.get("name", ""),
        content=props.get("content", ""),
        kind=props.get("kind", "message"),
        source_description=props.get("source_description", ""),
        reference_time=from_micros(props["reference_time"]),
        created_at=from_micros(props["created_at"]),
        content_hash=props.get("content_hash", ""),
        status=props.get("status", "pending"),
        error=props.get("error"),
        report=IngestReport.model_validate_json(report) if report else IngestReport(),
        content_embedding=None if embedding is None else list(embedding),
    )


# --- entities -----------------------------------------------------------------------------------------
def entity_row(entity: Entity, row_hash: str) -> Props:
    """One row for ``cypher.UPSERT_ENTITIES``: the key, ``props`` to set (``row_hash`` is
    :func:`entity_row_hash`, computed first to skip unchanged entities), ``created_at`` as ISO string."""
    embedding, dim = _embedding(entity.name_embedding)
    props = {
        "uuid": entity.uuid,
        "group_id": entity.group_id,
        "name": entity.name,
        "aliases": list(entity.aliases),
        "norm_names": sorted(entity.normalized_names),
        "name_keys": sorted({name_key(n) for n in entity.normalized_names}),
        "labels": list(entity.labels),
        "summary": entity.summary,
        "attributes_json": to_json(entity.attributes),
        "name_embedding": embedding,
        "name_embedding_dim": dim,
        "row_hash": row_hash,
    }
    created_at = iso(entity.created_at)
    return {"uuid": entity.uuid, "group_id": entity.group_id, "props": props, "created_at": created_at}


# Part of every row hash: change it when entity_row's encoding changes, and every stored row is rewritten.
ENTITY_ROW_FORMAT = "entity-row-1"


def entity_row_hash(entity: Entity) -> str:
    """A digest of everything :func:`entity_row` derives its row from: equal digests, equal rows."""
    fields = [ENTITY_ROW_FORMAT, entity.uuid, entity.group_id, entity.name, entity.aliases, entity.labels,
              entity.summary, entity.attributes, iso(entity.created_at)]  # fmt: skip
    digest = hashlib.blake2b(pydantic_core.to_json(fields), digest_size=16)
    vector = entity.name_embedding
    digest.update(b"-" if vector is None else struct.pack(f"{len(vector)}d", *vector))
    return digest.hexdigest()


def entity_from(props: Mapping[str, Any]) -> Entity:
    embedding = props.get("name_embedding")
    return Entity(
        uuid=props["uuid"],
        group_id=props["group_id"],
        name=props["name"],
        aliases=list(props.get("aliases") or []),
        labels=list(props.get("labels") or []),
        summary=props.get("summary", ""),
        attributes=json.loads(props.get("attributes_json") or "{}"),
        name_embedding=None if embedding is None else list(embedding),
        created_at=from_micros(props["created_at"]),
    )


def normalized(names: Sequence[str]) -> dict[str, str]:
    """Each given name -> its normalized form (the ``entities_by_names`` key)."""
    return {name: normalize_name(name) for name in names}


# --- facts ---------------------------------------------------------------------------------------------
def fact_row(fact: Fact) -> Props:
    """One row for ``cypher.UPSERT_FACTS``: endpoints to match, ``props`` to set, datetimes as ISO strings."""
    embedding, dim = _embedding(fact.text_embedding)
    inv = fact.invalidated_by
    props: Props = {
        "uuid": fact.uuid,
        "group_id": fact.group_id,
        "relation": fact.relation,
        "text": fact.text,
        "text_embedding": embedding,
        "text_embedding_dim": dim,
        "episodes": list(fact.episodes),
        "invalidated_by_fact": None if inv is None else inv.fact_uuid,
        "invalidated_by_episode": None if inv is None else inv.episode_uuid,
        "attributes_json": to_json(fact.attributes),
        "start_us": start_us(fact),
        "known_from_us": epoch_us(fact.created_at),
    }
    return {
        "uuid": fact.uuid,
        "group_id": fact.group_id,
        "source_uuid": fact.source_uuid,
        "target_uuid": fact.target_uuid,
        "props": props,
        "valid_at": iso(fact.valid_at),
        "invalid_at": iso(fact.invalid_at),
        "stated_at": iso(fact.stated_at),
        "created_at": iso(fact.created_at),
        "expired_at": iso(fact.expired_at),
        "previous_invalid_at": None if inv is None else iso(inv.previous_invalid_at),
    }


def fact_from(row: Mapping[str, Any]) -> Fact:
    """From ``cypher.FACT_MAP``: ``{props, source_uuid, target_uuid}``."""
    props = row["props"]
    embedding = props.get("text_embedding")
    inv_fact, inv_episode = props.get("invalidated_by_fact"), props.get("invalidated_by_episode")
    invalidation = None
    if inv_fact is not None and inv_episode is not None:
        invalidation = Invalidation(
            fact_uuid=inv_fact,
            episode_uuid=inv_episode,
            previous_invalid_at=_dt(props, "previous_invalid_at"),
        )
    return Fact(
        uuid=props["uuid"],
        group_id=props["group_id"],
        source_uuid=row["source_uuid"],
        target_uuid=row["target_uuid"],
        relation=props["relation"],
        text=props["text"],
        text_embedding=None if embedding is None else list(embedding),
        episodes=list(props.get("episodes") or []),
        valid_at=_dt(props, "valid_at"),
        invalid_at=_dt(props, "invalid_at"),
        stated_at=_dt(props, "stated_at"),
        created_at=from_micros(props["created_at"]),
        expired_at=_dt(props, "expired_at"),
        invalidated_by=invalidation,
        attributes=json.loads(props.get("attributes_json") or "{}"),
    )


# --- mentions -----------------------------------------------------------------------------------------
def mention_row(mention: Mention) -> Props:
    return {
        "group_id": mention.group_id,
        "episode_uuid": mention.episode_uuid,
        "entity_uuid": mention.entity_uuid,
    }


def stats_from(record: Mapping[str, Any]) -> StoreStats:
    """The counts of ``cypher.STATS``."""
    fields = ("episodes", "entities", "facts", "current_facts", "mentions", "owed_summaries",
              "decision_records", "decision_bytes")  # fmt: skip
    return StoreStats(**{name: int(record[name]) for name in fields})


def mention_from(group_id: str, row: Mapping[str, Any]) -> Mention:
    return Mention(group_id=group_id, episode_uuid=row["episode_uuid"], entity_uuid=row["entity_uuid"])


# --- corrections ---------------------------------------------------------------------------------------
def correction_row(correction: Correction) -> Props:
    """One row for ``cypher_edit.CREATE_CORRECTIONS``: the record without embeddings, its subjects."""
    return {
        "uuid": correction.uuid,
        "created_at": iso(correction.created_at),
        "subjects": correction.subjects(),
        "record": correction.stored().model_dump_json(),
    }


def correction_from(record: str) -> Correction:
    return Correction.model_validate_json(record)
