"""Retention: a group keeps its episodes ``days`` days; the older ones (by reference time: when they were
said), and what only they support, are forgotten by the same code as a subject (``Forgetter.episodes``:
facts only they state, entities only they mention, the conversation summaries and corrections they
touch; the summaries of the entities left rebuilt).

:func:`due` reads which episodes a policy forgets now; ``epigraph serve`` runs every group's policy on a
schedule (``Settings.retention_every``), ``epigraph retention apply`` on demand.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from ..graph.forgetting import RetentionPolicy
from ..graph.store import GraphLookups

EVERY_EPISODE = 1_000_000_000
"""The limit that reads every episode of a group."""


def cutoff(policy: RetentionPolicy, now: datetime) -> datetime:
    """Episodes said before this time are older than the policy keeps."""
    return now - timedelta(days=policy.days)


async def due(store: GraphLookups, policy: RetentionPolicy, now: datetime) -> list[str]:
    """The uuids of the group's episodes the policy forgets at ``now`` (reference time before the
    cutoff), oldest first."""
    old = await store.episodes(
        policy.group_id, until=cutoff(policy, now), limit=EVERY_EPISODE, newest_first=False
    )
    return [episode.uuid for episode in old]
