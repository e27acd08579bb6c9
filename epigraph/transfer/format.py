"""The dump format: a graph's groups as JSON Lines, versioned and checked line by line.

One JSON object per line (docs/dump-format.md is the reference)::

    {"record": "header", "format": "epigraph-dump", "version": 3, "groups": [...], "vectors": false, ...}
    {"record": "episode", ...Episode fields}          per group: its episodes,
    {"record": "entity", ...Entity fields, "summary_owed"}    entities (owed: a model summary still due),
    {"record": "fact", ...Fact fields}                facts (every time field, provenance, invalidation),
    {"record": "mention", "group_id", "episode_uuid", "entity_uuid"}       mentions,
    {"record": "correction", ...Correction fields}    corrections by hand,
    {"record": "community", ...Community fields}      and the derived records: communities (members),
    {"record": "conversation", ...ConversationSummary fields}   conversation summaries,
    {"record": "forgetting", ...ForgetRecord fields}  forgetting's audit records (v3),
    {"record": "retention", ...RetentionPolicy fields}          the group's retention policy (v3),
    {"record": "decisions", ...DecisionRecord fields} the episodes' decision records (v4)
    {"record": "end", "counts": {group: {record: n}}} the last line: a dump without it was cut short

Each record line is its model's fields (``graph.model``, ``graph.corrections``) as pydantic writes them in
JSON mode, plus ``record`` (its kind; an episode has a field ``kind`` of its own) and, on an entity,
``summary_owed`` (its summary is owed: ``EpisodeWrite.owed_summaries``; optional on reading, false when
absent); embeddings only in a dump ``vectors: true``. Reading (:func:`read`) checks
everything before anything is loaded: the header and its version, every line (JSON, kind, fields, types,
the model's own rules), the group of every record (a correction's slices too), unique ids, that facts
join entities of the dump and mentions an episode and an entity of it, and the end line's counts. The
first problem is an :class:`~epigraph.errors.InputError` naming the file, the line and the field.

Versions: ``VERSION`` is what this epigraph writes; a dump of an older version is read through
``UPGRADES`` (each brings a record of version v to v + 1) or refused saying why; a newer one is refused
(upgrade epigraph).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..errors import InputError
from ..graph.corrections import Correction
from ..graph.decisions import DecisionRecord
from ..graph.derived import Community, ConversationSummary
from ..graph.forgetting import ForgetRecord, RetentionPolicy
from ..graph.model import Entity, Episode, Fact, GroupId, Mention, UtcDatetime
from ..graph.store import DumpRecord, GroupDump
from ..graph.texts import texts_of
from ..version import __version__

FORMAT = "epigraph-dump"
VERSION = 4
"""The format version this epigraph writes (docs/dump-format.md, "Versions")."""
OWED = "summary_owed"
"""The field of an entity line that says its summary is owed (version 2 on)."""
EPIGRAPH_VERSION = __version__
"""The epigraph that wrote a dump (its header's ``epigraph`` field)."""

Record = dict[str, Any]


def _owed_unsaid(record: Record) -> Record:
    """Version 1 -> 2: a version 1 entity line says nothing of an owed summary; it reads as owing none
    (as version 1 loaded it)."""
    return record


def _nothing_forgotten(record: Record) -> Record:
    """Version 2 -> 3: a version 2 dump holds no audit record and no retention policy (its groups had
    none: forgetting came with version 3); its lines are read as they are."""
    return record


def _no_decisions(record: Record) -> Record:
    """Version 3 -> 4: a version 3 dump holds no decision records; its lines read as they are."""
    return record


UPGRADES: dict[int, Callable[[Record], Record]] = {1: _owed_unsaid, 2: _nothing_forgotten, 3: _no_decisions}
"""version v -> the step that rewrites a record line of version v as version v + 1."""
RETIRED: dict[int, str] = {}
"""Versions no upgrade reads, and why (none yet)."""

KINDS: dict[str, type[BaseModel]] = {
    "episode": Episode,
    "entity": Entity,
    "fact": Fact,
    "mention": Mention,
    "correction": Correction,
    "community": Community,
    "conversation": ConversationSummary,
    "forgetting": ForgetRecord,
    "retention": RetentionPolicy,
    "decisions": DecisionRecord,
}
"""Record kinds in the order a group's records are written."""
EMBEDDINGS = {
    "episode": "content_embedding",
    "entity": "name_embedding",
    "fact": "text_embedding",
    "community": "embedding",
}
_KIND_OF: dict[type, str] = {model: kind for kind, model in KINDS.items()}


class _Line(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Embedding(_Line):
    name: str
    dim: int


class Header(_Line):
    record: Literal["header"] = "header"
    format: Literal["epigraph-dump"] = "epigraph-dump"
    version: int = VERSION
    created_at: UtcDatetime
    epigraph: str = EPIGRAPH_VERSION
    groups: list[GroupId]
    vectors: bool = False
    embedding: Embedding | None = None
    """The embedder of the vectors (a dump with ``vectors``): a graph with another one embeds again."""
    schema_: dict[str, list[str]] = Field(default_factory=dict, alias="schema")
    """The fields of each record kind (documentation: the reader checks records against its models).
    In JSON ``schema`` (a field of that name would shadow pydantic's)."""
    doc: str = "docs/dump-format.md"

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    def to_line(self) -> str:
        return json.dumps(self.model_dump(mode="json", by_alias=True), ensure_ascii=False)


class End(_Line):
    record: Literal["end"] = "end"
    counts: dict[GroupId, dict[str, int]]


def schema(vectors: bool) -> dict[str, list[str]]:
    """The fields each record kind is written with."""
    fields = {
        kind: [name for name in model.model_fields if vectors or name != EMBEDDINGS.get(kind)]
        for kind, model in KINDS.items()
    }
    fields["entity"].append(OWED)
    return fields


def header(groups: list[str], vectors: bool, embedding: Embedding | None, now: datetime) -> Header:
    return Header.model_validate({
        "created_at": now, "groups": groups, "vectors": vectors,
        "embedding": embedding if vectors else None, "schema": schema(vectors),
    })  # fmt: skip


def kind_of(item: DumpRecord) -> str:
    """The record kind of ``item`` (``episode``, ``entity``, ...)."""
    return _KIND_OF[type(item)]


def record_line(item: DumpRecord, vectors: bool, owed: Collection[str] = ()) -> str:
    """One record as its line (without the newline); an entity's says whether it is among ``owed``."""
    kind = kind_of(item)
    exclude = None if vectors or kind not in EMBEDDINGS else {EMBEDDINGS[kind]}
    body = item.model_dump(mode="json", exclude=exclude)
    if isinstance(item, Entity):
        body[OWED] = item.uuid in owed
    return json.dumps({"record": kind, **body}, ensure_ascii=False)


# --- reading --------------------------------------------------------------------------------------------


@dataclass
class Dump:
    """A whole dump, read and checked: its header and each group's records (``source``: the file it was
    read from; ``lines``: each record's line, by group, kind and key)."""

    header: Header
    groups: dict[str, GroupDump]
    source: str = "<dump>"
    lines: dict[tuple[str, str, str], int] = field(default_factory=dict)

    def counts(self) -> dict[str, dict[str, int]]:
        return {g: _counts(dump) for g, dump in self.groups.items()}

    def texts(self, group_id: str) -> Iterator[tuple[int | None, str, str]]:
        """``(line, field, text)`` for every text of the group's records (``graph.texts``)."""
        dump = self.groups[group_id]
        for kind, records in _records(dump).items():
            for record in records:
                line = self.lines.get((group_id, kind, _key(record)))
                for name, text in texts_of(record):
                    yield line, name, text


@dataclass
class _Group:
    records: dict[str, list[Any]] = field(default_factory=lambda: {kind: [] for kind in KINDS})
    lines: dict[tuple[str, str], int] = field(default_factory=dict)
    owed: list[str] = field(default_factory=list)
    """Its entities whose summaries are owed."""


def _records(dump: GroupDump) -> dict[str, Sequence[Any]]:
    return {
        "episode": dump.episodes, "entity": dump.entities, "fact": dump.facts, "mention": dump.mentions,
        "correction": dump.corrections, "community": dump.communities, "conversation": dump.conversations,
        "forgetting": dump.forgettings, "retention": [] if dump.retention is None else [dump.retention],
        "decisions": dump.decisions,
    }  # fmt: skip


def _counts(dump: GroupDump) -> dict[str, int]:
    return {kind: len(records) for kind, records in _records(dump).items()}


class _Reader:
    def __init__(self, source: str) -> None:
        self.source = source

    def error(self, message: str, line: int | None = None, field: str | None = None) -> InputError:
        return InputError(message, file=self.source, line=line, field=field)

    def parse(self, text: str, number: int) -> Record:
        """One line's object; its line end is not part of it (a file's lines keep theirs, a body's split
        ones have none: the same column either way)."""
        text = text.rstrip("\r\n")
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            ended = exc.pos >= len(text) or exc.msg.startswith("Unterminated string")
            cut = " (the line ends before its object does: cut short?)" if ended else ""
            raise self.error(f"not JSON: {exc.msg} (column {exc.colno}){cut}", number) from None
        if not isinstance(value, dict):
            raise self.error(f"a line is one JSON object, got {type(value).__name__}", number)
        return value

    def model(self, model: type[BaseModel], values: Record, number: int) -> Any:
        try:
            return model.model_validate(values)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first.get("loc", ())) or None
            message = str(first.get("msg")).removeprefix("Value error, ")
            raise self.error(message, number, where) from None


def read(lines: Iterable[str], source: str = "<dump>") -> Dump:
    """Read and check a whole dump (see the module docstring); the first problem raises InputError."""
    reader = _Reader(source)
    numbered: Iterator[tuple[int, str]] = ((n, text) for n, text in enumerate(lines, start=1) if text.strip())
    first = next(numbered, None)
    if first is None:
        raise reader.error("empty: a dump starts with its header line", 1)
    head = _read_header(reader, *first)
    upgrade = _upgrades(head.version)
    groups: dict[str, _Group] = {g: _Group() for g in head.groups}
    end: tuple[End, int] | None = None
    for number, text in numbered:
        if end is not None:
            raise reader.error(f"a record after the end line (line {end[1]})", number)
        values = reader.parse(text, number)
        if values.get("record") == "end":
            end = (reader.model(End, values, number), number)
            continue
        record = upgrade(values)
        kind = record.pop("record", None)
        model = KINDS.get(kind) if isinstance(kind, str) else None
        if model is None:
            known = ", ".join(["header", *KINDS, "end"])
            raise reader.error(f"unknown record {kind!r} (a record is one of: {known})", number, "record")
        owed = record.pop(OWED, False) if kind == "entity" else False
        if not isinstance(owed, bool):
            raise reader.error(f"{OWED} is true or false, got {owed!r}", number, OWED)
        item = reader.model(model, record, number)
        group = groups.get(item.group_id)
        if group is None:
            raise reader.error(
                f"group {item.group_id!r} is not among the header's groups {head.groups}", number, "group_id"
            )
        if isinstance(item, Correction):
            _check_slices(reader, item, number)
        key = (kind, _key(item))
        if key in group.lines:
            raise reader.error(f"{kind} {key[1]!r} is already on line {group.lines[key]}", number, "uuid")
        group.lines[key] = number
        group.records[kind].append(item)
        if owed:
            group.owed.append(item.uuid)
    if end is None:
        raise reader.error(
            'no end line: the dump was cut short (a complete dump ends with {"record": "end"})'
        )
    at = {(g, kind, key): n for g, group in groups.items() for (kind, key), n in group.lines.items()}
    dump = Dump(head, {g: _group_dump(g, group) for g, group in groups.items()}, source, at)
    for g, group in groups.items():
        _check_references(reader, g, group)
    _check_counts(reader, dump, *end)
    return dump


def _check_slices(reader: _Reader, correction: Correction, number: int) -> None:
    """A correction's records are of its own group (an undo writes them)."""
    for where, record in correction.slice_records():
        if record.group_id != correction.group_id:
            raise reader.error(
                f"the correction holds a record of group {record.group_id!r} in group "
                f"{correction.group_id!r}: nothing crosses groups",
                number, f"{where}.group_id",
            )  # fmt: skip


def _read_header(reader: _Reader, number: int, text: str) -> Header:
    values = reader.parse(text, number)
    if values.get("record") != "header" or values.get("format") != FORMAT:
        raise reader.error(f"not an epigraph dump: the first line is no {FORMAT!r} header", number, "format")
    version = values.get("version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise reader.error(f"the format version is a whole number, got {version!r}", number, "version")
    if version > VERSION:
        raise reader.error(
            f"written by a newer epigraph (dump format version {version}; this epigraph reads versions 1 to "
            f"{VERSION}): upgrade epigraph to load it",
            number,
            "version",
        )
    if version < 1 or version in RETIRED:
        why = RETIRED.get(version, "no epigraph ever wrote it")
        raise reader.error(
            f"dump format version {version} cannot be loaded: {why} (this epigraph reads versions 1 to "
            f"{VERSION})",
            number,
            "version",
        )
    parsed: Header = reader.model(Header, values, number)
    return parsed


def _upgrades(version: int) -> Callable[[Record], Record]:
    """The steps that bring a record of ``version`` to ``VERSION`` (``UPGRADES``), as one function."""
    steps = [UPGRADES[v] for v in range(version, VERSION)]

    def upgrade(record: Record) -> Record:
        for step in steps:
            record = step(record)
        return record

    return upgrade


def _key(item: Any) -> str:
    if isinstance(item, Mention):
        return f"{item.episode_uuid} -> {item.entity_uuid}"
    if isinstance(item, ConversationSummary):
        return item.key
    if isinstance(item, RetentionPolicy):
        return item.group_id
    if isinstance(item, DecisionRecord):
        return item.episode_uuid
    return str(item.uuid)


def _group_dump(group_id: str, group: _Group) -> GroupDump:
    r = group.records
    return GroupDump(
        group_id, episodes=r["episode"], entities=r["entity"], facts=r["fact"], mentions=r["mention"],
        corrections=r["correction"], communities=r["community"], conversations=r["conversation"],
        owed_summaries=group.owed, forgettings=r["forgetting"],
        retention=r["retention"][0] if r["retention"] else None, decisions=r["decisions"],
    )  # fmt: skip


def _check_references(reader: _Reader, group_id: str, group: _Group) -> None:
    """Facts join entities of the dump; mentions join an episode and an entity of it; communities have
    entities of it as members."""
    entities = {e.uuid for e in group.records["entity"]}
    episodes = {e.uuid for e in group.records["episode"]}
    for fact in group.records["fact"]:
        for end in ("source_uuid", "target_uuid"):
            if getattr(fact, end) not in entities:
                line = group.lines[("fact", fact.uuid)]
                raise reader.error(
                    f"fact {fact.uuid!r} points at {getattr(fact, end)!r}, no entity of group {group_id!r} "
                    "in the dump",
                    line,
                    end,
                )
    for community in group.records["community"]:
        for member in community.members:
            if member not in entities:
                line = group.lines[("community", community.uuid)]
                raise reader.error(f"community member {member!r} is no entity of the dump", line, "members")
    for record in group.records["decisions"]:
        if record.episode_uuid not in episodes:
            line = group.lines[("decisions", record.episode_uuid)]
            raise reader.error(f"no episode {record.episode_uuid!r} in the dump", line, "episode_uuid")
    for mention in group.records["mention"]:
        line = group.lines[("mention", _key(mention))]
        if mention.episode_uuid not in episodes:
            raise reader.error(f"no episode {mention.episode_uuid!r} in the dump", line, "episode_uuid")
        if mention.entity_uuid not in entities:
            raise reader.error(f"no entity {mention.entity_uuid!r} in the dump", line, "entity_uuid")


def _check_counts(reader: _Reader, dump: Dump, end: End, number: int) -> None:
    held = dump.counts()
    for group_id in sorted(held.keys() | end.counts.keys()):
        said, found = end.counts.get(group_id, {}), held.get(group_id, {})
        for kind in KINDS:
            if said.get(kind, 0) != found.get(kind, 0):
                raise reader.error(
                    f"the end line counts {said.get(kind, 0)} {kind} record(s) of group {group_id!r}; the "
                    f"dump holds {found.get(kind, 0)} (cut or edited)",
                    number,
                    f"counts.{group_id}.{kind}",
                )


def end_line(counts: Mapping[str, Mapping[str, int]]) -> str:
    return json.dumps(End(counts={g: dict(c) for g, c in counts.items()}).model_dump(mode="json"))
