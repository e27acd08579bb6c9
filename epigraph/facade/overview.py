"""The big picture of a graph: its communities and its conversations' running summaries
(:mod:`epigraph.overview`), as methods of :class:`~epigraph.client.KnowledgeGraph`."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from ..errors import ConversationNotFound
from ..overview import (
    ChainView,
    Communities,
    CommunityUpdate,
    CommunityView,
    Conversation,
    Conversations,
    ConversationUpdate,
)
from .parts import GraphParts


class OverviewMethods(GraphParts):
    """Communities and conversation summaries: read, built, brought up to date."""

    def _communities(self) -> Communities:
        return Communities(self.store, self.llm, self.embedder, self.overview)

    def _conversations(self) -> Conversations:
        return Conversations(self.store, self.llm, self.embedder, self.overview)

    async def communities(
        self,
        *,
        as_of: datetime | str | None = None,
        known_at: datetime | str | None = None,
        group_id: str | None = None,
    ) -> list[CommunityView]:
        """The group's communities, largest first. With ``as_of`` (event time) or ``known_at`` (system
        time): the clusters of the facts that held then, named by the stored communities they continue
        (see :mod:`epigraph.overview.communities`)."""
        await self.open()
        return await self._communities().view(group_id or self.group_id, as_of=as_of, known_at=known_at)

    async def build_communities(self, *, group_id: str | None = None) -> CommunityUpdate:
        """Cluster the group's current facts from scratch and name every community that changed (ids
        of communities that continue are kept). Needs an LLM."""
        await self.open()
        return await self._communities().update(group_id or self.group_id, rebuild=True)

    async def update_communities(self, *, group_id: str | None = None) -> CommunityUpdate:
        """Bring the communities up to date with the facts added or retired since (incrementally: only
        communities whose members changed are summarized again). Needs an LLM."""
        await self.open()
        return await self._communities().update(group_id or self.group_id)

    async def chains(self, *, group_id: str | None = None) -> list[ChainView]:
        """The group's conversations (episodes sharing a source), each with its summary if it has one."""
        await self.open()
        return await self._conversations().chains(group_id or self.group_id)

    async def conversation(self, key: str, *, group_id: str | None = None, limit: int = 50) -> Conversation:
        """One conversation: its running summary and its latest ``limit`` episodes in order (previous /
        next). Raises :class:`~epigraph.errors.ConversationNotFound` for a key no episode has."""
        await self.open()
        group = group_id or self.group_id
        found = await self._conversations().conversation(group, key, limit=limit)
        if found is None:
            raise ConversationNotFound(key, group)
        return found

    async def update_conversations(
        self, keys: Sequence[str] | None = None, *, group_id: str | None = None, rebuild: bool = False
    ) -> list[ConversationUpdate]:
        """Fold new episodes into the summaries of the conversations ``keys`` (default: every one with
        episodes not folded in yet); ``rebuild``: from the start. Needs an LLM."""
        await self.open()
        wanted = None if keys is None else list(keys)
        return await self._conversations().update_all(group_id or self.group_id, wanted, rebuild=rebuild)
