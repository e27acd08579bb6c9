"""Validate a mapping against sample records and compile it. Pure; no I/O.

Every path must parse and reach a value on at least one sample (after the ``records`` fan-out and, for
message fields, the ``each`` expansion); text fields must reach text, not objects; timestamps must parse;
every message needs a content and a role (given, read from a path whose values are known role words or
listed in ``role_map``, or inferred from the content path). All problems are collected, so one re-ask
of the LLM (or one edit of a mapping file) can fix them all. Records that miss a required value later
are reported one by one at conversion time; only a mapping that never works on the samples is rejected.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from epigraph.errors import InputError

from . import paths as P
from .compiled import (
    NOTHING,
    ROLE_NAMES,
    CompiledMapping,
    CompiledMessage,
    CompiledMeta,
    Field,
    each_scopes,
    infer_role,
    literal,
    path_texts,
    role_for_word,
)
from .dates import DateParser
from .mapping import (
    Mapping,
    MessagesMapping,
    MessageSpec,
    Meta,
    PathOrValue,
    PathRef,
    TextMapping,
    Value,
    is_empty,
)


class MappingError(InputError):
    """The mapping does not work on the samples. ``errors`` lists every problem, ``unresolved`` the paths
    that reach nothing (``"<field>: <path>"``)."""

    def __init__(self, errors: Sequence[str], unresolved: Sequence[str] = (), *, file: str | None = None):
        self.errors, self.unresolved = list(errors), list(unresolved)
        super().__init__("mapping rejected:\n  - " + "\n  - ".join(self.errors), file=file)


class IrrelevantDataset(InputError):
    """The mapping is all nulls: the dataset holds no chats or documents to import."""

    def __init__(self, file: str | None = None) -> None:
        super().__init__(
            "the mapping is empty (every field null): this dataset has no chat messages or document "
            "text to import; write a mapping by hand (--mapping PATH) if that is wrong",
            file=file,
        )


@dataclass(frozen=True, slots=True)
class Checked:
    compiled: CompiledMapping
    mapping: Mapping
    """The mapping with every path-or-value choice made explicit (``{"value": ...}``): save this one."""


def compile_mapping(mapping: Mapping, samples: Sequence[Any], *, file: str | None = None) -> Checked:
    """Validate ``mapping`` on ``samples`` (raw file records); raise :class:`MappingError` listing all
    problems, or :class:`IrrelevantDataset` for an all-null mapping."""
    if is_empty(mapping):
        raise IrrelevantDataset(file)
    if not samples:
        raise MappingError(["the file holds no records to validate the mapping on"], file=file)
    ck = _Checker([P.Scope.of(s) for s in samples])
    records = ck.fan_out(mapping.records)
    meta, meta_spec = ck.meta(mapping.meta)
    if isinstance(mapping, TextMapping):
        text = ck.required(mapping.text, "text", text=True)
        name, name_spec = ck.path_or_value(mapping.name, "name", ck.scopes)
        compiled = CompiledMapping("text", records, text=text, name=name, meta=meta)
        normalized: Mapping = mapping.model_copy(update={"name": name_spec, "meta": meta_spec})
    else:
        msgs, specs = ck.messages(mapping, meta.timestamp_format)
        system, system_spec = ck.path_or_value(mapping.system, "system", ck.scopes)
        compiled = CompiledMapping(
            "messages",
            records,
            messages=tuple(msgs),
            system=system,
            include_system=mapping.include_system,
            include_tool=mapping.include_tool,
            meta=meta,
        )
        normalized = mapping.model_copy(update={"messages": specs, "system": system_spec, "meta": meta_spec})
    if ck.errors:
        raise MappingError(ck.errors, ck.unresolved, file=file)
    return Checked(compiled, normalized)


class _Checker:
    def __init__(self, scopes: list[P.Scope]) -> None:
        self.scopes = scopes
        self.errors: list[str] = []
        self.unresolved: list[str] = []

    # -- fields --------------------------------------------------------------------------------------

    def paths(self, texts: list[str], label: str) -> tuple[P.FieldPath, ...] | None:
        parsed: list[P.FieldPath] = []
        for text in texts:
            try:
                parsed.append(P.parse(text))
            except P.PathSyntaxError as exc:
                self.errors.append(f"{label}: {exc.reason}")
                return None
        return tuple(parsed)

    def field(self, spec: Any, label: str, scopes: list[P.Scope], *, text: bool = False) -> Field:
        parsed = self.paths(path_texts(spec), label)
        if not parsed:
            return NOTHING
        bound = {name for s in scopes for name in s.bindings}
        for path in parsed:
            loose = [v for v in path.variables if v not in bound]
            if loose:
                self.errors.append(
                    f"{label}: {{{loose[0]}}} in {path.text!r} is not captured by the records or each path "
                    "(a field path can only reuse a capture; use * for a plain glob)"
                )
                continue
            found = [v for s in scopes for v in P.values(path, s)]
            if not found:
                self.unresolved.append(f"{label}: {path.text}")
                self.errors.append(
                    f"{label}: path {path.text!r} reaches nothing in the samples{_hint(path, scopes)}"
                )
            elif text and not any(True for _ in P.leaves(found)):
                self.errors.append(
                    f"{label}: path {path.text!r} reaches {P.describe(found[0])}, not text; "
                    "point it at a field inside"
                )
        return Field(parsed)

    def required(
        self, spec: Any, label: str, *, text: bool = False, scopes: list[P.Scope] | None = None
    ) -> Field:
        if spec is None:
            self.errors.append(f"{label}: required (a path to the text)")
            return NOTHING
        return self.field(spec, label, self.scopes if scopes is None else scopes, text=text)

    def path_or_value(
        self, spec: PathOrValue | None, label: str, scopes: list[P.Scope]
    ) -> tuple[Field, PathOrValue | None]:
        if spec is None:
            return NOTHING, None
        if isinstance(spec, Value):
            return Field(value=literal(spec)), spec
        if isinstance(spec, PathRef) or isinstance(spec, list):
            return self.field(spec, label, scopes, text=True), spec
        try:
            path = P.parse(spec)
        except P.PathSyntaxError:
            return Field(value=spec), Value(value=spec)
        if any(P.values(path, s) for s in scopes):
            return self.field(spec, label, scopes, text=True), spec
        return Field(value=spec), Value(value=spec)

    def timestamp(self, spec: Any, label: str, scopes: list[P.Scope], fmt: str | None) -> Field:
        """A timestamp path must reach at least one parseable date on the samples (single bad values
        are reported per record at conversion time)."""
        compiled = self.field(spec, label, scopes)
        if not compiled.is_set:
            return compiled
        parser = DateParser(fmt)
        found = [raw for s in scopes if (raw := compiled.first(s)) not in (None, "")]
        if found and not any(parser.parse(raw) is not None for raw in found):
            hint = f" with format {fmt!r}" if fmt else "; set meta.timestamp_format (a strptime format)"
            self.errors.append(f"{label}: {found[0]!r} is not a date{hint}")
        return compiled

    # -- structure -----------------------------------------------------------------------------------

    def fan_out(self, records: str | None) -> P.FieldPath | None:
        if records is None:
            return None
        parsed = self.paths([records], "records")
        if not parsed:
            return None
        path = parsed[0]
        scopes = [P.Scope(s.root, m.value, m.bindings) for s in self.scopes for m in P.resolve(path, s)]
        if not scopes:
            self.unresolved.append(f"records: {path.text}")
            self.errors.append(
                f"records: path {path.text!r} reaches nothing in the samples{_hint(path, self.scopes)}"
            )
            return path
        self.scopes = scopes
        return path

    def meta(self, meta: Meta | None) -> tuple[CompiledMeta, Meta | None]:
        if meta is None:
            return CompiledMeta(), None
        source, source_spec = self.path_or_value(meta.source, "meta.source", self.scopes)
        language, language_spec = self.path_or_value(meta.language, "meta.language", self.scopes)
        compiled = CompiledMeta(
            source=source,
            language=language,
            timestamp=self.timestamp(meta.timestamp, "meta.timestamp", self.scopes, meta.timestamp_format),
            timestamp_format=meta.timestamp_format,
            token_count=self.field(meta.token_count, "meta.token_count", self.scopes),
            quality_score=self.field(meta.quality_score, "meta.quality_score", self.scopes),
            original_id=self.field(meta.original_id, "meta.original_id", self.scopes),
        )
        return compiled, meta.model_copy(update={"source": source_spec, "language": language_spec})

    def messages(
        self, mapping: MessagesMapping, fmt: str | None
    ) -> tuple[list[CompiledMessage], list[MessageSpec]]:
        if not mapping.messages:
            self.errors.append("messages: a non-empty list of message specs is required")
            return [], []
        out: list[CompiledMessage] = []
        specs: list[MessageSpec] = []
        for i, spec in enumerate(mapping.messages):
            compiled, normalized = self.message(spec, f"messages[{i}]", fmt)
            out.append(compiled)
            specs.append(normalized)
        return out, specs

    def message(self, spec: MessageSpec, label: str, fmt: str | None) -> tuple[CompiledMessage, MessageSpec]:
        scopes, each = self.scopes, None
        if spec.each is not None:
            parsed = self.paths([spec.each], f"{label}.each")
            each = parsed[0] if parsed else None
            if each is not None:
                probe = CompiledMessage(NOTHING, each=each)
                scopes = [e for s in self.scopes for e in each_scopes(probe, s)]
                if not scopes:
                    self.unresolved.append(f"{label}.each: {each.text}")
                    self.errors.append(
                        f"{label}.each: path {each.text!r} reaches nothing{_hint(each, self.scopes)}"
                    )
                    return CompiledMessage(NOTHING), spec
        content = self.required(spec.content, f"{label}.content", text=True, scopes=scopes)
        role, role_path = self.role(spec, label, content, scopes)
        speaker, speaker_spec = self.path_or_value(spec.speaker, f"{label}.speaker", scopes)
        compiled = CompiledMessage(
            content=content,
            role=role,
            role_path=role_path,
            role_map=dict(spec.role_map or {}),
            speaker=speaker,
            timestamp=self.timestamp(spec.timestamp, f"{label}.timestamp", scopes, fmt),
            id=self.field(spec.id, f"{label}.id", scopes),
            each=each,
        )
        return compiled, spec.model_copy(update={"speaker": speaker_spec, "role": role or spec.role})

    def role(
        self, spec: MessageSpec, label: str, content: Field, scopes: list[P.Scope]
    ) -> tuple[str | None, Field]:
        if isinstance(spec.role, str) and spec.role in ROLE_NAMES:
            return spec.role, NOTHING
        if spec.role is None:
            inferred = infer_role(content.paths)
            if inferred is None:
                self.errors.append(
                    f"{label}.role: missing, and the content path does not imply one; set it to one of "
                    "user, assistant, system, tool, or to a path"
                )
            return inferred, NOTHING
        field = self.field(spec.role, f"{label}.role", scopes)
        found = {v for s in scopes for v in field.values(s) if field.is_set}
        unknown = sorted(
            str(v) for v in found if not isinstance(v, str) or role_for_word(v, spec.role_map) is None
        )
        if unknown:
            self.errors.append(
                f"{label}.role: values {unknown[:8]} are not roles; map them with role_map "
                '(e.g. {"bot": "assistant"})'
            )
        return None, field


def _hint(path: P.FieldPath, scopes: Sequence[P.Scope]) -> str:
    found = P.longest_resolving_prefix(path, scopes)
    if found is None:
        return ""
    n, prefix, value = found
    where = "the record" if n == 0 else repr(prefix)
    hint = f" ({where} is {P.describe(value)}"
    if isinstance(value, list) and isinstance(path.segments[n], P.Key | P.Pattern):
        hint += f"; to read every element use {'' if n == 0 else prefix}[*]…"
    return hint + ")"
