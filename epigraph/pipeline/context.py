"""The previous-episodes window: the last episodes of the group before this one, capped by tokens.

Capped by tokens, not by count (a long document episode must not crowd out the prompt), newest kept
first, shown oldest first. Ties in reference time (all turns of a session) are ordered by created_at,
so the window holds exactly the turns that came before this one.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta

from ..graph.model import Episode
from ..graph.store import GraphReads
from ..tokens import count_text_tokens
from .state import clip

_PER_EPISODE_CHARS = 700


async def previous_episodes(store: GraphReads, episode: Episode, limit: int) -> list[Episode]:
    """Up to ``limit`` episodes of the group that precede ``episode``, newest first. Episodes stored after
    it with the same reference time (a session's turns accepted together, or run ahead:
    ``IngestOptions.in_flight``) come first in the store's order and are skipped: read more until
    ``limit`` precede it or the group has no more, so the window never depends on how many were stored."""
    if limit <= 0:
        return []
    until = episode.reference_time + timedelta(microseconds=1)
    key = (episode.reference_time, episode.created_at)
    wanted = limit + 8
    while True:
        found = await store.episodes(episode.group_id, until=until, limit=wanted, newest_first=True)
        before = [e for e in found if e.uuid != episode.uuid and (e.reference_time, e.created_at) < key]
        if len(before) >= limit or len(found) < wanted:
            return before[:limit]
        wanted *= 2


def context_text(newest_first: Sequence[Episode], max_tokens: int) -> str:
    """The window as text, oldest first, within ``max_tokens`` (whole episodes only)."""
    kept: list[str] = []
    budget = max_tokens
    for episode in newest_first:
        line = clip(" ".join(episode.content.split()), _PER_EPISODE_CHARS)
        cost = count_text_tokens(line) + 1
        if cost > budget:
            break
        kept.append(line)
        budget -= cost
    return "\n".join(reversed(kept))


def context_block(text: str) -> str:
    """The window as the extraction prompts show it before the episode: a heading that says it is only
    context, the episodes, a blank line; nothing at all when the window is empty."""
    return f"Earlier, only to tell who or what is meant:\n{text}\n\n" if text else ""
