"""KnowledgeGraph: the one object users hold. It wires a store, an LLM, an embedder and options.

This is the only module that picks concrete backends (the embedded SQLite store or Neo4j, the
OpenAI-compatible client, the embedder named by the settings). Everything it exposes delegates to the
pipeline (``Ingestor``) and to ``graph.search``::

    async with KnowledgeGraph() as kg:                     # ./epigraph.db, settings from EPIGRAPH_*
        await kg.add_episode("Alice: I moved to Lisbon", reference_time=datetime.now(UTC))
        print(await kg.search("where does Alice live?"))
        print(await kg.entity("Alice"))

Every part can be injected instead (``store=``, ``llm=``, ``embedder=``), which is how tests run it
with ``ScriptedLLM`` and ``HashEmbedder``. Without an LLM the graph is read-only: search and
exploration work, ingestion raises :class:`~epigraph.errors.ConfigError`. With ``EPIGRAPH_LLM=local``
(``Settings(llm_local=True)``) entering the graph starts the local model (``epigraph.local_model``), or
reuses a running one, and leaving it stops a server it started when no other program uses it.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Coroutine, Iterable
from contextlib import aclosing
from datetime import datetime
from typing import Any, Literal, cast, overload

from .ask import Answer, AskChunk, AskMode, AskOptions, ask_mode, collect, dialog
from .config import Settings
from .embed import Embedder, embedder_from_settings
from .errors import ConfigError
from .facade.corrections import CorrectionMethods
from .facade.overview import OverviewMethods
from .facade.reading import ReadingMethods
from .facade.transfer import TransferMethods
from .graph.derived import chain_key
from .graph.store import GraphStore
from .ingestion.claims import Leases
from .ingestion.events import EpisodeResult, ProgressEvent
from .ingestion.ingestor import Ingestor, Item, RemovalResult
from .ingestion.pacing import PacedLLM, PacedStore, Priority
from .local_model import LocalModel
from .overview import OverviewOptions, Upkeep
from .pipeline.options import IngestOptions, Mode, for_small_model
from .prompts.protocol import LLM
from .publish.producer import EpisodeProducer, Published


def store_from_settings(settings: Settings) -> GraphStore:
    """The store the settings name: Neo4j when ``neo4j_uri`` is set, else the embedded SQLite file."""
    if settings.neo4j_uri:
        from .graph.neo4j import Neo4jStore

        password = settings.neo4j_password.get_secret_value() if settings.neo4j_password else None
        return Neo4jStore(
            uri=settings.neo4j_uri,
            user=settings.neo4j_user,
            password=password,
            database=settings.neo4j_database,
        )
    from .graph.embedded import EmbeddedStore

    return EmbeddedStore(settings.db_path, create=settings.db_create)


def llm_from_settings(settings: Settings) -> LLM | None:
    """The OpenAI-compatible client the settings describe, or None when no LLM is configured."""
    if not settings.llm_configured:
        return None
    from .llm import OpenAIChat

    return OpenAIChat.from_settings(settings)


def _local_model(settings: Settings) -> LocalModel | None:
    """The local model when the settings ask for it (``EPIGRAPH_LLM=local``), else None."""
    return LocalModel(settings) if settings.llm_local else None


class KnowledgeGraph(ReadingMethods, OverviewMethods, CorrectionMethods, TransferMethods):
    """A temporal knowledge graph: ingest episodes, search, explore, ask. An async context manager.

    Its method groups live in :mod:`epigraph.facade`: reading (search, entities, pictures:
    :class:`~epigraph.facade.reading.ReadingMethods`), communities and conversations
    (:class:`~epigraph.facade.overview.OverviewMethods`), corrections by hand
    (:class:`~epigraph.facade.corrections.CorrectionMethods`), export and load
    (:class:`~epigraph.facade.transfer.TransferMethods`)."""

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        store: GraphStore | None = None,
        llm: LLM | None = None,
        embedder: Embedder | None = None,
        options: IngestOptions | None = None,
        group_id: str | None = None,
        overview: OverviewOptions | None = None,
    ) -> None:
        """``overview``: how communities and conversation summaries are built, and whether bulk
        ingestion keeps them up to date (:class:`~epigraph.overview.OverviewOptions`)."""
        self.settings = settings if settings is not None else Settings.from_env()
        self.group_id = group_id or self.settings.group_id
        self.store = store if store is not None else store_from_settings(self.settings)
        self.embedder = embedder if embedder is not None else embedder_from_settings(self.settings)
        self._local = _local_model(self.settings) if llm is None else None
        self._lease: str | None = None
        self.llm = llm if llm is not None or self._local else llm_from_settings(self.settings)
        self._owns_llm = llm is None and self.llm is not None
        self.options = options or IngestOptions()
        if self._local is not None:  # the 1.5B model's own options (``pipeline.options.for_small_model``)
            self.options = for_small_model(options)
        self._ingestor: Ingestor | None = None
        self.priority = Priority()
        """Reads first: what the ingestion queue is paced by (idle, it never waits: the server marks the
        reads someone waits for with ``priority.foreground()``)."""
        self._producer: EpisodeProducer | None = None
        self._opened = False
        self.overview = overview or OverviewOptions()

    # --- lifecycle ------------------------------------------------------------------------------
    async def open(self) -> KnowledgeGraph:
        if not self._opened:
            await self.store.setup(embedding_dim=self.embedder.dim)
            self._opened = True
        if self._local is not None and self.llm is None:
            await self._use_local_model(self._local)
        return self

    async def _use_local_model(self, local: LocalModel) -> None:
        """Start the local model's server, or reuse the one already running; point the LLM at it."""
        from .llm import OpenAIChat

        state, self._lease = await asyncio.to_thread(local.acquire)
        self.settings = local.settings_for(state)
        self.llm = OpenAIChat.from_settings(self.settings)
        self._owns_llm = True

    async def close(self) -> None:
        self._opened = False
        await self.store.close()
        if self._producer is not None:
            producer, self._producer = self._producer, None
            await producer.close()
        if self._owns_llm:
            aclose = getattr(self.llm, "aclose", None)
            if aclose is not None:
                await aclose()
        if self._local is not None and self._lease is not None:
            lease, self._lease = self._lease, None
            self.llm, self._owns_llm, self._ingestor = None, False, None  # a new model, a new queue
            await asyncio.to_thread(self._local.release, lease)

    async def __aenter__(self) -> KnowledgeGraph:
        return await self.open()

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    @property
    def ingestor(self) -> Ingestor:
        """The graph's one ingestion queue: every door (these methods, the server, MCP, the Kafka worker)
        goes through it. Built once the model is known (the local model: when the graph is opened), over
        the store and model paced by :attr:`priority`; it ends each batch with the conversations and
        communities brought up to date (``overview.Upkeep``). Without an LLM it accepts episodes but
        running one raises ConfigError."""
        if self._ingestor is None:
            if self._local is not None and self.llm is None:
                raise ConfigError("the local model starts when the graph is opened: open it first")
            store = cast(GraphStore, PacedStore(self.store, self.priority))
            llm = PacedLLM(self.llm, self.priority) if self.llm is not None else None
            leases = Leases(seconds=self.settings.claim_seconds)
            upkeep = Upkeep(self.embedder, self.overview)
            self._ingestor = Ingestor(
                store, llm, self.embedder, self.options, leases=leases, after_batch=upkeep
            )
        return self._ingestor

    # --- ingestion ------------------------------------------------------------------------------
    async def add_episode(
        self,
        content: str,
        *,
        reference_time: datetime,
        group_id: str | None = None,
        kind: str = "message",
        name: str = "",
        source_description: str = "",
        episode_id: str | None = None,
        speaker: str | None = None,
        mode: Mode | None = None,
        raise_on_failure: bool = True,
    ) -> EpisodeResult:
        """Ingest one episode; returns the episode, its entities, facts, invalidations and report."""
        await self.open()
        return await self.ingestor.add_episode(
            content,
            group_id=group_id or self.group_id,
            reference_time=reference_time,
            kind=kind,
            name=name,
            source_description=source_description,
            episode_id=episode_id,
            speaker=speaker,
            mode=mode,
            raise_on_failure=raise_on_failure,
        )

    async def add_episodes(self, items: Iterable[Item], *, mode: Mode | None = None) -> list[EpisodeResult]:
        """Bulk ingestion: groups concurrently, each group's episodes in order; failures come back as
        results with ``ok == False``."""
        await self.open()
        return await self.ingestor.add_episodes(self._grouped(items), mode=mode)

    async def ingest(
        self, items: Iterable[Item], *, mode: Mode | None = None
    ) -> AsyncIterator[ProgressEvent]:
        """Like :meth:`add_episodes`, as an async stream of typed progress events; the last ones, one per
        group, are :class:`~epigraph.overview.OverviewUpdated` (conversations and communities brought up
        to date, with their cost)."""
        await self.open()
        async for event in self.ingestor.ingest(self._grouped(items), mode=mode):
            yield event

    async def enqueue(self, items: Iterable[Item]) -> list[Published]:
        """Hand episodes to ``epigraph worker`` processes through Kafka (``settings.kafka_bootstrap``,
        topic ``settings.kafka_topic``), keyed by group so each group stays in order; returns once Kafka
        acknowledged every one (partition and offset). All are validated first: a malformed episode
        raises InputError and none of them is published. Without a bootstrap they are ingested here, as
        by :meth:`add_episodes`, and each ``Published`` carries its ``result``."""
        if not self.settings.kafka_bootstrap:
            results = await self.add_episodes(items)
            return [Published(r.episode.uuid, r.episode.group_id, result=r) for r in results]
        if self._producer is None:
            self._producer = EpisodeProducer(self.settings.kafka_bootstrap, self.settings.kafka_topic)
        return await self._producer.publish(self._grouped(items))

    async def remove_episode(self, uuid: str, *, group_id: str | None = None) -> RemovalResult:
        """Delete an episode: facts only it supported go, facts it retired come back, summaries refresh."""
        await self.open()
        group = group_id or self.group_id
        episode = await self.store.get_episode(group, uuid)
        removed = await self.ingestor.remove_episode(group, uuid)
        if episode is not None and chain_key(episode.source_description) is not None:
            await self._conversations().reset(group, episode.source_description)
        return removed

    async def retry_failed(
        self, *, group_id: str | None = None, mode: Mode | None = None
    ) -> list[EpisodeResult]:
        await self.open()
        return await self.ingestor.retry_failed(group_id or self.group_id, mode=mode)

    def _grouped(self, items: Iterable[Item]) -> Iterable[Item]:
        for item in items:
            if isinstance(item, dict) and not item.get("group_id") and not item.get("group"):
                yield {**item, "group_id": self.group_id}
            else:
                yield item

    # --- asking ---------------------------------------------------------------------------------
    @overload
    def ask(
        self,
        question: str,
        *,
        as_of: datetime | str | None = None,
        known_at: datetime | str | None = None,
        streaming: Literal[True] = True,
        group_id: str | None = None,
        options: AskOptions | None = None,
        mode: AskMode | None = None,
    ) -> AsyncIterator[AskChunk]: ...

    @overload
    def ask(
        self,
        question: str,
        *,
        as_of: datetime | str | None = None,
        known_at: datetime | str | None = None,
        streaming: Literal[False],
        group_id: str | None = None,
        options: AskOptions | None = None,
        mode: AskMode | None = None,
    ) -> Coroutine[Any, Any, Answer]: ...

    def ask(
        self,
        question: str,
        *,
        as_of: datetime | str | None = None,
        known_at: datetime | str | None = None,
        streaming: bool = True,
        group_id: str | None = None,
        options: AskOptions | None = None,
        mode: AskMode | None = None,
    ) -> AsyncIterator[AskChunk] | Coroutine[Any, Any, Answer]:
        """Answer ``question`` from the graph, citing the facts (with their validity windows) and episodes
        used. ``as_of``: answer as of that time (its "now"); ``known_at``: from what the graph knew then.

        ``mode``: ``"context"`` (one context assembled without the model, one answering call),
        ``"agent"`` (the bounded agent: planned lookups, then the answer) or ``"auto"`` (the context
        first, the agent when its answer declares that nothing shown answers the question); None:
        :data:`epigraph.ask.DEFAULT_MODE` (``"auto"``). See :mod:`epigraph.ask.options`.

        ``streaming=True``: ``async for chunk in kg.ask(q)`` yields thought / action / observation /
        answer / error chunks as they happen (the last one carries citations, usage and latency);
        ``streaming=False``: ``await kg.ask(q, streaming=False)`` returns one :class:`Answer` with the
        same content. See :mod:`epigraph.ask`.
        """
        ask_mode(mode)  # a bad mode raises here, before anything runs
        chunks = self._ask(question, as_of, known_at, streaming, group_id, options, mode)
        return chunks if streaming else collect(question, chunks)

    async def _ask(
        self,
        question: str,
        as_of: datetime | str | None,
        known_at: datetime | str | None,
        streaming: bool,
        group_id: str | None,
        options: AskOptions | None,
        mode: AskMode | None,
    ) -> AsyncIterator[AskChunk]:
        await self.open()
        if self.llm is None:
            raise ConfigError(
                "ask needs an LLM: set EPIGRAPH_LLM_MODEL and EPIGRAPH_LLM_BASE_URL (or "
                "EPIGRAPH_LLM_API_KEY), or pass llm= to KnowledgeGraph"
            )
        chunks = dialog(
            self.store, self.embedder, self.llm, group_id or self.group_id, question,
            as_of=as_of, known_at=known_at, options=options, stream_answer=streaming, mode=mode,
        )  # fmt: skip
        async with aclosing(chunks) as dialog_chunks:
            async for chunk in dialog_chunks:
                yield chunk
