"""Pure parsing of model replies: no I/O, no model calls, exhaustively tested.

Three shapes, matching the prompt response types (``lines``, the compact line formats, at the end):

- ``json``: :func:`parse_json_reply` finds the one JSON value in a reply that may be wrapped in a
  ``<think>`` block, markdown fences or prose, and validates it. Any failure is a :class:`ReplyError`
  whose message is short enough to send back to the model in a re-ask.
- ``jsonl``: :class:`JsonlParser` is fed the reply incrementally (whole, or chunk by chunk while it
  streams) and returns each validated object the moment its line is complete. Blank lines, fence lines
  and ``<think>`` blocks are skipped silently; a line that is not JSON or fails the per-line schema is
  dropped, logged as a warning and counted in :attr:`JsonlParser.dropped`, and parsing continues. The
  final line (no trailing newline) is parsed by :meth:`JsonlParser.finish`; when the reply was cut
  (token limit or stream error) a final line that does not parse is dropped as incomplete.

A line repeating an earlier one (the same text, or the same object however spaced or ordered) is
dropped as ``repeated line`` and counted in :attr:`JsonlParser.repeats`: small models fall into loops
that restate the same lines until the token cap, and the runtime stops reading such a stream.

Leniency kept deliberately small, each for a failure seen in the wild on small/local models: a trailing
comma after a line's object, several objects on one line, and a line holding a JSON array of objects
(each element is validated as its own item).
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from pydantic import TypeAdapter, ValidationError

from .grammar import NONE

T = TypeVar("T")

log = logging.getLogger("epigraph.prompts")

_DECODER = json.JSONDecoder()
_THINK_OPEN = "<think>"
_THINK_CLOSE = "</think>"
_FENCE = re.compile(r"^\s*(```|~~~)")
_MAX_LINE_TEXT = 2000
_MAX_JSON_STARTS = 200
_MAX_ERRORS_SHOWN = 5


class ReplyError(ValueError):
    """A reply (or one line of it) could not be turned into a valid value; the message says why."""


@dataclass(frozen=True, slots=True)
class DroppedLine:
    """A JSONL line that produced no item. ``line_no`` is 1-based within the reply."""

    line_no: int
    text: str
    reason: str


# --------------------------------------------------------------------------------------------- json


def strip_think(text: str) -> str:
    """Remove ``<think>...</think>`` blocks. A close tag without an open tag (some servers drop the
    opening tag) removes everything before it; an unclosed open tag removes everything after it."""
    out = text
    while _THINK_OPEN in out:
        start = out.index(_THINK_OPEN)
        end = out.find(_THINK_CLOSE, start)
        out = out[:start] if end < 0 else out[:start] + out[end + len(_THINK_CLOSE) :]
    if _THINK_CLOSE in out:
        out = out[out.rindex(_THINK_CLOSE) + len(_THINK_CLOSE) :]
    return out


def strip_fences(text: str) -> str:
    """Drop markdown fence lines (```json, ```, ~~~), keeping what they enclose."""
    return "\n".join(line for line in text.splitlines() if not _FENCE.match(line))


def extract_json_value(text: str) -> Any:
    """The first JSON value in ``text`` after removing think blocks and fences.

    The whole cleaned reply is tried first (so scalar outputs work); otherwise the first ``{`` or ``[``
    that starts a complete, parseable value wins, which skips leading and trailing prose.
    Raises :class:`ReplyError` when there is none.
    """
    cleaned = strip_fences(strip_think(text)).strip()
    if not cleaned:
        raise ReplyError("the reply is empty; expected one JSON value")
    try:
        return json.loads(cleaned)
    except json.JSONDecodeError as exc:
        first_error = exc
    starts = [i for i, ch in enumerate(cleaned) if ch in "{["][:_MAX_JSON_STARTS]
    for start in starts:
        try:
            value, _ = _DECODER.raw_decode(cleaned, start)
        except json.JSONDecodeError:
            continue
        return value
    raise ReplyError(f"the reply is not valid JSON ({first_error.msg} at line {first_error.lineno})")


def describe_validation_error(exc: ValidationError) -> str:
    """A compact, model-readable summary of a pydantic validation error."""
    parts = []
    for err in exc.errors()[:_MAX_ERRORS_SHOWN]:
        loc = ".".join(str(p) for p in err["loc"]) or "<root>"
        parts.append(f"{loc}: {err['msg']}")
    more = exc.error_count() - len(parts)
    if more > 0:
        parts.append(f"... and {more} more")
    return "; ".join(parts)


def validate(adapter: TypeAdapter[T], value: Any) -> T:
    """Validate plain JSON data; raises :class:`ReplyError` with a compact reason."""
    try:
        return adapter.validate_python(value)
    except ValidationError as exc:
        raise ReplyError(f"schema violation: {describe_validation_error(exc)}") from None


def parse_json_reply(text: str, adapter: TypeAdapter[T]) -> T:
    """Extract and validate the one JSON value of a ``json`` reply."""
    return validate(adapter, extract_json_value(text))


# -------------------------------------------------------------------------------------------- jsonl


def _decode_line(line: str) -> list[Any]:
    """The JSON values on one line: usually one object; tolerates trailing commas, several objects,
    and an array of objects (flattened). Raises :class:`ReplyError` on anything else."""
    values: list[Any] = []
    pos, end = 0, len(line)
    while pos < end:
        try:
            value, pos = _DECODER.raw_decode(line, pos)
        except json.JSONDecodeError as exc:
            raise ReplyError(f"not valid JSON: {exc.msg} at column {exc.colno}") from None
        values.extend(value if isinstance(value, list) else [value])
        while pos < end and line[pos] in " \t,;":
            pos += 1
    return values


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _clip(text: str) -> str:
    return text if len(text) <= _MAX_LINE_TEXT else text[:_MAX_LINE_TEXT] + "…"


class JsonlParser(Generic[T]):
    """Incremental JSONL parser: ``feed`` text as it arrives, then ``finish`` once.

    Each call returns the items completed by that call, in order; :attr:`dropped` accumulates
    every line that yielded nothing (with its line number and the reason).
    """

    def __init__(self, adapter: TypeAdapter[T]) -> None:
        self._adapter = adapter
        self._buffer = ""
        self._line_no = 0
        self._in_think = False
        self._finished = False
        self._seen: set[str] = set()
        self.items: list[T] = []
        """Every item returned so far, in order."""
        self.dropped: list[DroppedLine] = []
        self.repeats = 0
        """Lines dropped because they repeated an earlier line or object."""

    @property
    def pending(self) -> str:
        """The unterminated last line received so far."""
        return self._buffer

    def feed(self, text: str) -> list[T]:
        if self._finished:
            raise RuntimeError("JsonlParser.feed() after finish()")
        self._buffer += text
        items: list[T] = []
        while "\n" in self._buffer:
            line, self._buffer = self._buffer.split("\n", 1)
            items.extend(self._line(line, cut_reason=None))
        return items

    def finish(self, *, cut_reason: str | None = None) -> list[T]:
        """Parse the final unterminated line. ``cut_reason`` (e.g. ``"truncated"``) says the reply was
        cut off: a final line that does not parse is then dropped as incomplete with that reason."""
        if self._finished:
            return []
        self._finished = True
        line, self._buffer = self._buffer, ""
        if not line.strip():
            return []
        return self._line(line, cut_reason=cut_reason)

    def _line(self, raw: str, *, cut_reason: str | None) -> list[T]:
        self._line_no += 1
        content = self._outside_think(raw.strip()).strip()
        if not content or _FENCE.match(content):
            return []
        try:
            values = _decode_line(content)
        except ReplyError as exc:
            if not self._first_time(" ".join(content.split())):
                reason = "repeated line"
            else:
                reason = f"{cut_reason}: incomplete final line" if cut_reason else str(exc)
            self._drop(raw, reason)
            return []
        items: list[T] = []
        for value in values:
            if not self._first_time(_canonical(value)):
                self._drop(json.dumps(value, ensure_ascii=False), "repeated line")
                continue
            try:
                items.append(validate(self._adapter, value))
            except ReplyError as exc:
                self._drop(json.dumps(value, ensure_ascii=False), str(exc))
        self.items.extend(items)
        return items

    def _first_time(self, key: str) -> bool:
        """False (and one more repeat counted) when ``key`` was seen before on this reply."""
        if key in self._seen:
            self.repeats += 1
            return False
        self._seen.add(key)
        return True

    def _outside_think(self, line: str) -> str:
        """The part of ``line`` that is not inside a ``<think>`` block (the block may span lines)."""
        out = ""
        while line:
            if self._in_think:
                end = line.find(_THINK_CLOSE)
                if end < 0:
                    return out
                line, self._in_think = line[end + len(_THINK_CLOSE) :], False
            else:
                start = line.find(_THINK_OPEN)
                stray_close = line.find(_THINK_CLOSE)
                if stray_close >= 0 and (start < 0 or stray_close < start):
                    out, line = "", line[stray_close + len(_THINK_CLOSE) :]  # opening tag was elided
                    continue
                if start < 0:
                    return out + line
                out, line, self._in_think = out + line[:start], line[start + len(_THINK_OPEN) :], True
        return out

    def _drop(self, text: str, reason: str) -> None:
        dropped = DroppedLine(self._line_no, _clip(text), reason)
        self.dropped.append(dropped)
        log.warning("dropped reply line %d (%s): %s", dropped.line_no, reason, dropped.text[:200])


def parse_jsonl_reply(
    text: str, adapter: TypeAdapter[T], *, cut_reason: str | None = None
) -> tuple[list[T], list[DroppedLine]]:
    """Parse a whole ``jsonl`` reply; never raises on bad content (an empty reply gives ``[]``)."""
    parser = JsonlParser(adapter)
    parser.feed(text)
    parser.finish(cut_reason=cut_reason)
    return parser.items, parser.dropped


# -------------------------------------------------------------------------------------------- lines


_ANY: TypeAdapter[object] = TypeAdapter(object)


class LinesParser(JsonlParser[T]):
    """Incremental parser of a ``lines`` reply: like :class:`JsonlParser`, but each line is read by the
    prompt's :class:`~.base.LineFormat` instead of as JSON. The word ``none`` (alone on a line) is the
    empty reply; a line repeating an earlier one (however spaced or cased) is dropped and counted."""

    def __init__(self, decode: Callable[[str], list[T]]) -> None:
        super().__init__(_ANY)  # type: ignore[arg-type]  # lines are read by ``decode``, not validated
        self._decode = decode
        self.invalid = 0
        """Lines dropped because the format could not read them."""

    def _line(self, raw: str, *, cut_reason: str | None) -> list[T]:
        self._line_no += 1
        content = self._outside_think(raw.strip()).strip()
        if not content or _FENCE.match(content) or content.rstrip(".").casefold() == NONE:
            return []
        if cut_reason:  # the last line of a cut reply may read as a shorter line ("Ac" for "Acme"): dropped
            self._drop(raw, f"{cut_reason}: incomplete final line")
            return []
        if not self._first_time(" ".join(content.casefold().split())):
            self._drop(raw, "repeated line")
            return []
        try:
            items = self._decode(content)
        except ValueError as exc:
            self.invalid += 1
            self._drop(raw, f"{cut_reason}: incomplete final line" if cut_reason else str(exc))
            return []
        self.items.extend(items)
        return items


def parse_lines_reply(
    text: str, decode: Callable[[str], list[T]], *, cut_reason: str | None = None
) -> tuple[list[T], list[DroppedLine]]:
    """Parse a whole ``lines`` reply; never raises on bad content."""
    parser = LinesParser(decode)
    parser.feed(text)
    parser.finish(cut_reason=cut_reason)
    return parser.items, parser.dropped
