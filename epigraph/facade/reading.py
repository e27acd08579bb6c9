"""Reading the graph: search, an entity's view, pictures of its neighbourhood, episodes and counts, as
methods of :class:`~epigraph.client.KnowledgeGraph` (all through :mod:`epigraph.graph.search`,
:mod:`epigraph.explore` and the store's Protocol)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime

from ..explore import GraphView
from ..explore.gather import entity_graph, search_graph
from ..graph.model import Episode, EpisodeStatus
from ..graph.search import DEFAULT, EntityView, SearchConfig, SearchResults, entity_view, search
from ..graph.store import StoreStats
from .parts import GraphParts


class ReadingMethods(GraphParts):
    """Search, entities, pictures, episodes and counts of the graph's group (or the one named)."""

    async def search(
        self,
        query: str,
        *,
        group_ids: str | Sequence[str] | None = None,
        config: SearchConfig = DEFAULT,
        as_of: datetime | str | None = None,
        known_at: datetime | str | None = None,
        include_retired: bool = False,
        limit: int | None = None,
        labels: str | Iterable[str] | None = None,
        relations: str | Iterable[str] | None = None,
        center: str | Sequence[str] | None = None,
        during: tuple[datetime | str | None, datetime | str | None] | None = None,
    ) -> SearchResults:
        """Hybrid search of the graph's group (or ``group_ids``); by default only facts valid now.

        ``as_of``: facts true then (event time); ``known_at``: as the graph knew it then (system time);
        ``include_retired``: every fact, with its interval; ``labels``: entities with one of these labels
        (facts: an endpoint with one); ``relations``: facts with one of these relations; ``center``: entity
        uuids or names to rank around; ``during=(start, end)``: facts valid at some time in it, episodes
        of it; ``limit``: results per kind. See :func:`epigraph.graph.search.search`."""
        await self.open()
        return await search(
            self.store,
            self.embedder,
            query,
            group_ids=group_ids or self.group_id,
            config=config,
            as_of=as_of,
            known_at=known_at,
            include_retired=include_retired,
            limit=limit,
            labels=labels,
            relations=relations,
            center=center,
            during=during,
        )

    async def entity(
        self, name_or_uuid: str, *, as_of: datetime | str | None = None, group_id: str | None = None
    ) -> EntityView:
        """Summary, aliases, current facts, retired history and mentioning episodes of one entity; with
        ``as_of``, as it was then (the facts current then, the history by then, the episodes said by
        then)."""
        await self.open()
        group = group_id or self.group_id
        return await entity_view(self.store, group, name_or_uuid, embedder=self.embedder, as_of=as_of)

    async def subgraph(
        self, name_or_uuid: str, *, depth: int = 1, include_retired: bool = False, group_id: str | None = None
    ) -> GraphView:
        """The facts around an entity as an interactive view (a notebook cell, ``.save("x.html")``; a
        static picture with ``.save("x.svg")``). Retired facts are embedded for the time slider and drawn
        at first only with ``include_retired``."""
        await self.open()
        return await entity_graph(self.store, group_id or self.group_id, name_or_uuid, depth=depth,
                                  include_retired=include_retired, embedder=self.embedder)  # fmt: skip

    async def explore(self, query: str, *, group_id: str | None = None, limit: int = 20) -> GraphView:
        """What a search finds (retired facts too, dashed) and its neighbourhood, as an interactive view."""
        await self.open()
        return await search_graph(self.store, self.embedder, group_id or self.group_id, query, limit=limit)

    async def episodes(
        self,
        *,
        group_id: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        status: EpisodeStatus | None = None,
        limit: int = 100,
    ) -> list[Episode]:
        await self.open()
        return await self.store.episodes(
            group_id or self.group_id, since=since, until=until, status=status, limit=limit
        )

    async def stats(self, *, group_id: str | None = None) -> StoreStats:
        await self.open()
        return await self.store.stats(group_id or self.group_id)
