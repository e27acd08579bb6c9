"""One group of a :class:`~epigraph.client.KnowledgeGraph`, as the framework adapters use it.

Every adapter (a chat history, a retriever, a LangGraph store, an agent's tools) works on one group:
it remembers episodes there, searches and asks there, corrects facts there. :class:`GroupMemory` is
that pairing, and the one place the adapters call the graph, so they share a single reading of its
surface.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from ..ask import Answer
from ..client import KnowledgeGraph
from ..episodes.events import EpisodeResult
from ..errors import EpisodeNotFound
from ..facade.group import GroupHandle
from ..graph.corrections import Correction
from ..graph.model import Episode, EpisodeKind, check_group_id
from ..graph.roles import role
from ..graph.store_roles import WholeGroups
from ..ingestion.ingestor import RemovalResult
from ..search import SearchResults

AGENT_AUTHOR = "agent:assistant"
"""Who corrections made through an adapter are recorded as, unless the adapter names someone else."""


@dataclass(frozen=True)
class GroupMemory:
    """A graph and one of its groups. ``author``: whom corrections are recorded as (``kind:name``, or a
    bare name for a person). The graph is opened on first use; its owner closes it."""

    kg: KnowledgeGraph
    group_id: str
    author: str = AGENT_AUTHOR

    def __post_init__(self) -> None:
        check_group_id(self.group_id)

    @property
    def group(self) -> GroupHandle:
        """The graph's handle of the group."""
        return self.kg.group(self.group_id)

    async def remember(
        self,
        content: str,
        *,
        reference_time: datetime,
        kind: EpisodeKind = EpisodeKind.MESSAGE,
        speaker: str | None = None,
        source: str = "",
        episode_id: str | None = None,
        name: str = "",
    ) -> EpisodeResult:
        """Ingest one episode into the group now (it raises when ingestion fails)."""
        return await self.group.add_episode(
            content,
            reference_time=reference_time,
            kind=kind.value,
            speaker=speaker,
            source_description=source,
            episode_id=episode_id,
            name=name,
        )

    async def forget(self, episode_uuid: str) -> RemovalResult:
        """Remove an episode: facts only it supported go, facts it retired come back."""
        return await self.group.remove_episode(episode_uuid)

    async def episode(self, uuid: str) -> Episode | None:
        try:
            return await self.group.episodes.get(uuid)
        except EpisodeNotFound:
            return None

    async def episodes(self, *, limit: int) -> list[Episode]:
        """The group's latest ``limit`` episodes, oldest first (the group's episode order)."""
        newest_first = await self.group.episodes(limit=limit)
        return newest_first[::-1]

    async def search(
        self,
        query: str,
        *,
        limit: int,
        as_of: datetime | str | None = None,
        include_retired: bool = False,
    ) -> SearchResults:
        return await self.group.search(query, limit=limit, as_of=as_of, include_retired=include_retired)

    async def ask(self, question: str, *, as_of: datetime | str | None = None) -> Answer:
        return await self.group.ask(question, as_of=as_of, streaming=False)

    async def retire_fact(self, uuid: str, *, at: datetime | str | None, reason: str) -> Correction:
        return await self.group.corrections.retire_fact(uuid, at=at, author=self.author, reason=reason)

    async def edit_fact(self, uuid: str, *, text: str, reason: str) -> Correction:
        return await self.group.corrections.edit_fact(uuid, text=text, author=self.author, reason=reason)


async def groups_of(kg: KnowledgeGraph) -> list[str]:
    """Every group of the graph, sorted."""
    await kg.open()
    return await role(kg.store, WholeGroups, feature="listing groups").groups()
