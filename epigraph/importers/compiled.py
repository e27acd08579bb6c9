"""A mapping ready to run: paths parsed once, path-or-value fields decided. Pure; no I/O.

:class:`Field` is the unit: a tuple of parsed paths (resolved in order, values concatenated) or a literal
value. Role inference rules for message specs without a role live here too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from . import paths as P
from .mapping import ROLES, PathRef, PathSpec, Value

ROLE_WORDS: dict[str, str] = {
    # the seed spec's inference rules, for content paths ...
    "question": "user",
    "input": "user",
    "prompt": "user",
    "query": "user",
    "human": "user",
    "user": "user",
    "request": "user",
    "customer": "user",
    "client": "user",
    "answer": "assistant",
    "response": "assistant",
    "output": "assistant",
    "completion": "assistant",
    "assistant": "assistant",
    "gpt": "assistant",
    "bot": "assistant",
    "model": "assistant",
    "ai": "assistant",
    "chatgpt": "assistant",
    "agent": "assistant",
    "reply": "assistant",
    "system": "system",
    "instruction": "system",
    "instructions": "system",
    "system_prompt": "system",
    "tool": "tool",
    "function": "tool",
    "ipython": "tool",
    "observation": "tool",
}
"""Words that name a role: last keys of content paths, and role values found in datasets."""


def role_for_word(word: str, role_map: Mapping[str, str] | None = None) -> str | None:
    if role_map and word in role_map:
        return role_map[word]
    return ROLE_WORDS.get(word.strip().casefold())


def infer_role(content: Sequence[P.FieldPath]) -> str | None:
    """The role a content path implies by its last key (``qa.question`` -> user), else None."""
    for path in content[:1]:
        keys = [s.name for s in path.segments if isinstance(s, P.Key)]
        if keys:
            return role_for_word(keys[-1])
    return None


@dataclass(frozen=True, slots=True)
class Field:
    """A compiled field: paths whose values are concatenated, or a literal value, or nothing."""

    paths: tuple[P.FieldPath, ...] = ()
    value: str | None = None
    _fast: tuple[P.Segment, ...] | None = field(default=None, init=False, repr=False, compare=False)
    _fast_root: bool = field(default=False, init=False, repr=False, compare=False)
    is_set: bool = field(default=False, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "is_set", bool(self.paths) or self.value is not None)
        # one path of plain keys/indexes (the common case) is read by a direct walk
        if len(self.paths) == 1 and self.paths[0].simple:
            object.__setattr__(self, "_fast", self.paths[0].segments)
            object.__setattr__(self, "_fast_root", self.paths[0].from_root)

    def values(self, scope: P.Scope) -> list[Any]:
        if self.value is not None:
            return [self.value]
        if self._fast is not None:
            found = P.walk(scope.root if self._fast_root else scope.current, self._fast)
            return [] if found is P.MISSING else [found]
        out: list[Any] = []
        for path in self.paths:
            out.extend(P.values(path, scope))
        return out

    def text(self, scope: P.Scope, sep: str = "\n") -> str:
        if self.value is not None:
            return self.value
        if self._fast is not None:
            found = P.walk(scope.root if self._fast_root else scope.current, self._fast)
            if type(found) is str:
                return found
            return "" if found is P.MISSING else P.join_text([found], sep)
        return P.join_text(self.values(scope), sep)

    def first(self, scope: P.Scope) -> Any:
        found = self.values(scope)
        return found[0] if found else None

    def __str__(self) -> str:
        if self.value is not None:
            return repr(self.value)
        return " + ".join(p.text for p in self.paths)


NOTHING = Field()


def path_texts(spec: PathSpec | PathRef | None) -> list[str]:
    if spec is None:
        return []
    if isinstance(spec, PathRef):
        return path_texts(spec.path)
    return [spec] if isinstance(spec, str) else list(spec)


def literal(value: Value) -> str:
    v = value.value
    return v if isinstance(v, str) else P.scalar_text(v) or ""


@dataclass(frozen=True, slots=True)
class CompiledMessage:
    content: Field
    role: str | None = None
    role_path: Field = NOTHING
    role_map: dict[str, str] = field(default_factory=dict)
    speaker: Field = NOTHING
    timestamp: Field = NOTHING
    id: Field = NOTHING
    each: P.FieldPath | None = None

    def role_of(self, scope: P.Scope) -> str | None:
        if self.role is not None:
            return self.role
        raw = self.role_path.first(scope)
        return role_for_word(raw, self.role_map) if isinstance(raw, str) else None


@dataclass(frozen=True, slots=True)
class CompiledMeta:
    source: Field = NOTHING
    language: Field = NOTHING
    timestamp: Field = NOTHING
    timestamp_format: str | None = None
    token_count: Field = NOTHING
    quality_score: Field = NOTHING
    original_id: Field = NOTHING


@dataclass(frozen=True, slots=True)
class CompiledMapping:
    mode: str
    """"text" or "messages"."""
    records: P.FieldPath | None = None
    text: Field = NOTHING
    name: Field = NOTHING
    messages: tuple[CompiledMessage, ...] = ()
    system: Field = NOTHING
    include_system: bool = False
    include_tool: bool = False
    meta: CompiledMeta = CompiledMeta()

    def multi_message(self) -> bool:
        """A record can yield more than one message (ids then get a per-record position suffix)."""
        return (
            len(self.messages) > 1
            or any(m.each is not None for m in self.messages)
            or (self.include_system and self.system.is_set)
        )

    def scopes(self, record: Any) -> list[P.Scope]:
        """The records one file record fans out to (itself when there is no ``records`` path)."""
        base = P.Scope.of(record)
        if self.records is None:
            return [base]
        return [P.Scope(record, m.value, m.bindings) for m in P.resolve(self.records, base)]


def each_scopes(spec: CompiledMessage, scope: P.Scope) -> list[P.Scope]:
    if spec.each is None:
        return [scope]
    return [P.Scope(scope.root, m.value, m.bindings) for m in P.resolve(spec.each, scope)]


ROLE_NAMES = frozenset(ROLES)
