"""The big picture of a group: its communities and its conversations' running summaries
(:mod:`epigraph.overview`), as ``kg.overview`` (or ``kg.group("alice").overview``). They need a store
with the derived-view roles (``graph.store.OverviewStore``): :class:`~epigraph.errors.StoreRoleMissing`
otherwise."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from ..errors import ConversationNotFound
from ..graph.roles import role
from ..graph.store import OverviewStore
from ..overview import (
    ChainView,
    Communities,
    CommunityUpdate,
    CommunityView,
    Conversation,
    Conversations,
    ConversationUpdate,
)
from .parts import Graph, opened


class Overview:
    """A group's communities and conversation summaries: read, built, brought up to date."""

    def __init__(self, graph: Graph, group_id: str) -> None:
        self._graph, self.group_id = graph, group_id

    async def _communities(self) -> Communities:
        g = await opened(self._graph)
        return Communities(
            role(g.store, OverviewStore, feature="communities"), g.llm, g.embedder, g.overview_options
        )

    async def _conversations(self) -> Conversations:
        g = await opened(self._graph)
        return Conversations(
            role(g.store, OverviewStore, feature="conversations"), g.llm, g.embedder, g.overview_options
        )

    async def communities(
        self, *, as_of: datetime | str | None = None, known_at: datetime | str | None = None
    ) -> list[CommunityView]:
        """The group's communities, largest first. With ``as_of`` (event time) or ``known_at`` (system
        time): the clusters of the facts that held then, named by the stored communities they continue
        (see :mod:`epigraph.overview.communities`)."""
        return await (await self._communities()).view(self.group_id, as_of=as_of, known_at=known_at)

    async def build_communities(self) -> CommunityUpdate:
        """Cluster the group's current facts from scratch and name every community that changed (ids
        of communities that continue are kept). Needs an LLM."""
        return await (await self._communities()).update(self.group_id, rebuild=True)

    async def update_communities(self) -> CommunityUpdate:
        """Bring the communities up to date with the facts added or retired since (incrementally: only
        communities whose members changed are summarized again). Needs an LLM."""
        return await (await self._communities()).update(self.group_id)

    async def conversations(self) -> list[ChainView]:
        """The group's conversations (episodes sharing a source), each with its summary if it has one."""
        return await (await self._conversations()).chains(self.group_id)

    async def conversation(self, key: str, *, limit: int = 50) -> Conversation:
        """One conversation: its running summary and its latest ``limit`` episodes in order (previous /
        next). Raises :class:`~epigraph.errors.ConversationNotFound` for a key no episode has."""
        found = await (await self._conversations()).conversation(self.group_id, key, limit=limit)
        if found is None:
            raise ConversationNotFound(key, self.group_id)
        return found

    async def update_conversations(
        self, keys: Sequence[str] | None = None, *, rebuild: bool = False
    ) -> list[ConversationUpdate]:
        """Fold new episodes into the summaries of the conversations ``keys`` (default: every one with
        episodes not folded in yet); ``rebuild``: from the start. Needs an LLM."""
        wanted = None if keys is None else list(keys)
        return await (await self._conversations()).update_all(self.group_id, wanted, rebuild=rebuild)
