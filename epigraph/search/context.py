"""What a conversation graph knows of an episode that its text does not say: its session and its speaker.

- **Sessions**: a group's episodes in their order (reference time, then created_at: the order the ingestor
  keeps and ``GraphStore.episodes_around`` reads) fall into sessions; two consecutive episodes belong to
  one session when they come from the same source and their reference times are at most a gap apart.
  Turns imported from one LoCoMo session share its time; live chat turns are seconds to minutes apart;
  sessions days apart. Episodes have no session field, so this is the rule.
- **Speakers**: a message episode's content is ``"Speaker: text"`` (``episodes.inputs`` writes it so);
  the speaker is that prefix. A query names a speaker when the speaker's name occurs in it as whole words
  (any case).

Pure functions; the engine fetches the neighbours and applies :func:`.fusion.spread_to_neighbours` and
:func:`.fusion.boost`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import timedelta
from itertools import pairwise

from ..graph.model import Episode


def names(query: str, speaker: str) -> bool:
    """Whether ``query`` names ``speaker``: its words as whole words, any case ("Mel's" names Mel)."""
    words = speaker.split()
    if not words:
        return False
    pattern = r"(?<!\w)" + r"\s+".join(re.escape(w) for w in words) + r"(?!\w)"
    return re.search(pattern, query, re.IGNORECASE) is not None


def session_links(episodes: Sequence[Episode], gap: timedelta) -> list[bool]:
    """For consecutive ``episodes`` (in the group's order): whether each pair is in one session."""
    return [
        a.group_id == b.group_id
        and a.source_description == b.source_description
        and abs(b.reference_time - a.reference_time) <= gap
        for a, b in pairwise(episodes)
    ]
