"""Episode inputs, and the pure parser of JSONL episode files (the CLI's ``epigraph ingest FILE``).

One JSON object per line::

    {"content": "I moved to Berlin.", "kind": "message", "speaker": "Alice",
     "reference_time": "2024-05-02T10:00:00Z", "group": "alice", "source": "chat", "name": "", "id": "m-17"}

``content`` and ``reference_time`` are required (``reference_time`` may come from a default instead:
it keys idempotency, so "now" is never silently assumed); the others are optional. ``content`` holds at
most :data:`MAX_EPISODE_CHARS` characters, the one limit of every door. Blank lines and lines
starting with ``#`` are skipped. Every problem is an :class:`~epigraph.errors.InputError` carrying the
file, the 1-based line number and the field, yielded in place of the episode so the caller can stop at
the first one or skip bad lines.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, TypedDict

from ..errors import InputError
from ..graph.model import Episode, EpisodeKind, check_group_id, content_hash, episode_uuid, to_utc, utc_now

FIELDS = ("content", "kind", "speaker", "reference_time", "group", "source", "name", "id")
MAX_EPISODE_CHARS = 20_000
"""The longest content one episode takes, the same at every door (an ``EpisodeInput`` built by the
library, an episode file's line, an imported record, HTTP and MCP, a Kafka message): about 5,000
tokens, a long message or a few pages. Longer text is refused, saying where, never cut or sent whole to
the model: split it into several episodes (a document: one per section or page)."""


def content_problem(content: str, limit: int = MAX_EPISODE_CHARS) -> str | None:
    """Why ``content`` is too long for an episode (``limit``: a door may set a lower one), else None."""
    if len(content) <= limit:
        return None
    return f"at most {limit} characters, got {len(content)} (split it into several episodes)"


@dataclass(frozen=True)
class EpisodeInput:
    """One episode to ingest: the one declaration of an episode's fields and their defaults (what the
    queue's ``add_episode`` / ``add_episodes`` / ``ingest`` take, what a group handle's ``add_episode``
    builds from its keywords, what an episode file's line and the HTTP / MCP ``EpisodeIn`` become).
    ``reference_time`` is kept in UTC (a naive time is read as UTC)."""

    content: str
    reference_time: datetime
    group_id: str = "default"
    kind: EpisodeKind = EpisodeKind.MESSAGE
    speaker: str | None = None
    name: str = ""
    source_description: str = ""
    episode_id: str | None = None
    line: int | None = None
    """Where it came from in an input file (for messages), if anywhere."""

    def __post_init__(self) -> None:
        """InputError (field ``content``) when the content is over :data:`MAX_EPISODE_CHARS`."""
        if (problem := content_problem(self.content)) is not None:
            raise InputError(problem, line=self.line, field="content")
        object.__setattr__(self, "reference_time", to_utc(self.reference_time))

    def to_episode(self, created_at: datetime | None = None) -> Episode:
        """The pending Episode this input becomes: content ``"Speaker: text"`` for messages with a
        speaker (named after the speaker), and the deterministic uuid that makes re-ingestion a no-op.
        Importer dry runs use it too, so they show exactly the ids an ingestion stores."""
        content, name = self.content, self.name
        if self.speaker and self.kind == EpisodeKind.MESSAGE:
            if not content.lstrip().startswith(f"{self.speaker}:"):
                content = f"{self.speaker}: {content}"
            name = name or self.speaker
        digest = content_hash(content)
        return Episode(
            uuid=episode_uuid(self.group_id, digest, self.reference_time, self.episode_id),
            group_id=self.group_id,
            name=name,
            content=content,
            kind=self.kind,
            source_description=self.source_description,
            reference_time=self.reference_time,
            created_at=created_at or utc_now(),
            content_hash=digest,
        )

    @classmethod
    def coerce(cls, item: EpisodeInput | Mapping[str, Any]) -> EpisodeInput:
        """Accept an EpisodeInput or a mapping with the file's field names or the attribute names."""
        if isinstance(item, EpisodeInput):
            return item
        data = dict(item)
        aliases = {"group": "group_id", "source": "source_description", "id": "episode_id"}
        data = {aliases.get(k, k): v for k, v in data.items()}
        try:
            data["reference_time"] = to_utc(data["reference_time"])
            data["kind"] = EpisodeKind(data.get("kind", "message"))
            if "group_id" in data:
                check_group_id(data["group_id"])
            return cls(**data)
        except InputError:
            raise
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"invalid episode: {exc}") from None


