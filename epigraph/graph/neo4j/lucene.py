"""Lucene query building for Neo4j fulltext indexes: user text never becomes query syntax.

The user's query is treated as a bag of words: every term is escaped (``+ - && || ! ( ) { } [ ] ^ " ~ * ?
: \\ /`` get a backslash, the operator words ``AND``/``OR``/``NOT`` are lower-cased, which the analyzer does
anyway) and OR-ed, field by field, so BM25 ranks documents by how many and how rare the terms they share
are. Terms that carry no letter or digit are dropped (the analyzer would drop them too, and an empty
clause is the one thing the classic query parser still chokes on).

:func:`keyword_query` builds exact lookups (hashed names) for the ``keyword``-analyzed names index.

The fulltext indexes also index ``group_id``; :func:`build_query` adds the groups as a zero-boost required
clause (``+(group_id:"a" group_id:"b")^0``): it narrows the hits to the groups inside Lucene without
changing any score. The analyzer splits ids like ``user-1`` into ``user``/``1``, so a phrase can also
match ``x-user-1``; callers must still filter ``group_id`` exactly afterwards (the store does).
"""

from __future__ import annotations

from collections.abc import Sequence

SPECIAL = frozenset('+-&|!(){}[]^"~*?:\\/')
OPERATORS = frozenset({"AND", "OR", "NOT"})

# Lucene counts every leaf clause of a query against maxClauseCount (1024); stay well below it.
MAX_TERMS = 128
MAX_GROUPS = 64


def escape_term(term: str) -> str:
    """One whitespace-free token, made literal for the classic query parser."""
    if term in OPERATORS:
        return term.lower()
    return "".join("\\" + ch if ch in SPECIAL else ch for ch in term)


def _has_word_char(token: str) -> bool:
    return any(ch.isalnum() or (ord(ch) > 127 and not ch.isspace()) for ch in token)


def terms(text: str) -> list[str]:
    """The escaped, de-duplicated terms of ``text`` (at most :data:`MAX_TERMS`), in first-seen order."""
    seen: dict[str, None] = {}
    for token in text.split():
        if _has_word_char(token):
            seen.setdefault(escape_term(token), None)
        if len(seen) >= MAX_TERMS:
            break
    return list(seen)


def escape(text: str) -> str:
    """``text`` as a safe OR-query over the index's default fields ('' when it has no searchable term)."""
    return " ".join(terms(text))


def phrase(value: str) -> str:
    """A quoted phrase; only ``"`` and ``\\`` are special inside quotes."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _field(name: str, boost: float, body: str) -> str:
    clause = f"{name}:({body})"
    return clause if boost == 1 else f"{clause}^{boost:g}"


def build_query(
    fields: Sequence[tuple[str, float]], text: str, group_ids: Sequence[str], group_field: str = "group_id"
) -> str:
    """``+(f1:(t...)^b1 f2:(t...)) +(group_id:"g" ...)^0``, or ``''`` when ``text`` has no searchable term.

    ``fields`` are ``(property, boost)`` pairs of trusted identifiers (index property names), never user
    input. The group clause is left out when there are too many groups or a group id has no word character
    (its phrase would be empty); the exact group filter after the index call keeps the result correct.
    """
    words = terms(text)
    if not words:
        return ""
    body = " ".join(words)
    query = "+(" + " ".join(_field(name, boost, body) for name, boost in fields) + ")"
    unique_groups = list(dict.fromkeys(group_ids))
    if 0 < len(unique_groups) <= MAX_GROUPS and all(_has_word_char(g) for g in unique_groups):
        query += " +(" + " ".join(f"{group_field}:{phrase(g)}" for g in unique_groups) + ")^0"
    return query


def keyword_query(field: str, keys: Sequence[str], group_id: str, group_field: str = "group_id") -> str:
    """``+group_id:"g" +(field:k1 field:k2 ...)`` for an index with the ``keyword`` analyzer.

    ``keys`` must be plain ``[0-9a-f]`` strings (``convert.name_key``), so they need no escaping; the group
    is a quoted phrase, i.e. one exact keyword term.
    """
    if not all(key.isalnum() and key.isascii() for key in keys):
        raise ValueError("keyword_query keys must be ASCII alphanumeric")
    body = " ".join(f"{field}:{key}" for key in keys)
    return f"+{group_field}:{phrase(group_id)} +({body})"
