"""A title the speaker put in quotes names the work it is in.

A small model keeps the quotes and the words around them in a name: '"Finding Freedom" piece' for
'a contemporary piece called "Finding Freedom."'. The work is Finding Freedom, and a later message that
names it ("Finding Freedom was so emotional") must meet the same entity, so a name holding a quoted
span that the message also quotes is made that span.
"""

from __future__ import annotations

import re

_QUOTED = re.compile(r"[\"“]([^\"“”]+)[\"”]")


def titled(name: str, text: str) -> str:
    """``name`` as the title it quotes when ``text`` quotes the same words, else ``name``:
    ('"Finding Freedom" piece', 'a piece called "Finding Freedom."') -> "Finding Freedom"."""
    found = _QUOTED.search(name)
    if found is None:
        return name
    title = _bare(found.group(1))
    quoted = {_bare(q.group(1)).casefold() for q in _QUOTED.finditer(text)}
    return title if title and title.casefold() in quoted else name


def _bare(span: str) -> str:
    return span.strip().rstrip(".,;:!?").strip()
