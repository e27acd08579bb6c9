"""What the speaker of a message calls "my ...".

A message episode reads "Speaker: text" (``graph.model.speaker_of``). Its speaker is an entity of it,
known without asking a model, and a thing the speaker calls "my X" is the speaker's X: a small model
writes "[Jon] is starting [business]" for "starting my own business", so the name is made "Jon's
business" here (the gold convention, and what keeps Jon's business apart from Gina's).
"""

from __future__ import annotations

import re

from ..language import LUCENE_STOP_WORDS

_POSSESSED = re.compile(r"['’]s\b")


def owned(name: str, text: str, speaker: str | None) -> str:
    """``name`` as the speaker's when ``text`` (the speaker's message) says "my <name>" or "my own
    <name>" as a whole phrase (not "my <name> crew"): "business" -> "Jon's business". Names that already
    have an owner, or are the speaker, stay."""
    if speaker is None or not name or _POSSESSED.search(name) or name.casefold() == speaker.casefold():
        return name
    for found in re.finditer(rf"\bmy\s+(?:own\s+)?{re.escape(name)}\b", text, re.IGNORECASE):
        after = text[found.end() :].split(maxsplit=1)
        if not after or not after[0][:1].isalpha() or after[0].casefold() in LUCENE_STOP_WORDS:
            return f"{speaker}'s {name}"  # the whole phrase: "my dance" in "my dance crew" is not it
    return name
