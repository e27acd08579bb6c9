"""Field paths: parse, resolve (with wildcards and key patterns) and join. Pure; no I/O.

Grammar (a superset of the seed spec "LLM mapping output JSON schema")::

    field                 key of an object
    parent.child          nested keys
    items[0]  items[-1]   one array element (negative counts from the end)
    items[*]              every array element, in order
    *                     every value of an object, in key order
    session_*             every value whose key matches the glob (``*`` = any run of characters)
    session_{n}           like a glob, and the matched part is *captured* as ``n`` (a run of letters or
                          digits); a later path that mentions ``{n}`` uses the captured text, e.g.
                          ``$.session_{n}_date_time`` finds the date of the session being read
    $  $.a.b              the root of the file record (useful after a ``records`` fan-out)
    @  @.a                the current item (the default: a path without ``$`` starts there)

Escapes: a backslash makes the next character literal, so keys holding ``. [ ] { } * \\`` (or a leading
``$`` / ``@``) are written ``a\\.b`` for the key ``"a.b"``; :func:`escape_key` does it for you. Any
other character, unicode included, is part of the key as-is; spaces are kept (never stripped). The
empty key ``""`` has no path of its own (reach its value with ``*``).

Resolution never raises on data: a key on a non-object, an index on a non-array or out of range, a
missing key all give *no value*. The result is always a list (empty = "resolves to nothing").

Joining (:func:`join_text`): strings are kept, numbers and booleans become their JSON text, ``null`` and
empty strings are dropped, arrays are flattened in order, objects are dropped (a text field needs a
path to a leaf: :func:`describe` helps say so). Parts are joined with ``"\\n"``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

from epigraph.errors import InputError

Bindings = Mapping[str, str]
_EMPTY: Bindings = MappingProxyType({})
_SPECIAL = set(".[]{}*\\")
_CAPTURE = r"[^\W_]+"
_VAR_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class PathSyntaxError(InputError):
    """A field path that does not parse; says where."""

    def __init__(self, path: str, position: int, reason: str) -> None:
        self.path, self.position = path, position
        super().__init__(f"invalid path {path!r} at character {position}: {reason}", field=path)


@dataclass(frozen=True, slots=True)
class Key:
    name: str


@dataclass(frozen=True, slots=True)
class Index:
    index: int


@dataclass(frozen=True, slots=True)
class Each:
    """``[*]``: every element of an array."""


@dataclass(frozen=True, slots=True)
class Pattern:
    """A key with ``*`` globs and/or ``{var}`` captures. ``parts`` alternates literal text and tokens."""

    parts: tuple[str | tuple[Literal["*", "var"], str], ...]

    @property
    def variables(self) -> tuple[str, ...]:
        return tuple(p[1] for p in self.parts if isinstance(p, tuple) and p[0] == "var")

    def regex(self, bindings: Bindings) -> re.Pattern[str]:
        out: list[str] = []
        for part in self.parts:
            if isinstance(part, str):
                out.append(re.escape(part))
            elif part[0] == "*":
                out.append(".*")
            elif part[1] in bindings:
                out.append(re.escape(bindings[part[1]]))
            else:
                out.append(f"(?P<{part[1]}>{_CAPTURE})")
        return re.compile("".join(out), re.DOTALL)


Segment = Key | Index | Each | Pattern
_ALL_KEYS: tuple[tuple[Literal["*"], str]] = (("*", "*"),)


@dataclass(frozen=True, slots=True)
class FieldPath:
    text: str
    segments: tuple[Segment, ...]
    from_root: bool = False
    simple: bool = field(default=False, compare=False)
    """Only keys and indexes: resolves to at most one value, on a fast path."""

    @property
    def variables(self) -> tuple[str, ...]:
        return tuple(v for s in self.segments if isinstance(s, Pattern) for v in s.variables)

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True, slots=True)
class Match:
    value: Any
    bindings: Bindings


@dataclass(frozen=True, slots=True)
class Scope:
    """Where a path is resolved: the file record (``$``), the current item (``@``) and captured variables."""

    root: Any
    current: Any
    bindings: Bindings

    @classmethod
    def of(cls, record: Any) -> Scope:
        return cls(record, record, _EMPTY)


# --------------------------------------------------------------------------------------------- parse


def escape_key(key: str) -> str:
    """The path text of one literal key: special characters (and a leading ``$``/``@``) escaped."""
    out = "".join("\\" + ch if ch in _SPECIAL else ch for ch in key)
    return "\\" + out if out[:1] in ("$", "@") else out


def parse(text: str) -> FieldPath:
    """Parse a path; raises :class:`PathSyntaxError` with the position of the first problem."""
    if not isinstance(text, str) or text == "":
        raise PathSyntaxError(str(text), 0, "a path is a non-empty string")
    pos, from_root = 0, False
    if text[0] in "$@":
        from_root, pos = text[0] == "$", 1
        if pos < len(text) and text[pos] not in ".[":
            raise PathSyntaxError(text, pos, f"expected '.', '[' or the end after {text[0]!r}")
        if pos < len(text) and text[pos] == ".":
            pos += 1
            if pos == len(text):
                raise PathSyntaxError(text, pos, "expected a key after '.'")
    segments: list[Segment] = []
    expect_key = pos == 0 or text[pos - 1] == "."
    while pos < len(text):
        ch = text[pos]
        if ch == "[":
            seg, pos = _parse_bracket(text, pos)
            segments.append(seg)
            expect_key = False
        elif ch == "." and not expect_key:
            pos += 1
            expect_key = True
            if pos == len(text):
                raise PathSyntaxError(text, pos, "expected a key after '.'")
        elif expect_key or not segments:
            seg, pos = _parse_key(text, pos)
            segments.append(seg)
            expect_key = False
        else:
            raise PathSyntaxError(text, pos, f"unexpected {ch!r} (missing '.'?)")
    simple = all(isinstance(s, Key | Index) for s in segments)
    return FieldPath(text, tuple(segments), from_root, simple)


def _parse_bracket(text: str, pos: int) -> tuple[Segment, int]:
    end = text.find("]", pos)
    if end < 0:
        raise PathSyntaxError(text, pos, "unclosed '['")
    inner = text[pos + 1 : end]
    if inner == "*":
        return Each(), end + 1
    if re.fullmatch(r"-?[0-9]{1,18}", inner):
        return Index(int(inner)), end + 1
    raise PathSyntaxError(text, pos + 1, f"expected an index or '*' inside [], got {inner!r}")


def _parse_key(text: str, pos: int) -> tuple[Segment, int]:
    start = pos
    parts: list[str | tuple[Literal["*", "var"], str]] = []
    buf: list[str] = []
    while pos < len(text) and text[pos] not in ".[":
        ch = text[pos]
        if ch == "\\":
            if pos + 1 >= len(text):
                raise PathSyntaxError(text, pos, "dangling escape '\\' at the end")
            buf.append(text[pos + 1])
            pos += 2
        elif ch == "]":
            raise PathSyntaxError(text, pos, "unexpected ']' (escape it as '\\]' inside a key)")
        elif ch == "}":
            raise PathSyntaxError(text, pos, "unexpected '}' (escape it as '\\}' inside a key)")
        elif ch == "*":
            parts.extend(["".join(buf), ("*", "*")])
            buf, pos = [], pos + 1
        elif ch == "{":
            close = text.find("}", pos)
            name = text[pos + 1 : close] if close > 0 else ""
            if close < 0 or not _VAR_RE.fullmatch(name):
                raise PathSyntaxError(text, pos, "expected '{name}' with an identifier name")
            parts.extend(["".join(buf), ("var", name)])
            buf, pos = [], close + 1
        else:
            buf.append(ch)
            pos += 1
    if pos == start:
        raise PathSyntaxError(text, pos, "expected a key")
    if not parts:
        return Key("".join(buf)), pos
    parts.append("".join(buf))
    names = [p[1] for p in parts if isinstance(p, tuple) and p[0] == "var"]
    if len(names) != len(set(names)):
        raise PathSyntaxError(text, start, "a variable appears twice in one key")
    return Pattern(tuple(p for p in parts if p != "")), pos


def format_path(segments: Sequence[Segment], from_root: bool = False) -> str:
    """The canonical text of a segment list (inverse of :func:`parse` for keys, indexes and ``[*]``)."""
    out: list[str] = ["$"] if from_root else []
    for seg in segments:
        if isinstance(seg, Index):
            out.append(f"[{seg.index}]")
        elif isinstance(seg, Each):
            out.append("[*]")
        else:
            text = escape_key(seg.name) if isinstance(seg, Key) else _format_pattern(seg)
            out.append(("." if out else "") + text)
    return "".join(out) or "@"


def _format_pattern(seg: Pattern) -> str:
    out: list[str] = []
    for i, part in enumerate(seg.parts):
        if isinstance(part, str):
            out.append(
                escape_key(part) if i == 0 else "".join("\\" + c if c in _SPECIAL else c for c in part)
            )
        else:
            out.append("*" if part[0] == "*" else "{" + part[1] + "}")
    return "".join(out)


# ------------------------------------------------------------------------------------------- resolve


def resolve(path: FieldPath, scope: Scope) -> list[Match]:
    """Every value the path reaches from the scope, in document order, with the variables captured."""
    start = scope.root if path.from_root else scope.current
    if path.simple:
        value = walk(start, path.segments)
        return [] if value is MISSING else [Match(value, scope.bindings)]
    frontier: list[Match] = [Match(start, scope.bindings)]
    for seg in path.segments:
        nxt: list[Match] = []
        for m in frontier:
            nxt.extend(_step(seg, m))
        if not nxt:
            return []
        frontier = nxt
    return frontier


def values(path: FieldPath, scope: Scope) -> list[Any]:
    return [m.value for m in resolve(path, scope)]


MISSING: Any = object()
"""What :func:`walk` returns when the path reaches nothing."""


def walk(value: Any, segments: tuple[Segment, ...]) -> Any:
    """The value of a keys-and-indexes-only path, or :data:`MISSING`."""
    for seg in segments:
        if isinstance(seg, Key):
            if not isinstance(value, dict) or seg.name not in value:
                return MISSING
            value = value[seg.name]
        else:
            assert isinstance(seg, Index)
            if not isinstance(value, list) or not -len(value) <= seg.index < len(value):
                return MISSING
            value = value[seg.index]
    return value


def _step(seg: Segment, m: Match) -> Iterator[Match]:
    value = m.value
    if isinstance(seg, Key):
        if isinstance(value, dict) and seg.name in value:
            yield Match(value[seg.name], m.bindings)
    elif isinstance(seg, Index):
        if isinstance(value, list) and -len(value) <= seg.index < len(value):
            yield Match(value[seg.index], m.bindings)
    elif isinstance(seg, Each):
        if isinstance(value, list):
            yield from (Match(v, m.bindings) for v in value)
    elif isinstance(value, dict):
        yield from _match_keys(seg, value, m.bindings)


def _match_keys(seg: Pattern, obj: dict[str, Any], bindings: Bindings) -> Iterator[Match]:
    if seg.parts == _ALL_KEYS:
        yield from (Match(v, bindings) for v in obj.values())
        return
    unbound = [v for v in seg.variables if v not in bindings]
    if not unbound and all(isinstance(p, str) or p[0] == "var" for p in seg.parts):
        key = "".join(p if isinstance(p, str) else bindings[p[1]] for p in seg.parts)
        if key in obj:
            yield Match(obj[key], bindings)
        return
    rx = seg.regex(bindings)
    for key, val in obj.items():
        hit = rx.fullmatch(key) if isinstance(key, str) else None
        if hit is not None:
            captured = hit.groupdict()
            yield Match(val, {**bindings, **captured} if captured else bindings)


# ---------------------------------------------------------------------------------------------- join


def leaves(items: Iterable[Any]) -> Iterator[str]:
    """Text leaves in order: arrays flattened (iteratively: no recursion limit), objects and nulls dropped."""
    stack: list[Iterator[Any]] = [iter(items)]
    while stack:
        for item in stack[-1]:
            if isinstance(item, list):
                stack.append(iter(item))
                break
            text = scalar_text(item)
            if text:
                yield text
        else:
            stack.pop()


def scalar_text(value: Any) -> str | None:
    """The text of a scalar leaf (strings as-is, numbers/booleans as JSON), else None."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool | int | float):
        return json.dumps(value)
    return None


def join_text(items: Iterable[Any], sep: str = "\n") -> str:
    return sep.join(leaves(items))


def describe(value: Any) -> str:
    """A short type name for messages: 'an object', 'an array of 3', 'a string', ..."""
    if isinstance(value, dict):
        keys = ", ".join(list(map(str, value))[:6])
        return f"an object (keys: {keys})" if keys else "an empty object"
    if isinstance(value, list):
        return f"an array of {len(value)}"
    if value is None:
        return "null"
    return f"a {type(value).__name__}"


def longest_resolving_prefix(path: FieldPath, scopes: Sequence[Scope]) -> tuple[int, str, Any] | None:
    """For error hints: the longest proper prefix of ``path`` that resolves on some scope, as
    (segment count, prefix text, a value there)."""
    for n in range(len(path.segments) - 1, -1, -1):
        segs = path.segments[:n]
        prefix = FieldPath(
            format_path(segs, path.from_root),
            segs,
            path.from_root,
            all(isinstance(s, Key | Index) for s in segs),
        )
        for scope in scopes:
            found = resolve(prefix, scope)
            if found:
                return n, prefix.text, found[0].value
    return None
