"""Same id, other content: an episode refused at the queue's door (``errors.EpisodeConflict``), never
dropped.

An episode's uuid is keyed by its group, content and reference time, or by the id its caller gave
(``graph.model.episode_uuid``). Keyed by content, the same uuid is the same episode: a duplicate, skipped
as done. Keyed by an id, the same uuid may come with other content: that is a conflict. Every door asks
:class:`ConflictCheck` before anything of a call is stored (``Ingestor``: ``add_episode(s)``, ``ingest``,
``accept``, ``process``; the CLI over a whole file first), so a conflict stores nothing of the call.
The content compared is the content as it would be stored (redacted first when the policy is on, so a
redacted duplicate is still a duplicate).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field

from ..episodes.inputs import EpisodeInput
from ..errors import EpisodeConflict
from ..graph.model import Episode, episode_uuid
from ..graph.store import GraphLookups

Shape = Callable[[Episode], Awaitable[Episode]]
"""An episode as the door would store it (``Ingestor``: personal data replaced, when the policy is on)."""


async def as_given(episode: Episode) -> Episode:
    return episode


def keyed_by_id(episode: Episode) -> bool:
    """Whether ``episode``, as built from its input (before redaction), is keyed by its caller's id."""
    return episode.uuid != episode_uuid(episode.group_id, episode.content_hash, episode.reference_time)


@dataclass
class ConflictCheck:
    """The episodes of one call (or one input file), checked one by one: an id taken, in the store or
    earlier in the call, by other content is an :class:`EpisodeConflict` (returned, not raised)."""

    store: GraphLookups
    shape: Shape = as_given
    _seen: dict[str, tuple[str, int | None]] = field(default_factory=dict)
    """uuid -> the content hash and line of the first episode of the call keyed by it (not refused)."""

    async def refuse(self, items: Iterable[EpisodeInput]) -> None:
        """Raise the first conflict of ``items`` (a call's whole input, checked before it is stored)."""
        for item in items:
            if (conflict := await self.input(item)) is not None:
                raise conflict

    async def input(self, item: EpisodeInput) -> EpisodeConflict | None:
        """The conflict of an input, if any."""
        return await self.episode(item.to_episode(), episode_id=item.episode_id, line=item.line)

    async def episode(
        self, episode: Episode, *, episode_id: str | None = None, line: int | None = None
    ) -> EpisodeConflict | None:
        """The conflict of ``episode`` as built from its input (before redaction), if any."""
        if not keyed_by_id(episode):
            return None
        group, uuid = episode.group_id, episode.uuid
        first = self._seen.get(uuid)
        if first is not None:  # earlier in the call: checked against the store then
            if first[0] == episode.content_hash:
                return None
            return EpisodeConflict(
                group, uuid, episode_id=episode_id, line=line, in_input=True, earlier_line=first[1]
            )
        stored = await self.store.get_episode(group, uuid)
        if stored is not None and stored.content_hash != (await self.shape(episode)).content_hash:
            return EpisodeConflict(group, uuid, episode_id=episode_id, line=line)  # not taken up here
        self._seen[uuid] = (episode.content_hash, line)
        return None
