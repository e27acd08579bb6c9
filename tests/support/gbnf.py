"""A reader for the non-recursive part of GBNF (llama.cpp's grammar format), for tests: it turns a
grammar into one Python regular expression, so a test can say which replies a grammar allows.

Covered: rules ``name ::= body``, string literals with escapes, character classes ``[...]`` and
``[^...]``, grouping, alternation and the ``?``, ``*``, ``+`` and ``{m,n}`` operators. A rule that
refers to itself, directly or not, cannot become a regular expression and raises ``ValueError``.
"""

from __future__ import annotations

import json
import re

_TOKEN = re.compile(
    r'\s*(?:(?P<lit>"(?:[^"\\]|\\.)*")|(?P<cls>\[(?:[^\]\\]|\\.)*\])|(?P<name>[a-zA-Z][a-zA-Z0-9-]*)'
    r"|(?P<op>[()|?*+]|\{\d+(?:,\d*)?\}))"
)


def to_regex(grammar: str, root: str = "root") -> re.Pattern[str]:
    """The regular expression matching exactly the strings ``grammar`` allows from ``root``."""
    rules: dict[str, str] = {}
    for line in grammar.splitlines():
        if line.strip():
            name, _, body = line.partition("::=")
            rules[name.strip()] = body.strip()
    return re.compile(_expand(rules, root, ()), re.DOTALL)


def _expand(rules: dict[str, str], name: str, stack: tuple[str, ...]) -> str:
    if name in stack:
        raise ValueError(f"rule {name!r} is recursive: {' -> '.join((*stack, name))}")
    if name not in rules:
        raise ValueError(f"rule {name!r} is not defined")
    body, out, pos = rules[name], [], 0
    while pos < len(body):
        m = _TOKEN.match(body, pos)
        if m is None or m.end() == pos:
            if body[pos:].strip():
                raise ValueError(f"rule {name!r}: cannot read {body[pos:]!r}")
            break
        pos = m.end()
        if m["lit"]:
            out.append(re.escape(json.loads(m["lit"])))
        elif m["cls"]:
            out.append(m["cls"])
        elif m["name"]:
            out.append(_expand(rules, m["name"], (*stack, name)))
        else:
            out.append("(?:" if m["op"] == "(" else m["op"])
    return "(?:" + "".join(out) + ")"
