"""Lucene query building for Neo4j fulltext indexes: user text never becomes query syntax.

The user's query is treated as a bag of words: every term is escaped (``+ - && || ! ( ) { } [ ] ^ " ~ * ?
: \\ /`` get a backslash, the operator words ``AND``/``OR``/``NOT`` are lower-cased, which the analyzer does
anyway) and OR-ed, field by field, so BM25 ranks documents by how many and how rare the terms they share
are. Lucene parses the query with the index's analyzer (``english``: lower-case, English stop words
dropped, Porter stems), so "hiking" becomes ``hike`` and matches "hikes" in the index.

Terms the analyzer would turn into nothing are dropped here: tokens without a letter or digit, and
tokens made only of English stop words (``language.LUCENE_STOP_WORDS``, possessive ``'s`` removed
first, as Lucene does). This matters beyond tidiness: a field clause whose every term vanishes in the
analyzer disappears from the parsed query, and ``+(text:(the a)) +(group_id:"g")^0`` would then match
*every* document of the group with score 0. A query with no term left is ``''`` (the caller returns no
hits without a call).

:func:`exact_query` builds the exact lookups that share these indexes (hashed names, provenance): a superset
of the answer, which the caller narrows with an exact test.

The fulltext indexes also index ``group_id``; :func:`build_query` adds the groups as a zero-boost required
clause (``+(group_id:"a" group_id:"b")^0``): it narrows the hits to the groups inside Lucene without
changing any score. The analyzer splits ids like ``user-1`` into ``user``/``1`` (and stems them), so a
phrase can also match ``x-user-1`` or ``users-1``; callers must still filter ``group_id`` exactly afterwards
(the store does). A group id made only of stop words (``it``, ``the-a``) would analyze to nothing and
silently drop out of the clause, excluding its own documents, so then the clause is left out altogether.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ...language import LUCENE_STOP_WORDS

SPECIAL = frozenset('+-&|!(){}[]^"~*?:\\/')
OPERATORS = frozenset({"AND", "OR", "NOT"})


# The word pieces the analyzer may keep (letters and digits, joined by apostrophes as in "don't"), and
# the possessive suffix it strips before looking a piece up in the stop words.
_PIECE = re.compile(r"[^\W_]+(?:['\u2019\uff07][^\W_]+)*")
_POSSESSIVE = re.compile(r"['\u2019\uff07][sS]$")

# Lucene counts every leaf clause of a query against maxClauseCount (1024); stay well below it.
MAX_TERMS = 128
MAX_GROUPS = 64


def escape_term(term: str) -> str:
    """One whitespace-free token, made literal for the classic query parser."""
    if term in OPERATORS:
        return term.lower()
    return "".join("\\" + ch if ch in SPECIAL else ch for ch in term)


def searchable(token: str) -> bool:
    """Whether the analyzer keeps a term of ``token``: one of its word pieces is not a stop word.

    Errs on the side of dropping: a token it rejects that Lucene would keep (rare punctuation inside a
    word of stop words) costs one term of a query; one it accepts that Lucene drops could leave a
    clause empty (see the module docstring), so only letters and digits count as word characters.
    """
    for piece in _PIECE.findall(token):
        word = _POSSESSIVE.sub("", piece).lower()
        if word and word not in LUCENE_STOP_WORDS and any(ch.isalpha() or ch.isdecimal() for ch in word):
            return True
    return False


def terms(text: str) -> list[str]:
    """The escaped, de-duplicated (case-insensitively) :func:`searchable` terms of ``text``, in first-seen
    order, at most :data:`MAX_TERMS`."""
    seen: dict[str, str] = {}
    for token in text.split():
        if searchable(token):
            seen.setdefault(token.lower(), escape_term(token))
        if len(seen) >= MAX_TERMS:
            break
    return list(seen.values())


def escape(text: str) -> str:
    """``text`` as a safe OR-query over the index's default fields ('' when it has no searchable term)."""
    return " ".join(terms(text))


def phrase(value: str) -> str:
    """A quoted phrase; only ``"`` and ``\\`` are special inside quotes."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _field(name: str, boost: float, body: str) -> str:
    clause = f"{name}:({body})"
    return clause if boost == 1 else f"{clause}^{boost:g}"


def _group_clause(group_ids: Sequence[str], group_field: str) -> str:
    """`` +(group_id:"a" ...)^0``: narrows to the groups without scoring; '' when it could exclude a group's
    own documents (too many groups, or an id that analyzes to nothing: see the module docstring)."""
    unique_groups = list(dict.fromkeys(group_ids))
    if 0 < len(unique_groups) <= MAX_GROUPS and all(searchable(g) for g in unique_groups):
        return " +(" + " ".join(f"{group_field}:{phrase(g)}" for g in unique_groups) + ")^0"
    return ""


def build_query(
    fields: Sequence[tuple[str, float]], text: str, group_ids: Sequence[str], group_field: str = "group_id"
) -> str:
    """``+(f1:(t...)^b1 f2:(t...)) +(group_id:"g" ...)^0``, or ``''`` when ``text`` has no searchable term.

    ``fields`` are ``(property, boost)`` pairs of trusted identifiers (index property names), never user
    input. The group clause is left out when there are too many groups or a group id is not
    :func:`searchable` (its phrase would analyze to nothing); the exact group filter after the index call
    keeps the result correct.
    """
    words = terms(text)
    if not words:
        return ""
    body = " ".join(words)
    query = "+(" + " ".join(_field(name, boost, body) for name, boost in fields) + ")"
    return query + _group_clause(group_ids, group_field)


def exact_query(field: str, values: Sequence[str], group_id: str, group_field: str = "group_id") -> str:
    """A query whose hits include every document of ``group_id`` that holds one of ``values`` in ``field``.

    Each value is a quoted phrase: the analyzer splits it exactly as it split the stored value, so the
    phrase matches the document that holds it (any string is safe inside quotes). The hits can include
    more (a value that analyzes to the same terms, or a phrase spanning two list elements): callers test
    the property exactly afterwards. A value the analyzer would turn into nothing cannot be looked up
    this way; then the query is every document of the group (or of the index, when the group id is not
    searchable either), and the exact test after it does the work.
    """
    if not values or not all(searchable(v) for v in values):
        return f"{group_field}:{phrase(group_id)}" if searchable(group_id) else "*:*"
    body = " ".join(f"{field}:{phrase(v)}" for v in values)
    return f"+({body}){_group_clause([group_id], group_field)}"
