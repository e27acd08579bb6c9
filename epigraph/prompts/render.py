"""Prompt templates: loading and strict rendering.

Template format (``epigraph/prompts/templates/<name>.txt``, or ``Prompt.template_dir``)::

    Anything before the first section header is a note for maintainers and is not sent.

    ## system
    You extract entities from a conversation.
    {{format_rules}}

    ## user
    Conversation:
    {{episode}}

    Each line must match this JSON schema: {{schema}}

- A section header is a line holding only ``## system``, ``## user`` or ``## assistant`` (case does not
  matter). Other ``##`` lines are ordinary text. Sections become chat messages in file order, with
  surrounding blank lines trimmed. ``## system`` may appear once, first; ``## assistant`` sections give
  few-shot turns; there must be a ``## user`` section and the last section must be one.
- ``{{name}}`` (spaces inside the braces allowed) is replaced by the input field ``name``: strings as-is,
  anything else as compact JSON (``None`` is ``null``). Substitution is one pass, so braces inside values
  are never re-read as placeholders.
- Automatic variables: ``{{schema}}`` is the output JSON schema (for ``jsonl``, the schema of ONE line; a
  ``type``-discriminated union appears as a ``oneOf``), ``{{format_rules}}`` is a short instruction for
  the response type (for ``jsonl``: one JSON object per line, no prose, no fences). They may go unused.
- Rendering fails loudly with :class:`TemplateError`: a missing template or section, a placeholder that
  names no input field, an input field the template never uses (use ``Field(exclude=True)`` for data that
  only feeds a ``computed_field``), an input field shadowing an automatic variable, or a stray ``{{``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import BaseModel, TypeAdapter

from ..errors import UsageError
from .base import Prompt

_HEADER = re.compile(r"^##[ \t]+(system|user|assistant)[ \t]*$", re.IGNORECASE | re.MULTILINE)
_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
AUTOMATIC = ("schema", "format_rules")

_RULES = {
    "text": "Reply in plain text.",
    "json": (
        "Reply with exactly one JSON value that matches the schema. "
        "No prose before or after it, no markdown fences, no comments."
    ),
    "jsonl": (
        "Reply in JSON Lines: one complete JSON object per line, each matching the schema. "
        "No prose, no markdown fences, no surrounding array, no blank lines. "
        "If there is nothing to report, reply with nothing."
    ),
    "lines": "Reply with the lines only: no numbering, no prose, no fences. If there is nothing: none.",
}


class TemplateError(UsageError):
    """A prompt template is missing, malformed, or does not match the prompt's input."""


@dataclass(frozen=True, slots=True)
class Template:
    source: str
    sections: tuple[tuple[str, str], ...]
    """(role, text) in file order."""

    @property
    def placeholders(self) -> set[str]:
        return {m.group(1) for _, text in self.sections for m in _PLACEHOLDER.finditer(text)}


def parse_template(text: str, source: str = "<template>") -> Template:
    """Split a template into role sections and check its structure."""
    headers = list(_HEADER.finditer(text))
    sections: list[tuple[str, str]] = []
    for i, header in enumerate(headers):
        end = headers[i + 1].start() if i + 1 < len(headers) else len(text)
        sections.append((header.group(1).lower(), text[header.end() : end].strip("\n").strip()))
    roles = [role for role, _ in sections]
    if "user" not in roles:
        raise TemplateError(f"{source}: no '## user' section")
    if roles[-1] != "user":
        raise TemplateError(f"{source}: the last section must be '## user', not '## {roles[-1]}'")
    if "system" in roles[1:] or roles.count("system") > 1:
        raise TemplateError(f"{source}: '## system' may appear once, as the first section")
    for role, body in sections:
        stray = _PLACEHOLDER.sub("", body).find("{{")
        if stray >= 0:
            snippet = _PLACEHOLDER.sub("", body)[stray : stray + 30]
            raise TemplateError(f"{source}: malformed placeholder in '## {role}': {snippet!r}")
    return Template(source, tuple(sections))