class EpisodeFields(TypedDict, total=False):
    """The optional fields of :class:`EpisodeInput` a caller names by keyword (a group handle's
    ``add_episode``; the group is the handle's, the line a file's): their defaults are EpisodeInput's,
    ``kind`` may be spelled as a string (read by :meth:`EpisodeInput.coerce`)."""

    kind: EpisodeKind | str
    speaker: str | None
    name: str
    source_description: str
    episode_id: str | None


def parse_episode_lines(
    lines: Iterable[str],
    *,
    file: str | None = None,
    default_group: str = "default",
    default_reference_time: datetime | None = None,
) -> Iterator[EpisodeInput | InputError]:
    """Parse JSONL episode lines; yields an ``EpisodeInput`` or an ``InputError`` per non-blank line."""
    for number, raw in enumerate(lines, start=1):
        text = raw.strip()
        if not text or text.startswith("#"):
            continue
        try:
            yield _parse_line(text, number, file, default_group, default_reference_time)
        except InputError as exc:
            yield exc


def _fail(message: str, line: int, file: str | None, field: str | None = None) -> InputError:
    return InputError(message, file=file, line=line, field=field)


def _parse_line(
    text: str, line: int, file: str | None, default_group: str, default_time: datetime | None
) -> EpisodeInput:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise _fail(f"not valid JSON ({exc.msg} at column {exc.colno})", line, file) from None
    if not isinstance(data, dict):
        raise _fail(f"expected a JSON object, got {type(data).__name__}", line, file)
    unknown = sorted(set(data) - set(FIELDS))
    if unknown:
        raise _fail(f"unknown field (known: {', '.join(FIELDS)})", line, file, unknown[0])
    for name in ("content", "kind", "speaker", "group", "source", "name", "id", "reference_time"):
        if data.get(name) is not None and not isinstance(data[name], str):
            raise _fail(f"must be a string, got {type(data[name]).__name__}", line, file, name)
    content = data.get("content")
    if not content or not content.strip():
        raise _fail("missing or empty", line, file, "content")
    if (problem := content_problem(content)) is not None:
        raise _fail(problem, line, file, "content")
    return EpisodeInput(
        content=content,
        reference_time=_reference_time(data.get("reference_time"), default_time, line, file),
        group_id=_group(data.get("group") or default_group, line, file),
        kind=_kind(data.get("kind") or "message", line, file),
        speaker=(data.get("speaker") or "").strip() or None,
        name=data.get("name") or "",
        source_description=data.get("source") or "",
        episode_id=data.get("id") or None,
        line=line,
    )


def _reference_time(value: str | None, default: datetime | None, line: int, file: str | None) -> datetime:
    if value is None:
        if default is None:
            raise _fail("missing (ISO 8601, e.g. 2024-05-02T10:00:00Z)", line, file, "reference_time")
        return to_utc(default)  # type: ignore[no-any-return]
    try:
        return to_utc(value)  # type: ignore[no-any-return]
    except ValueError:
        raise _fail(f"not an ISO 8601 time: {value!r}", line, file, "reference_time") from None


def _group(value: str, line: int, file: str | None) -> str:
    try:
        return check_group_id(value)
    except ValueError as exc:
        raise _fail(str(exc), line, file, "group") from None


def _kind(value: str, line: int, file: str | None) -> EpisodeKind:
    try:
        return EpisodeKind(value)
    except ValueError:
        allowed = ", ".join(k.value for k in EpisodeKind)
        raise _fail(f"must be one of {allowed}, got {value!r}", line, file, "kind") from None


@contextmanager
def open_lines(path: Path) -> Iterator[Iterator[str]]:
    """The file's lines, each with its line end (``.gz`` decompressed); a missing file is an InputError,
    and so is a line that is not UTF-8 text, naming the file and the line."""
    if not path.is_file():
        raise InputError("no such file", file=str(path))
    opened = gzip.open(path, "rb") if path.suffix == ".gz" else path.open("rb")
    with opened as handle:
        yield _decoded(handle, str(path))


def _decoded(handle: Iterable[bytes], file: str) -> Iterator[str]:
    """Each line decoded by itself, so a bad byte is reported on its own line (a text stream decodes a
    block at a time: its error would not say which line)."""
    for number, raw in enumerate(handle, start=1):
        try:
            yield raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            reason = f"not UTF-8 text ({exc.reason}, byte {exc.start + 1} of the line)"
            raise InputError(reason, file=file, line=number) from None
