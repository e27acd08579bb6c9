"""Field mappings: how the records of a dataset become episodes. Pydantic models, load and save.

The format follows the seed spec "LLM mapping output JSON schema", with the additions chat memory needs
(marked *ext*). A field that takes a **path** holds one path or an array of paths whose values are joined
in order with ``"\\n"`` (ids are joined with ``":"``); path syntax is in :mod:`.paths`. A field that
takes a **path or value** holds a path, ``{"path": ...}`` or ``{"value": ...}``; a bare string that does
not resolve on any sample record is read as a value (``"source": "wikipedia"``) and saved as
``{"value": ...}`` so the choice is explicit from then on. Missing optional fields are ``null``, never
``""``.

Text mode (documents -> ``text`` episodes)::

    {"text": "body" | ["title", "paragraphs[*]"] | null,
     "name": path-or-value | null,                      (ext) episode name, e.g. the title
     "records": path | null,                            (ext) fan-out, see below
     "meta": {...} | null}

Messages mode (chats -> one ``message`` episode per message)::

    {"messages": [{"role": "user|assistant|system|tool" | path | null,
                   "content": path | null,
                   "speaker": path-or-value | null,     (ext) who spoke; default: the role
                   "timestamp": path | null,            (ext) when it was said
                   "id": path | null,                   (ext) the message's own id
                   "each": path | null,                 (ext) one message per element, see below
                   "role_map": {"human": "user", ...} | null}],  (ext) dataset role values -> roles
     "system": path-or-value | null,
     "include_system": false,                            (ext) system messages become episodes
     "include_tool": false,                              (ext) tool messages become episodes
     "records": path | null,
     "meta": {...} | null}

meta: ``source`` (path or value; required when meta is present; becomes the episode's
``source_description`` and namespaces ids), ``language`` (path or ISO 639-1 value), ``timestamp``,
``timestamp_format`` (ext: a ``strptime`` format when the dates are unusual), ``token_count``,
``quality_score``, ``original_id`` (paths or null). Language, token count and quality score are
validated like every path, but episodes have no field for them yet, so they are not carried over.

**Fan-out** (ext). ``records`` turns one record of the file into many: each value it reaches becomes a
record of its own, paths then start at that value, ``$.`` reaches back to the file record and ``{var}``
captures carry over. LoCoMo (one JSON object per conversation, ``session_N`` turn lists and
``session_N_date_time`` dates) is::

    {"records": "session_{n}[*]",
     "messages": [{"role": "user", "content": "text", "speaker": "speaker", "id": "dia_id",
                   "timestamp": "$.session_{n}_date_time"}],
     "meta": {"source": {"value": "locomo:26"}}}

``each`` does the same inside one record for a message spec: ``{"each": "messages[*]", "role": "role",
"content": "content"}`` is an OpenAI chat. A message ``role`` that is not one of the four role names is a
path (write ``{"path": "user"}`` for a field literally named like a role); when it is left out it is
inferred from the content path (question/input/prompt -> user, answer/response/output -> assistant,
system/instruction -> system). Both modes also take ``"description"`` (text for people: where the
mapping came from); it has no effect.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, model_validator

from epigraph.errors import InputError

Role = Literal["user", "assistant", "system", "tool"]
ROLES: tuple[str, ...] = ("user", "assistant", "system", "tool")

PathSpec = Annotated[str | list[str], Field(description="a field path, or an array of paths joined in order")]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    @model_validator(mode="before")
    @classmethod
    def _no_empty_strings(cls, data: Any) -> Any:
        if isinstance(data, dict):
            empty = sorted(k for k, v in data.items() if v == "" or v == [])
            if empty:
                raise ValueError(f"{', '.join(empty)}: use null for a missing field, never an empty value")
        return data


class Value(_Model):
    """A literal value instead of a path."""

    value: str | int | float | bool


class PathRef(_Model):
    """An explicit path (for a path-or-value field, or a role read from a field named like a role)."""

    path: PathSpec


PathOrValue = PathSpec | Value | PathRef


class Meta(_Model):
    source: PathOrValue
    language: PathOrValue | None = None
    timestamp: PathSpec | None = None
    timestamp_format: str | None = None
    token_count: PathSpec | None = None
    quality_score: PathSpec | None = None
    original_id: PathSpec | None = None


class MessageSpec(_Model):
    role: str | PathRef | None = None
    content: PathSpec | None = None
    speaker: PathOrValue | None = None
    timestamp: PathSpec | None = None
    id: PathSpec | None = None
    each: str | None = None
    role_map: dict[str, Role] | None = None


class TextMapping(_Model):
    """Documents -> text episodes."""

    text: PathSpec | None
    name: PathOrValue | None = None
    records: str | None = None
    meta: Meta | None = None
    description: str | None = None
    """For people: where this mapping came from (a detector's name, "proposed by the LLM", ...)."""

    @property
    def mode(self) -> Literal["text"]:
        return "text"


class MessagesMapping(_Model):
    """Chats -> message episodes, one per message."""

    messages: list[MessageSpec] | None
    system: PathOrValue | None = None
    include_system: bool = False
    include_tool: bool = False
    records: str | None = None
    meta: Meta | None = None
    description: str | None = None

    @property
    def mode(self) -> Literal["messages"]:
        return "messages"


Mapping = TextMapping | MessagesMapping
_ADAPTER: TypeAdapter[Mapping] = TypeAdapter(Mapping)


def parse_mapping(data: Any, *, file: str | None = None) -> Mapping:
    """A mapping from its JSON data; the mode is given by the ``text`` or ``messages`` key."""
    if not isinstance(data, dict):
        raise InputError(f"a mapping is a JSON object, got {type(data).__name__}", file=file)
    has_text, has_messages = "text" in data, "messages" in data
    if has_text == has_messages:
        raise InputError("a mapping has exactly one of 'text' (documents) or 'messages' (chats)", file=file)
    model: type[TextMapping] | type[MessagesMapping] = TextMapping if has_text else MessagesMapping
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise InputError(f"invalid mapping: {format_validation_error(exc)}", file=file) from None


def format_validation_error(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors()[:8]:
        where = ".".join(str(p) for p in err["loc"] if not _is_union_tag(p))
        parts.append(f"{where or 'mapping'}: {err['msg']}")
    return "; ".join(parts)


def _is_union_tag(part: Any) -> bool:
    return isinstance(part, str) and ("[" in part or part.startswith("function-"))


def mapping_json(mapping: Mapping) -> str:
    """The mapping as pretty JSON (nulls kept: a reader sees every field the format has)."""
    return json.dumps(mapping.model_dump(mode="json"), indent=2, ensure_ascii=False)


def load_mapping(path: str | Path) -> Mapping:
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot read mapping: {exc.strerror}", file=str(p)) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"mapping is not valid JSON: {exc.msg}", file=str(p), line=exc.lineno) from None
    return parse_mapping(data, file=str(p))


def save_mapping(mapping: Mapping, path: str | Path) -> Path:
    p = Path(path)
    p.write_text(mapping_json(mapping) + "\n", encoding="utf-8")
    return p


def is_empty(mapping: Mapping) -> bool:
    """True for the "irrelevant dataset" answer: every field null."""
    if isinstance(mapping, TextMapping):
        return mapping.text is None and mapping.name is None and mapping.meta is None
    return not mapping.messages and mapping.system is None and mapping.meta is None