def load_template(prompt: Prompt[Any, Any]) -> Template:
    """Read the prompt's template from ``prompt.template_dir`` or the packaged templates folder."""
    name = prompt.template_file
    try:
        if prompt.template_dir is not None:
            path = Path(prompt.template_dir) / name
            text, source = path.read_text(encoding="utf-8"), str(path)
        else:
            ref = resources.files("epigraph.prompts").joinpath("templates", name)
            text, source = ref.read_text(encoding="utf-8"), f"epigraph/prompts/templates/{name}"
    except (FileNotFoundError, NotADirectoryError):
        where = prompt.template_dir or "epigraph/prompts/templates"
        raise TemplateError(f"prompt {prompt.name!r}: template {name!r} not found in {where}") from None
    return parse_template(text, source)


def output_adapter(prompt: Prompt[Any, Any]) -> TypeAdapter[Any]:
    """The validator of one output value (json) or one line (jsonl)."""
    if prompt.output_model is None:
        raise TemplateError(f"prompt {prompt.name!r} ({prompt.response_type}) declares no output_model")
    return TypeAdapter(prompt.output_model)


def output_schema(prompt: Prompt[Any, Any]) -> dict[str, Any] | None:
    """The JSON schema of the output (per line for jsonl); None for text prompts."""
    if prompt.response_type in ("text", "lines"):
        return None
    return output_adapter(prompt).json_schema()


def format_rules(prompt: Prompt[Any, Any], schema: dict[str, Any] | None = None) -> str:
    """Short format instructions for the prompt's response type."""
    rules = _RULES[prompt.response_type]
    kinds = _discriminator_values(schema) if schema else []
    if prompt.response_type == "jsonl" and kinds:
        rules += ' Every object has a "type" field: ' + ", ".join(json.dumps(k) for k in kinds) + "."
    return rules


def _discriminator_values(schema: dict[str, Any]) -> list[str]:
    prop = (schema.get("discriminator") or {}).get("propertyName")
    if not prop:
        return []
    return list((schema["discriminator"].get("mapping") or {}).keys())


def to_text(value: Any) -> str:
    """How an input value appears in a prompt: strings as-is, everything else compact JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def template_variables(prompt: Prompt[Any, Any], data: BaseModel) -> dict[str, str]:
    """Input fields (``model_dump(mode="json")``) as strings, plus the automatic variables."""
    dumped = data.model_dump(mode="json")
    clash = sorted(set(dumped) & set(AUTOMATIC))
    if clash:
        raise TemplateError(f"prompt {prompt.name!r}: input field(s) {clash} shadow automatic variables")
    schema = output_schema(prompt)
    variables = {name: to_text(value) for name, value in dumped.items()}
    variables["schema"] = to_text(schema) if schema is not None else ""
    variables["format_rules"] = format_rules(prompt, schema)
    return variables


def render(prompt: Prompt[Any, Any], data: BaseModel) -> list[dict[str, str]]:
    """The chat messages of one call; raises :class:`TemplateError` on any mismatch."""
    template = load_template(prompt)
    variables = template_variables(prompt, data)
    used = template.placeholders
    unknown = sorted(used - set(variables))
    if unknown:
        raise TemplateError(
            f"{template.source}: placeholder(s) {unknown} name no field of "
            f"{type(data).__name__} (fields: {sorted(set(variables) - set(AUTOMATIC))})"
        )
    unused = sorted(set(variables) - used - set(AUTOMATIC))
    if unused:
        raise TemplateError(f"{template.source}: input field(s) {unused} are never used by the template")

    def substitute(match: re.Match[str]) -> str:
        return variables[match.group(1)]

    return [{"role": role, "content": _PLACEHOLDER.sub(substitute, text)} for role, text in template.sections]
