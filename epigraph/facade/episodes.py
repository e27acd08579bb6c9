"""A group's episodes on its handle, one namespace that is also called: ``await kg.episodes(since=...)``
lists them (newest first), ``await kg.episodes.get(uuid)`` reads one with its status, error and report.
One name for the singular and the plural of the same record (the handle keeps to 25 public names:
``tests/facade/test_group_handle.py``); what writes an episode is the handle's (``add_episode``,
``remove_episode``, ``retry_failed``): the queue's doors."""

from __future__ import annotations

from datetime import datetime

from ..errors import EpisodeNotFound
from ..graph.model import Episode, EpisodeStatus
from ..ingestion.runner import ALL
from .parts import Graph, opened


class Episodes:
    """``kg.episodes``: called, the group's episodes in a window (:meth:`__call__`); :meth:`get`, one."""

    def __init__(self, graph: Graph, group_id: str) -> None:
        self._graph, self.group_id = graph, group_id

    async def __call__(
        self,
        *,
        since: datetime | None = None,
        until: datetime | None = None,
        status: EpisodeStatus | None = None,
        limit: int | None = 100,
    ) -> list[Episode]:
        """The group's episodes whose reference time is in ``[since, until)``, newest first (``status``:
        only those; ``limit`` None: every one)."""
        g = await opened(self._graph)
        return await g.store.episodes(
            self.group_id, since=since, until=until, status=status, limit=ALL if limit is None else limit
        )

    async def get(self, uuid: str) -> Episode:
        """One episode with its status, error and report; :class:`~epigraph.errors.EpisodeNotFound`
        when the group has none so named (``kg.episode(uuid)`` before 0.2)."""
        found = await (await opened(self._graph)).store.get_episode(self.group_id, uuid)
        if found is None:
            raise EpisodeNotFound(uuid, self.group_id)
        return found
