"""LangChain over the graph (``pip install 'epigraph[langchain]'``): a chat history and a retriever.

- :class:`EpigraphChatMessageHistory` (a ``BaseChatMessageHistory``): each message added becomes an
  episode of the group, ingested as it arrives; the messages read back are the group's episodes in
  order, as ``HumanMessage`` / ``AIMessage``. Use it with ``RunnableWithMessageHistory``.
- :class:`EpigraphRetriever` (a ``BaseRetriever``): the facts a search finds, each a ``Document``
  whose metadata carries the fact's id, validity window and source episodes; ``as_of`` retrieves the
  facts that held at that time.

The graph is asynchronous, so both are too: ``await history.aget_messages()``, ``aadd_messages``,
``aclear``; ``await retriever.ainvoke(query)``. The synchronous methods raise a
:class:`~epigraph.errors.UsageError` naming the asynchronous one (as LangChain's async-only stores do)::

    async with KnowledgeGraph() as kg:
        history = EpigraphChatMessageHistory(kg, "alice")
        await history.aadd_messages([HumanMessage("I moved to Berlin in May.")])
        docs = await EpigraphRetriever(kg=kg, group_id="alice").ainvoke("where does the user live?")
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForRetrieverRun, CallbackManagerForRetrieverRun
from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.documents import Document
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict

from ..client import KnowledgeGraph
from ..errors import InputError, UsageError
from ..graph.model import Episode, EpisodeKind, Fact, to_utc, utc_now
from ..graph.temporal import start_unknown
from ..search import FactResult
from .memory import GroupMemory

HUMAN = "user"
AI = "assistant"


def _async_only(method: str) -> UsageError:
    return UsageError(f"the epigraph graph is asynchronous: use `await {method}` instead")


class EpigraphChatMessageHistory(BaseChatMessageHistory):
    """A conversation kept as the episodes of one group.

    A message is stored as an episode spoken by its ``name`` (for a ``HumanMessage``; default
    ``human_name``) or by ``ai_name`` (an ``AIMessage``), dated by ``additional_kwargs["reference_time"]``
    when it has one (the messages read back carry theirs there), else when it is added (each one later
    than the one before, so the order holds), with ``source`` as the conversation it belongs to (a chain
    key: the conversation's summary follows it). Reading returns the group's latest ``window`` episodes.
    Only human and AI messages are memory: any other kind (system, tool) raises InputError and
    nothing of that call is stored.
    """

    def __init__(
        self,
        kg: KnowledgeGraph,
        group_id: str,
        *,
        source: str = "",
        human_name: str = HUMAN,
        ai_name: str = AI,
        window: int = 100,
    ) -> None:
        if human_name == ai_name:
            raise UsageError(
                f"human_name and ai_name must differ (both {ai_name!r}): they tell messages apart"
            )
        self.memory = GroupMemory(kg, group_id)
        self.source = source
        self.human_name = human_name
        self.ai_name = ai_name
        self.window = window
        self._last: datetime | None = None

    @property  # LangChain declares it a field: here it is read from the graph
    def messages(self) -> list[BaseMessage]:  # type: ignore[override]
        raise _async_only("history.aget_messages()")

    def add_messages(self, messages: Sequence[BaseMessage]) -> None:
        raise _async_only("history.aadd_messages(messages)")

    def clear(self) -> None:
        raise _async_only("history.aclear()")

    async def aget_messages(self) -> list[BaseMessage]:
        return [self._message(e) for e in await self.memory.episodes(limit=self.window)]

    async def aadd_messages(self, messages: Sequence[BaseMessage]) -> None:
        """Ingest each message in turn (all are checked first: one of another kind, or with a
        ``reference_time`` that is no time, stores none)."""
        checked = [(self._speaker(m, i), self._given_time(m, i)) for i, m in enumerate(messages)]
        for message, (speaker, when) in zip(messages, checked, strict=True):
            await self.memory.remember(
                str(message.text),
                reference_time=when or self._next_time(),
                speaker=speaker,
                source=self.source,
            )

    async def aclear(self) -> None:
        """Remove the messages read back (the latest ``window``) and what only they supported."""
        for episode in await self.memory.episodes(limit=self.window):
            await self.memory.forget(episode.uuid)

    def _speaker(self, message: BaseMessage, index: int) -> str:
        if isinstance(message, AIMessage):
            return self.ai_name
        if isinstance(message, HumanMessage):
            name = message.name or self.human_name
            if name == self.ai_name:
                raise InputError(f"messages[{index}]: a HumanMessage named {name!r}, the AI's name")
            return name
        raise InputError(
            f"messages[{index}]: a {type(message).__name__}: the history keeps Human and AI messages only"
        )

    @staticmethod
    def _given_time(message: BaseMessage, index: int) -> datetime | None:
        """The message's ``additional_kwargs["reference_time"]`` (what reading back sets), if any."""
        given = message.additional_kwargs.get("reference_time")
        if given is None:
            return None
        try:
            when: datetime = to_utc(given)
        except ValueError:
            raise InputError(
                f"messages[{index}]: reference_time {given!r} is not an ISO date or time"
            ) from None
        return when

    def _next_time(self) -> datetime:
        now = utc_now()
        if self._last is not None and now <= self._last:
            now = self._last + timedelta(microseconds=1)
        self._last = now
        return now

    def _message(self, episode: Episode) -> BaseMessage:
        speaker = episode.name
        text = episode.content
        if episode.kind == EpisodeKind.MESSAGE and speaker and text.startswith(f"{speaker}: "):
            text = text[len(speaker) + 2 :]
        meta = {"episode_uuid": episode.uuid, "reference_time": episode.reference_time.isoformat()}
        if speaker == self.ai_name:
            return AIMessage(content=text, additional_kwargs=meta)
        name = speaker if speaker and speaker != self.human_name else None
        return HumanMessage(content=text, name=name, additional_kwargs=meta)


def fact_document(result: FactResult) -> Document:
    """A fact as a LangChain document: its text, and its id, window and provenance as metadata."""
    fact: Fact = result.fact
    return Document(
        page_content=fact.text,
        id=fact.uuid,
        metadata={
            "uuid": fact.uuid,
            "group_id": fact.group_id,
            "relation": fact.relation,
            "source": result.source_name,
            "target": result.target_name,
            "valid_at": _iso(fact.valid_at),
            "invalid_at": _iso(fact.invalid_at),
            "stated_at": _iso(fact.stated_at),
            "start_unknown": start_unknown(fact),
            "expired_at": _iso(fact.expired_at),
            "episodes": list(fact.episodes),
            "score": result.score,
        },
    )


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


class EpigraphRetriever(BaseRetriever):
    """The facts of a group that a hybrid search finds for the query, best first, as documents.

    ``k``: how many; ``as_of``: the facts that held at that time (default: now); ``include_retired``:
    facts no longer true too (with their windows)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    kg: KnowledgeGraph
    group_id: str
    k: int = 10
    as_of: datetime | str | None = None
    include_retired: bool = False

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        raise _async_only("retriever.ainvoke(query)")

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        found = await GroupMemory(self.kg, self.group_id).search(
            query, limit=self.k, as_of=self.as_of, include_retired=self.include_retired
        )
        return [fact_document(r) for r in found.facts]
