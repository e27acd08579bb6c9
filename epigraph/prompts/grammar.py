"""A GBNF grammar for JSONL replies: only lines that are objects of the per-line JSON schema.

A ``response_format`` JSON schema constrains ONE JSON value, so JSON Lines replies went out
unconstrained, and a small model invented fields, wrapped lines in fences and repeated lines until the
token cap. llama.cpp's server (and servers built on it) accept a GBNF ``grammar`` field: with this one
the model can write nothing but up to ``max_lines`` lines, each one object of the schema on one line,
and then must stop. Line-by-line streaming is unchanged, and so is the parser: a constrained reply is
just a well-formed JSONL reply. Whether an endpoint accepts it is a profile capability, never a vendor
name; the other endpoints get the unconstrained request.

Covered: objects with properties (discriminator consts and required properties first, in schema order,
then the optional ones, each optional in turn), ``anyOf``/``oneOf`` (including pydantic's discriminated
unions), ``$ref`` into ``$defs``, ``const``, ``enum``, strings (``minLength``; ``maxLength`` is left to
the token cap: a bounded repetition expands into nested rules that slow llama.cpp's sampler),
numbers, integers, booleans, null, arrays, and free-form objects (``additionalProperties``). Anything
else becomes any JSON value. Pure: no I/O.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

_BASE_RULES = r"""ws ::= " "?
string ::= "\"" char* "\""
char ::= [^"\\\x7F\x00-\x1F] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F])
number ::= "-"? [0-9]+ ("." [0-9]+)? ([eE] [-+]? [0-9]+)?
integer ::= "-"? [0-9]+
boolean ::= "true" | "false"
null ::= "null"
value ::= object | array | string | number | boolean | null
object ::= "{" ws ( string ws ":" ws value ( ws "," ws string ws ":" ws value )* )? ws "}"
array ::= "[" ws ( value ( ws "," ws value )* )? ws "]"
"""


def literal(text: str) -> str:
    """``text`` as a GBNF string literal."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
    return f'"{escaped}"'


def json_literal(value: Any) -> str:
    """The GBNF literal matching exactly the compact JSON of ``value``."""
    return literal(json.dumps(value, ensure_ascii=False))


class _Builder:
    def __init__(self, schema: Mapping[str, Any], omit: frozenset[str] = frozenset()) -> None:
        self.defs: Mapping[str, Any] = schema.get("$defs") or {}
        self.omit = omit
        self.rules: dict[str, str] = {}
        self._names: dict[str, str] = {}

    def rule(self, name: str, body: str) -> str:
        """Register ``name ::= body`` (deduplicated by body) and return the rule name to reference."""
        if body in self._names:
            return self._names[body]
        base = re.sub(r"[^a-zA-Z0-9-]+", "-", name).strip("-").lower() or "r"
        unique, n = base, 1
        while unique in self.rules:
            n += 1
            unique = f"{base}{n}"
        self.rules[unique] = body
        self._names[body] = unique
        return unique

    def visit(self, schema: Mapping[str, Any], name: str) -> str:
        """A GBNF expression for one JSON value of ``schema``."""
        if "$ref" in schema:
            target = str(schema["$ref"]).rsplit("/", 1)[-1]
            if target not in self.defs:
                return "value"
            return self.rule(target, self.visit(self.defs[target], target))
        if "const" in schema:
            return json_literal(schema["const"])
        if "enum" in schema:
            return "(" + " | ".join(json_literal(v) for v in schema["enum"]) + ")"
        alternatives = schema.get("anyOf") or schema.get("oneOf")
        if alternatives:
            parts = [self.visit(alt, f"{name}-{i}") for i, alt in enumerate(alternatives)]
            return "(" + " | ".join(parts) + ")"
        kind = schema.get("type")
        if isinstance(kind, list):
            return "(" + " | ".join(self.visit({**schema, "type": k}, name) for k in kind) + ")"
        if kind == "string":
            return self._string(schema)
        if kind in ("number", "integer", "boolean", "null"):
            return str(kind)
        if kind == "array":
            item = self.visit(schema.get("items") or {}, f"{name}-item")
            return f'"[" ws ( {item} ( ws "," ws {item} )* )? ws "]"'
        if kind == "object" or "properties" in schema:
            return self._object(schema, name)
        return "value"

    def _string(self, schema: Mapping[str, Any]) -> str:
        chars = "char*" if int(schema.get("minLength") or 0) == 0 else "char+"
        return f'"\\"" {chars} "\\""'

    def _object(self, schema: Mapping[str, Any], name: str) -> str:
        properties: Mapping[str, Any] = schema.get("properties") or {}
        if not properties:
            return "object"
        required = set(schema.get("required") or ())
        consts = [k for k, v in properties.items() if "const" in v]
        needed = [k for k in properties if k in required and k not in consts]
        optional = [k for k in properties if k not in required and k not in consts and k not in self.omit]
        first = [*consts, *needed] or optional[:1]
        rest = [k for k in optional if k not in first]
        members = [self._member(k, properties[k], name) for k in first]
        body = '"{" ws ' + ' ws "," ws '.join(members)
        for key in rest:
            body += f' ( ws "," ws {self._member(key, properties[key], name)} )?'
        return body + ' ws "}"'

    def _member(self, key: str, schema: Mapping[str, Any], owner: str) -> str:
        return f'{json_literal(key)} ws ":" ws {self.visit(schema, f"{owner}-{key}")}'


NONE = "none"
"""The whole reply of a ``lines`` prompt with nothing to report (a greeting states no fact): one short
word a small model writes readily, where an empty reply asks it to stop before it has begun."""


def lines_grammar(line_rules: str, max_lines: int) -> str:
    """A GBNF grammar whose sentences are ``none`` or 1 to ``max_lines`` lines of the rule ``line``
    (defined by ``line_rules``), each ended by a newline. The bound comes from the input's size, so a
    model that starts listing cannot go on past what the input could hold."""
    bound = max(1, int(max_lines))
    return f'root ::= {literal(NONE + chr(10))} | ( line "\\n" ){{1,{bound}}}\n' + line_rules.strip() + "\n"


def jsonl_grammar(
    line_schema: Mapping[str, Any], max_lines: int | None = None, *, omit: Iterable[str] = ()
) -> str:
    """A GBNF grammar whose sentences are at most ``max_lines`` lines (None: unbounded), each one JSON
    object of ``line_schema`` on one line, ended by a newline. The empty reply is allowed. Optional
    properties named in ``omit`` are left out of every object."""
    builder = _Builder(line_schema, frozenset(omit))
    line = builder.rule("line", builder.visit(line_schema, "item") + ' "\\n"')
    repeat = "*" if max_lines is None else f"{{0,{max(1, int(max_lines))}}}"
    rules = [f"root ::= {line}{repeat}"]
    rules += [f"{name} ::= {body}" for name, body in builder.rules.items()]
    return "\n".join(rules) + "\n" + _BASE_RULES
