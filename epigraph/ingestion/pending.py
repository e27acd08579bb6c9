"""What "accepted" means for the queue: an episode stored ``pending``, and a group's pending episodes in
the order they were accepted (``runner`` runs them; ``lookahead`` stores a group's next ones early)."""

from __future__ import annotations

from ..errors import EpisodeConflict
from ..graph.model import Episode, EpisodeStatus
from ..graph.store import EpisodeWrite, IngestStore

ALL = 1_000_000
"""A limit that lists every episode of a group."""


async def save_pending(store: IngestStore, episode: Episode) -> tuple[Episode, Episode | None]:
    """Accept: store ``episode`` pending (a stored one keeps its fields) unless it is done; returns what
    is stored pending and the stored ``done`` episode, if any. The store checks ``done`` again inside the
    write, so one another process finished since the read is not set back to pending. A stored episode
    of the same uuid with other content (an id its caller gave, taken since the door's
    ``conflicts.ConflictCheck``: two calls at once) is an :class:`~epigraph.errors.EpisodeConflict`,
    nothing of this one stored."""
    stored = await store.get_episode(episode.group_id, episode.uuid)
    if stored is not None and stored.content_hash != episode.content_hash:
        raise EpisodeConflict(episode.group_id, episode.uuid)
    if stored is not None and stored.status == EpisodeStatus.DONE:
        return episode, stored
    if stored is not None and stored.status == EpisodeStatus.PENDING:
        return stored, None
    if stored is not None:
        episode = stored.model_copy(update={"status": EpisodeStatus.PENDING, "error": None})
    if await store.write_episode(EpisodeWrite(episode=episode, unless_done=True)):
        return episode, None
    return episode, await store.get_episode(episode.group_id, episode.uuid) or episode


async def requeue(store: IngestStore, group_id: str) -> list[Episode]:
    """Set the group's ``failed`` episodes ``pending`` again (retry), in the order they were accepted."""
    failed = await store.episodes(group_id, status=EpisodeStatus.FAILED, limit=ALL, newest_first=False)
    again = [e.model_copy(update={"status": EpisodeStatus.PENDING, "error": None}) for e in failed]
    again.sort(key=lambda e: (e.created_at, e.uuid))
    for episode in again:
        await store.save_episode(episode)
    return again


async def pending_episodes(store: IngestStore, group_id: str) -> list[Episode]:
    """The group's pending episodes in the order they were accepted."""
    pending = await store.episodes(group_id, status=EpisodeStatus.PENDING, limit=ALL, newest_first=False)
    return sorted(pending, key=lambda e: (e.created_at, e.uuid))
