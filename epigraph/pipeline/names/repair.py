"""Names a small model writes half right, made the entity they name (pure functions).

- A title the speaker put in quotes names the work: the model keeps the quotes and the words around
  them ('"Finding Freedom" piece' for 'a contemporary piece called "Finding Freedom."'), and a later
  message that names it ("Finding Freedom was so emotional") must meet the same entity, so a name
  holding a quoted span that the message also quotes is made that span (:func:`titled`).
- A bare possessive names its possessor: "[Caroline's] jobs stand out" makes "Caroline's" a name, a
  second Caroline. When the name without its "'s" is a name of the same reply or the speaker, it is
  that name (:func:`possessor`); "McDonald's" with no McDonald beside it stays.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

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


_POSSESSIVE = re.compile(r"^(.+?)(?:['’]s|s['’])$")


def possessor(name: str, names: Iterable[str]) -> str:
    """``name`` without its possessive ending when what is left is one of ``names`` (as written
    there): ("Caroline's", ["Caroline", ...]) -> "Caroline"; ("McDonald's", ["Ann"]) -> "McDonald's"."""
    found = _POSSESSIVE.match(name.strip())
    if found is None:
        return name
    bare = found.group(1) + ("s" if found.group(0).endswith(("s'", "s’")) else "")
    return next((n for n in names if n.strip().casefold() == bare.casefold()), name)
