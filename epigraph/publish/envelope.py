"""The message format of the episodes topic: one validated episode per Kafka message, keyed by group.

Key: the group id, UTF-8 (Kafka's default partitioner hashes it, so a group's episodes share one
partition and keep their order). Value: a versioned JSON envelope, UTF-8::

    {"v": 1,
     "uuid": "<the episode's deterministic id>",
     "group": "<group id>",
     "created_at": "<ISO 8601 UTC, microseconds: the producer's clock, strictly increasing per producer>",
     "episode": {"content": ..., "reference_time": ..., "kind": ..., "speaker": ..., "name": ...,
                 "source": ..., "id": ...}}

``episode`` holds the fields of one line of ``epigraph ingest``'s JSONL (``speaker``, ``name``,
``source`` and ``id`` are ``null`` or absent when unset), so a message is an input line that was already
validated; ``uuid`` is what ingesting it will store (``EpisodeInput.to_episode``), so a consumer can
check it and a log can name the episode before any work. ``created_at`` orders a group's episodes that
share a reference time the same way on every worker.

**Version 2** is an episode its producer redacted (``IngestOptions.redact``: :func:`redacted`), so no
original travels through the topic: ``episode`` holds the redacted text (its ``content`` already
``"Speaker: text"``, ``speaker`` null, ``name`` the redacted one), ``"vault"`` names the redaction vault
its placeholders are numbered in (``privacy.vault.vault_id``: the producer numbered them through the
store, which must be the workers'), and ``uuid`` is the id of the episode as it was given (what
ingesting it anywhere else stores), which the worker cannot recompute from the redacted text and takes
as given. A message with nothing to redact stays version 1. An epigraph that reads only version 1
dead-letters a version 2 message rather than storing it under another id.

:func:`encode` takes an :class:`EpisodeInput` (validated by construction: the JSONL parser, the importers
and :meth:`EpisodeInput.coerce` build them); :func:`decode` reads a message back and raises
:class:`~epigraph.errors.InputError` naming the field for anything malformed, an unknown version included.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from ..episodes.inputs import EpisodeInput
from ..errors import InputError
from ..graph.model import Episode, EpisodeKind, check_group_id, check_uuid, to_utc

VERSION = 1
REDACTED = 2
"""The version of an envelope whose episode its producer redacted (the module docstring)."""
EPISODE_FIELDS = ("content", "reference_time", "kind", "speaker", "name", "source", "id")


@dataclass(frozen=True)
class Envelope:
    """One message of the episodes topic (see the module docstring)."""

    uuid: str
    group: str
    created_at: datetime
    episode: EpisodeInput
    vault: str | None = None
    """The redaction vault the producer numbered the episode's placeholders in (version 2), else None."""

    @property
    def key(self) -> bytes:
        return self.group.encode("utf-8")

    def to_input(self) -> EpisodeInput:
        return self.episode

    def to_episode(self) -> Episode:
        """The pending Episode to ingest, created at the producer's time (its ``uuid`` is ``self.uuid``)."""
        episode = self.episode.to_episode(created_at=self.created_at)
        return episode if episode.uuid == self.uuid else episode.model_copy(update={"uuid": self.uuid})


def envelope(item: EpisodeInput, created_at: datetime) -> Envelope:
    """The envelope of a validated input; ``created_at`` is read as UTC."""
    at: datetime = to_utc(created_at)
    uuid = item.to_episode(created_at=at).uuid
    return Envelope(uuid=uuid, group=item.group_id, created_at=at, episode=item)


def redacted(message: Envelope, episode: Episode, vault: str) -> Envelope:
    """``message`` carrying ``episode``, its episode as the producer redacted it (``Ingestor.redacted``:
    same id, group, times and kind) into the vault ``vault`` (version 2)."""
    item = message.episode
    said = EpisodeInput(
        content=episode.content, reference_time=item.reference_time, group_id=item.group_id, kind=item.kind,
        name=episode.name, source_description=episode.source_description, episode_id=item.episode_id,
    )  # fmt: skip
    return replace(message, episode=said, vault=vault)


