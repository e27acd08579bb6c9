"""Known dataset shapes, recognised without an LLM. Pure; no I/O.

Each detector looks at the first sample record (and the reader's format) and returns a mapping, or None;
:func:`detect` tries them in order. A detected mapping is still validated against all samples by the
caller, exactly like a proposed or hand-written one.

==================  ========================================================================
name                shape
==================  ========================================================================
text-files          .txt / .md files or a folder of them: one text episode per file
locomo              LoCoMo: ``session_N`` turn lists ``{speaker, dia_id, text}`` with ``session_N_date_time``
                    (also the original ``locomo10.json`` layout, sessions under ``conversation``)
openai-messages     ``{"messages": [{"role", "content"}, ...]}`` (content a string or text parts)
sharegpt            ``{"conversations": [{"from", "value"}, ...]}``
flat-messages       one message per row: a speaker column and a text column (timestamp, id optional)
text-records        one document per row: a text column (title, id, timestamp optional)
strings             a JSON array / JSON Lines of bare strings
==================  ========================================================================
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .compiled import ROLE_WORDS
from .dates import DateParser
from .mapping import Mapping, MessagesMapping, MessageSpec, Meta, PathRef, TextMapping, Value
from .paths import escape_key

TEXT_KEYS = ("text", "content", "message", "body", "utterance", "msg", "document", "article")
SPEAKER_KEYS = ("speaker", "author", "sender", "from", "user", "username", "user_name")
TIME_KEYS = ("timestamp", "time", "date", "datetime", "date_time", "created_at", "createdat", "ts", "sent_at")
ID_KEYS = ("id", "message_id", "msg_id", "uuid", "dia_id", "doc_id", "document_id")
TITLE_KEYS = ("title", "name", "subject", "headline")
CHAT_KEYS = ("conversations", "conversation", "messages", "dialog", "turns")
_SESSION = re.compile(r"session_[0-9]+")


@dataclass(frozen=True, slots=True)
class Detection:
    name: str
    mapping: Mapping


Detector = Callable[[Sequence[Any], str, str], Mapping | None]


def detect(samples: Sequence[Any], fmt: str, source: str) -> Detection | None:
    """The first known shape the samples have. ``fmt`` is the reader's format, ``source`` the value used
    for ``meta.source`` (the file's name)."""
    if not samples:
        return None
    for name, detector in DETECTORS:
        mapping = detector(samples, fmt, source)
        if mapping is not None:
            return Detection(name, mapping.model_copy(update={"description": f"detected: {name}"}))
    return None


def _keys(record: Any) -> dict[str, str]:
    """Lower-cased key -> actual key of an object record."""
    return {k.casefold(): k for k in record if isinstance(k, str)} if isinstance(record, dict) else {}


def _find(keys: dict[str, str], candidates: Sequence[str]) -> str | None:
    """The actual key of the first candidate present."""
    for c in candidates:
        if c in keys:
            return keys[c]
    return None


def _pick(keys: dict[str, str], candidates: Sequence[str]) -> str | None:
    """Like :func:`_find`, as a path."""
    found = _find(keys, candidates)
    return None if found is None else escape_key(found)


def _time_key(samples: Sequence[Any], keys: dict[str, str], prefix: str = "") -> str | None:
    """A timestamp column, if its sample values parse as dates (single bad values: invalid records)."""
    parser = DateParser()
    for c in TIME_KEYS:
        if c in keys:
            vals = [s.get(keys[c]) for s in samples if isinstance(s, dict)]
            vals = [v for v in vals if v not in (None, "")]
            if any(parser.parse(v) is not None for v in vals):
                return prefix + escape_key(keys[c])
    return None


def _meta(source: str, samples: Sequence[Any], keys: dict[str, str]) -> Meta:
    return Meta(
        source=Value(value=source), original_id=_pick(keys, ID_KEYS), timestamp=_time_key(samples, keys)
    )


# -------------------------------------------------------------------------------------------- detectors


def text_files(samples: Sequence[Any], fmt: str, source: str) -> Mapping | None:
    if fmt not in ("text", "textdir"):
        return None
    meta = Meta(source=Value(value=source), original_id="path", timestamp="modified")
    return TextMapping(text="text", name="name", meta=meta)


def _has_sessions(obj: Any) -> bool:
    if not isinstance(obj, dict):
        return False
    for key, turns in obj.items():
        if isinstance(key, str) and _SESSION.fullmatch(key) and f"{key}_date_time" in obj:
            if isinstance(turns, list) and turns and isinstance(turns[0], dict):
                return "speaker" in turns[0] and "text" in turns[0]
    return False


def locomo(samples: Sequence[Any], fmt: str, source: str) -> Mapping | None:
    record = samples[0]
    if not isinstance(record, dict):
        return None
    prefix = ""
    if not _has_sessions(record):
        if not _has_sessions(record.get("conversation")):
            return None
        prefix = "conversation."
    turn_id: str | list[str] = ["$.sample_id", "dia_id"] if "sample_id" in record else "dia_id"
    message = MessageSpec(
        role="user",
        content="text",
        speaker="speaker",
        id=turn_id,
        timestamp=f"$.{prefix}session_{{n}}_date_time",
    )
    return MessagesMapping(
        records=f"{prefix}session_{{n}}[*]",
        messages=[message],
        meta=Meta(source=Value(value=f"locomo:{source.rsplit('.', 1)[0]}")),
    )


def _chat_list(record: Any, needed: tuple[str, str]) -> str | None:
    keys = _keys(record)
    for c in CHAT_KEYS:
        turns = record.get(keys[c]) if c in keys else None
        if isinstance(turns, list) and turns and all(isinstance(t, dict) for t in turns):
            if all(k in turns[0] for k in needed):
                return keys[c]
    return None


def openai_messages(samples: Sequence[Any], fmt: str, source: str) -> Mapping | None:
    key = _chat_list(samples[0], ("role", "content"))
    if key is None:
        return None
    turns = [t for s in samples if isinstance(s, dict) for t in s.get(key) or [] if isinstance(t, dict)]
    contents = [t.get("content") for t in turns]
    parts = any(isinstance(c, list) for c in contents)
    strings = any(isinstance(c, str) for c in contents)
    content: str | list[str] = (
        ["content", "content[*].text"] if parts and strings else "content[*].text" if parts else "content"
    )
    message = MessageSpec(
        each=f"{escape_key(key)}[*]",
        role=PathRef(path="role"),
        content=content,
        speaker="name" if any("name" in t for t in turns) else None,
        timestamp=_time_key(turns, _keys(turns[0])),
    )
    keys = _keys(samples[0])
    return MessagesMapping(messages=[message], meta=_meta(source, samples, keys))


def sharegpt(samples: Sequence[Any], fmt: str, source: str) -> Mapping | None:
    key = _chat_list(samples[0], ("from", "value"))
    if key is None:
        return None
    message = MessageSpec(each=f"{escape_key(key)}[*]", role=PathRef(path="from"), content="value")
    return MessagesMapping(messages=[message], meta=_meta(source, samples, _keys(samples[0])))


def flat_messages(samples: Sequence[Any], fmt: str, source: str) -> Mapping | None:
    keys = _keys(samples[0])
    text, speaker = _pick(keys, TEXT_KEYS), _pick(keys, SPEAKER_KEYS)
    role_key = keys.get("role")
    if text is None or (speaker is None and role_key is None):
        return None
    role: str | PathRef = "user"
    if role_key is not None and _role_values(samples, role_key):
        role = PathRef(path=escape_key(role_key))
    message = MessageSpec(role=role, content=text, speaker=speaker, timestamp=None)
    return MessagesMapping(messages=[message], meta=_meta(source, samples, keys))


def _role_values(samples: Sequence[Any], key: str) -> bool:
    vals = {s.get(key) for s in samples if isinstance(s, dict)}
    return all(isinstance(v, str) and v.strip().casefold() in ROLE_WORDS for v in vals)


def text_records(samples: Sequence[Any], fmt: str, source: str) -> Mapping | None:
    keys = _keys(samples[0])
    text = _find(keys, TEXT_KEYS)
    if text is None or not isinstance(samples[0][text], str):
        return None
    meta = _meta(source, samples, keys)
    src = keys.get("source")
    if src is not None and isinstance(samples[0][src], str) and samples[0][src].strip():
        meta = meta.model_copy(update={"source": PathRef(path=escape_key(src))})
    title = _pick(keys, TITLE_KEYS)
    return TextMapping(text=escape_key(text), name=PathRef(path=title) if title else None, meta=meta)


def strings(samples: Sequence[Any], fmt: str, source: str) -> Mapping | None:
    if not all(isinstance(s, str) for s in samples):
        return None
    return TextMapping(text="@", meta=Meta(source=Value(value=source)))


DETECTORS: tuple[tuple[str, Detector], ...] = (
    ("text-files", text_files),
    ("locomo", locomo),
    ("openai-messages", openai_messages),
    ("sharegpt", sharegpt),
    ("flat-messages", flat_messages),
    ("text-records", text_records),
    ("strings", strings),
)
