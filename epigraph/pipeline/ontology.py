"""Custom types: entity types and relation types as pydantic models, and allowed endpoint pairs.

- An entity type is a pydantic model: its class name is the label, its docstring the description and
  its fields the attributes to extract.
- A relation type is a pydantic model too; its name is the class name in SCREAMING_SNAKE_CASE
  (``WorksAt`` -> ``WORKS_AT``) unless it sets ``relation: ClassVar[str]``.
- ``allowed`` maps a relation (model or name) to its (source type, target type) pairs, ``"*"`` matching
  any type. A fact whose relation has pairs and whose endpoints match none is dropped and reported, never
  stored untyped. With ``strict_relations`` a relation that is not declared is dropped as well.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, TypeAdapter, ValidationError

from ..errors import UsageError
from ..graph.model import check_label, check_relation

TypeRef = type[BaseModel] | str
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def relation_name(model: type[BaseModel]) -> str:
    explicit = getattr(model, "relation", None)
    name = explicit if isinstance(explicit, str) else _CAMEL.sub("_", model.__name__).upper()
    return check_relation(name)


def _type_name(ref: TypeRef) -> str:
    return ref if isinstance(ref, str) else ref.__name__


def _relation_key(ref: TypeRef) -> str:
    return ref if isinstance(ref, str) else relation_name(ref)


def _describe(model: type[BaseModel]) -> str:
    return " ".join((model.__doc__ or "").split())


def _attribute_list(model: type[BaseModel]) -> str:
    parts = []
    for name, info in model.model_fields.items():
        desc = f": {info.description}" if info.description else ""
        parts.append(f"{name}{desc}")
    return "; ".join(parts)


@dataclass(frozen=True)
class Ontology:
    entity_types: tuple[type[BaseModel], ...] = ()
    relation_types: tuple[type[BaseModel], ...] = ()
    allowed: Mapping[str, tuple[tuple[str, str], ...]] = field(default_factory=dict)
    strict_relations: bool = False

    @classmethod
    def build(
        cls,
        entity_types: Iterable[type[BaseModel]] = (),
        relation_types: Iterable[type[BaseModel]] = (),
        allowed: Mapping[TypeRef, Sequence[tuple[TypeRef, TypeRef]]] | None = None,
        *,
        strict_relations: bool = False,
    ) -> Ontology:
        """Check and normalize a user's types; raises ``UsageError`` on a bad name or an unknown type."""
        entities = tuple(entity_types)
        relations = tuple(relation_types)
        try:
            labels = {check_label(m.__name__) for m in entities}
            relation_names = {relation_name(m) for m in relations}
        except ValueError as exc:
            raise UsageError(f"invalid custom type: {exc}") from None
        pairs: dict[str, tuple[tuple[str, str], ...]] = {}
        for rel, rel_pairs in (allowed or {}).items():
            key = _relation_key(rel)
            named = tuple((_type_name(s), _type_name(t)) for s, t in rel_pairs)
            unknown = {n for pair in named for n in pair if n != "*" and n not in labels}
            if unknown:
                raise UsageError(f"allowed pairs of {key} name unknown entity types: {sorted(unknown)}")
            pairs[key] = named
            relation_names.add(key)
        return cls(entities, relations, pairs, strict_relations)

    @property
    def labels(self) -> set[str]:
        return {m.__name__ for m in self.entity_types}

    def entity_model(self, label: str | None) -> type[BaseModel] | None:
        return next((m for m in self.entity_types if m.__name__ == label), None)

    def relation_model(self, relation: str) -> type[BaseModel] | None:
        return next((m for m in self.relation_types if relation_name(m) == relation), None)

    def entity_types_text(self) -> str:
        if not self.entity_types:
            return "(none: use null)"
        return "\n".join(
            f"- {m.__name__}: {_describe(m)}"
            + (f" Attributes: {_attribute_list(m)}" if m.model_fields else "")
            for m in self.entity_types
        )

    def relation_types_text(self) -> str:
        names = sorted({relation_name(m) for m in self.relation_types} | set(self.allowed))
        if not names:
            return "(none: choose a fitting name)"
        lines = []
        for name in names:
            model = self.relation_model(name)
            desc = f": {_describe(model)}" if model is not None and model.__doc__ else ""
            pairs = self.allowed.get(name)
            between = f" Between: {', '.join(f'{s} -> {t}' for s, t in pairs)}." if pairs else ""
            attrs = (
                f" Attributes: {_attribute_list(model)}" if model is not None and model.model_fields else ""
            )
            lines.append(f"- {name}{desc}{between}{attrs}")
        return "\n".join(lines)

    def prompt_fields(self) -> dict[str, Any]:
        """The declared types as the extraction prompts take them (``prompts.extraction``): a few lines
        of instructions, and the type and attribute names their grammar allows. Empty without types."""
        relations = sorted({relation_name(m) for m in self.relation_types} | set(self.allowed))
        if not self.entity_types and not relations:
            return {}
        text = ""
        if self.entity_types:
            kinds = "; ".join(
                f"{m.__name__} ({_describe(m) or 'a type'}"
                + (f" Attributes: {_attribute_list(m)}" if m.model_fields else "")
                + ")"
                for m in self.entity_types
            )
            text += (
                "\nAfter a name write its type in parentheses when one fits, and the type's attributes "
                f"the message states: [Ann (Person, age=34)]. Types: {kinds}."
            )
        if relations:
            text += (
                "\nUse these relations where they fit: "
                + "; ".join(self._relation_hint(r) for r in relations)
                + "."
            )
            if any(m.model_fields for m in self.relation_types):
                text += " A relation's attributes go at the end of its line: {role=engineer}."
        return {
            "types": text,
            "type_names": [m.__name__ for m in self.entity_types],
            "entity_attributes": sorted({a for m in self.entity_types for a in m.model_fields}),
            "relation_attributes": sorted({a for m in self.relation_types for a in m.model_fields}),
        }

    def _relation_hint(self, name: str) -> str:
        model = self.relation_model(name)
        parts = [_describe(model).rstrip(".")] if model is not None and model.__doc__ else []
        pairs = self.allowed.get(name)
        if pairs:
            parts.append(", ".join(f"{s} -> {t}" for s, t in pairs))
        if model is not None and model.model_fields:
            parts.append(f"attributes: {_attribute_list(model)}")
        words = name.replace("_", " ").lower()
        return f"{words} ({'; '.join(parts)})" if parts else words

    def label_for(self, entity_type: str | None) -> str | None:
        """The label for an extracted type name (case-insensitive), or None when it is not declared."""
        if not entity_type:
            return None
        wanted = entity_type.strip().casefold()
        return next((m.__name__ for m in self.entity_types if m.__name__.casefold() == wanted), None)

    def check_fact(
        self, relation: str, source_labels: Sequence[str], target_labels: Sequence[str]
    ) -> str | None:
        """None when the fact may be stored, else the reason it is refused."""
        pairs = self.allowed.get(relation)
        if pairs is None:
            declared = any(relation_name(m) == relation for m in self.relation_types)
            if self.strict_relations and not declared:
                return f"relation {relation} is not a declared relation type"
            return None
        for s, t in pairs:
            if (s == "*" or s in source_labels) and (t == "*" or t in target_labels):
                return None
        got = f"{'/'.join(source_labels) or 'untyped'} -> {'/'.join(target_labels) or 'untyped'}"
        allowed = ", ".join(f"{s} -> {t}" for s, t in pairs)
        return f"{relation} is not allowed between {got} (allowed: {allowed})"


def clean_attributes(
    model: type[BaseModel] | None, raw: Mapping[str, Any]
) -> tuple[dict[str, Any], list[str]]:
    """Keep the attributes the type declares and that validate; return them and one warning per drop."""
    if model is None:
        return {}, ([f"attributes {sorted(raw)} dropped: no declared type"] if raw else [])
    kept: dict[str, Any] = {}
    problems: list[str] = []
    for name, value in raw.items():
        info = model.model_fields.get(name)
        if info is None:
            problems.append(f"attribute {name!r} is not a field of {model.__name__}")
            continue
        if value is None:
            continue
        try:
            kept[name] = TypeAdapter(info.annotation or Any).validate_python(value)
        except ValidationError:
            problems.append(f"attribute {name!r}={value!r} does not fit {model.__name__}.{name}")
    return TypeAdapter(dict[str, Any]).dump_python(kept, mode="json"), problems