def encode(message: Envelope) -> bytes:
    """The message value: compact JSON, UTF-8."""
    item = message.episode
    episode = {
        "content": item.content,
        "reference_time": item.reference_time.isoformat(),
        "kind": item.kind.value,
        "speaker": item.speaker,
        "name": item.name or None,
        "source": item.source_description or None,
        "id": item.episode_id,
    }
    data = {
        "v": VERSION if message.vault is None else REDACTED,
        "uuid": message.uuid,
        "group": message.group,
        "created_at": message.created_at.isoformat(timespec="microseconds"),
        "episode": episode,
        **({"vault": message.vault} if message.vault is not None else {}),
    }
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def decode(value: bytes | None) -> Envelope:
    """Read a message value back; :class:`InputError` (with the field) for anything malformed."""
    data = _object(value)
    version = data.get("v")
    if version not in (VERSION, REDACTED) or isinstance(version, bool):
        known = f"this epigraph reads {VERSION} and {REDACTED}"
        raise _bad(f"unsupported envelope version {version!r} ({known})", "v")
    group = _string(data, "group", required=True)
    try:
        check_group_id(group)
    except ValueError as exc:
        raise _bad(str(exc), "group") from None
    episode = data.get("episode")
    if not isinstance(episode, dict):
        raise _bad("missing or not an object", "episode")
    unknown = sorted(set(episode) - set(EPISODE_FIELDS))
    if unknown:
        raise _bad(f"unknown field (known: {', '.join(EPISODE_FIELDS)})", f"episode.{unknown[0]}")
    item = EpisodeInput(
        content=_string(episode, "content", required=True, prefix="episode."),
        reference_time=_time(episode, "reference_time", "episode."),
        group_id=group,
        kind=_kind(episode.get("kind")),
        speaker=_string(episode, "speaker", prefix="episode.") or None,
        name=_string(episode, "name", prefix="episode."),
        source_description=_string(episode, "source", prefix="episode."),
        episode_id=_string(episode, "id", prefix="episode.") or None,
    )
    message = envelope(item, _time(data, "created_at", ""))
    uuid = _string(data, "uuid", required=True)
    if version == REDACTED:  # the id of the original, which the redacted text cannot give again
        try:
            check_uuid(uuid)
        except ValueError as exc:
            raise _bad(str(exc), "uuid") from None
        return replace(message, uuid=uuid, vault=_string(data, "vault", required=True))
    if uuid != message.uuid:
        raise _bad(f"{data['uuid']!r} is not the id of this episode ({message.uuid})", "uuid")
    return message


def _bad(message: str, field: str | None = None) -> InputError:
    return InputError(f"malformed episode message: {message}", field=field)


def _object(value: bytes | None) -> dict[str, Any]:
    if value is None:
        raise _bad("empty value")
    try:
        data = json.loads(value.decode("utf-8"))
    except UnicodeDecodeError:
        raise _bad("not UTF-8") from None
    except json.JSONDecodeError as exc:
        raise _bad(f"not valid JSON ({exc.msg} at column {exc.colno})") from None
    if not isinstance(data, dict):
        raise _bad(f"expected a JSON object, got {type(data).__name__}")
    return data


def _string(data: dict[str, Any], name: str, *, required: bool = False, prefix: str = "") -> str:
    value = data.get(name)
    if value is None or value == "":
        if required:
            raise _bad("missing or empty", prefix + name)
        return ""
    if not isinstance(value, str):
        raise _bad(f"must be a string, got {type(value).__name__}", prefix + name)
    return value


def _time(data: dict[str, Any], name: str, prefix: str) -> datetime:
    text = _string(data, name, required=True, prefix=prefix)
    try:
        return to_utc(text)  # type: ignore[no-any-return]
    except ValueError:
        raise _bad(f"not an ISO 8601 time: {text!r}", prefix + name) from None


def _kind(value: Any) -> EpisodeKind:
    try:
        return EpisodeKind(value or "message")
    except ValueError:
        allowed = ", ".join(k.value for k in EpisodeKind)
        raise _bad(f"must be one of {allowed}, got {value!r}", "episode.kind") from None
