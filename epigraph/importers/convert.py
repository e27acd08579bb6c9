"""Raw records -> episode inputs (what ``Ingestor.ingest`` takes) and Episode objects. Pure; no I/O.

Choices (documented because every importer has to make them):

- Messages mode gives one ``message`` episode per message: an ``EpisodeInput`` with the text and the
  speaker, which the ingestor (and :func:`to_episode`) turns into content ``"Speaker: text"`` and
  name = the speaker (episodes have no speaker field). The speaker defaults to the role (``user``,
  ``assistant``).
  System messages (and the mapping's ``system``) become episodes only with ``include_system``, tool
  messages (function results: usually noise for a memory) only with ``include_tool``.
- An ``each`` element without content (e.g. an assistant tool call) is skipped and counted in
  ``stats.empty_messages``; a record whose required text or content reaches nothing, or whose timestamp
  is not a date, is an :class:`InvalidRecord` (file, line, path, reason).
- reference_time: the message's timestamp, else the record's ``meta.timestamp``, else ``default_time``
  (the caller passes the file's modification time).
- Ids, so that importing again is a no-op (``graph.model.episode_uuid`` with a given id): the source
  namespaces every id (``locomo:26`` + ``D1:3``). A message id is used as-is; a record's
  ``meta.original_id`` gets ``#<position>`` when a record can hold several messages. Without any id the
  record's position in the file (line, element, path) and the content hash are used, so identical
  messages at different places stay distinct episodes.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime

from epigraph.episodes.inputs import EpisodeInput, content_problem
from epigraph.graph.model import Episode, EpisodeKind, check_group_id, content_hash

from . import paths as P
from .compiled import CompiledMapping, CompiledMessage, Field, each_scopes
from .dates import DateParser
from .readers import InvalidRecord, RawRecord

MESSAGE, TEXT = EpisodeKind.MESSAGE, EpisodeKind.TEXT
DEFAULT_SPEAKERS = {"user": "user", "assistant": "assistant", "system": "system", "tool": "tool"}


@dataclass
class ConvertStats:
    records: int = 0
    invalid: int = 0
    episodes: int = 0
    empty_messages: int = 0
    skipped_roles: dict[str, int] = field(default_factory=dict)
    """Messages left out by role (system, tool)."""


@dataclass(frozen=True, slots=True)
class _Base:
    """What every episode of one (fanned-out) record shares."""

    scope: P.Scope
    raw: RawRecord
    key: str
    source: str
    time: datetime | None
    record_id: str | None


class _Invalid(Exception):
    def __init__(self, path: Field | str | None, reason: str) -> None:
        self.path, self.reason = (str(path) if path is not None else None), reason


@dataclass
class Converter:
    compiled: CompiledMapping
    group_id: str
    default_source: str
    default_time: datetime
    stats: ConvertStats = field(default_factory=ConvertStats)

    def __post_init__(self) -> None:
        check_group_id(self.group_id)
        self._dates = DateParser(self.compiled.meta.timestamp_format)
        self._multi = self.compiled.multi_message()

    def convert(self, raw: RawRecord) -> Iterator[EpisodeInput | InvalidRecord]:
        """The episode inputs of one file record, or an InvalidRecord per fanned-out record that fails."""
        self.stats.records += 1
        scopes = self.compiled.scopes(raw.value)
        if not scopes:
            self.stats.invalid += 1
            yield InvalidRecord(
                raw.file, raw.line, str(self.compiled.records), "records path reaches nothing"
            )
            return
        fanned = self.compiled.records is not None
        for k, scope in enumerate(scopes):
            key = f"{raw.key}/{k}" if fanned else raw.key
            try:
                episodes = self._episodes(self._base(scope, raw, key))
            except _Invalid as bad:
                self.stats.invalid += 1
                where = f" (item {k} of {self.compiled.records})" if fanned else ""
                yield InvalidRecord(raw.file, raw.line, bad.path, bad.reason + where)
                continue
            self.stats.episodes += len(episodes)
            yield from episodes

    def _base(self, scope: P.Scope, raw: RawRecord, key: str) -> _Base:
        meta = self.compiled.meta
        source = meta.source.text(scope, " ") if meta.source.is_set else ""
        return _Base(
            scope=scope,
            raw=raw,
            key=key,
            source=source or self.default_source,
            time=self._time(meta.timestamp, scope),
            record_id=meta.original_id.text(scope, ":") or None,
        )

    def _time(self, spec: Field, scope: P.Scope) -> datetime | None:
        if not spec.is_set:
            return None
        raw = spec.first(scope)
        if raw is None or raw == "":
            return None
        parsed = self._dates.parse(raw)
        if parsed is None:
            raise _Invalid(spec, f"{raw!r} is not a date")
        return parsed

    def _episodes(self, base: _Base) -> list[EpisodeInput]:
        if self.compiled.mode == "text":
            return [self._text_episode(base)]
        return self._message_episodes(base)

    # -- text mode -------------------------------------------------------------------------------

    def _text_episode(self, base: _Base) -> EpisodeInput:
        text = self.compiled.text.text(base.scope)
        if not text.strip():
            raise _Invalid(self.compiled.text, "the text reaches nothing")
        name = self.compiled.name.text(base.scope, " ") if self.compiled.name.is_set else ""
        name = name or base.record_id or f"{base.source} {base.key}"
        return self._input(base, text, name, TEXT, base.time, base.record_id, 0)

    # -- messages mode ---------------------------------------------------------------------------

    def _message_episodes(self, base: _Base) -> list[EpisodeInput]:
        out: list[EpisodeInput] = []
        position = 0
        if self.compiled.include_system and self.compiled.system.is_set:
            text = self.compiled.system.text(base.scope)
            if text.strip():
                given = self._message_id(base, None, position)
                out.append(self._input(base, text, "system", MESSAGE, base.time, given, position))
            position += 1
        for spec in self.compiled.messages:
            for scope in each_scopes(spec, base.scope):
                item = self._message(base, spec, scope, position)
                position += 1
                if item is not None:
                    out.append(item)
        if not out and any(spec.each is not None for spec in self.compiled.messages):
            raise _Invalid(self.compiled.messages[0].content, "no message with content in the record")
        return out

    def _message(
        self, base: _Base, spec: CompiledMessage, scope: P.Scope, position: int
    ) -> EpisodeInput | None:
        text = spec.content.text(scope)
        if not text.strip():
            if spec.each is not None:
                self.stats.empty_messages += 1
                return None
            raise _Invalid(spec.content, "the message content reaches nothing")
        role = spec.role_of(scope)
        if role is None:
            raise _Invalid(spec.role_path, f"role {spec.role_path.first(scope)!r} is not a known role")
        if (role == "system" and not self.compiled.include_system) or (
            role == "tool" and not self.compiled.include_tool
        ):
            self.stats.skipped_roles[role] = self.stats.skipped_roles.get(role, 0) + 1
            return None
        speaker = (spec.speaker.text(scope, " ") if spec.speaker.is_set else "").strip()
        speaker = speaker or DEFAULT_SPEAKERS[role]
        time = self._time(spec.timestamp, scope) or base.time
        own_id = (spec.id.text(scope, ":") or None) if spec.id.is_set else None
        given = self._message_id(base, own_id, position)
        return self._input(base, text, speaker, MESSAGE, time, given, position)

    def _message_id(self, base: _Base, own_id: str | None, position: int) -> str | None:
        if own_id is not None:
            return own_id
        if base.record_id is not None:
            return f"{base.record_id}#{position}" if self._multi else base.record_id
        return None

    # -- common ----------------------------------------------------------------------------------

    def _input(
        self,
        base: _Base,
        text: str,
        speaker_or_name: str,
        kind: EpisodeKind,
        time: datetime | None,
        given_id: str | None,
        position: int,
    ) -> EpisodeInput:
        if given_id is None:
            given_id = f"{base.key}#{position}:{content_hash(text)[:16]}"
        if (problem := content_problem(text)) is not None:
            raise _Invalid(None, f"the {'message' if kind == MESSAGE else 'text'} is too long: {problem}")
        message = kind == MESSAGE
        return EpisodeInput(
            content=text,
            reference_time=time or self.default_time,
            group_id=self.group_id,
            kind=kind,
            speaker=speaker_or_name if message else None,
            name="" if message else speaker_or_name,
            source_description=base.source,
            episode_id=f"{base.source}:{given_id}",
            line=base.raw.line,
        )


def to_episode(item: EpisodeInput, created_at: datetime | None = None) -> Episode:
    """The Episode the ingestor makes of an input (same content, name and uuid): see
    :meth:`EpisodeInput.to_episode`."""
    return item.to_episode(created_at)
