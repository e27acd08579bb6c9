"""KnowledgeGraph: the one object users hold. It wires a store, an LLM, an embedder and options.

This is the only module that picks concrete backends (the embedded SQLite store or Neo4j, the
OpenAI-compatible client, the embedder named by the settings). Everything it exposes delegates to the
pipeline (``Ingestor``) and to ``epigraph.search``::

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
import logging
from collections.abc import Iterable
from dataclasses import replace

from . import tracing
from .config import Settings
from .embed import Embedder, embedder_from_settings
from .errors import ConfigError
from .facade.group import GroupHandle
from .graph.roles import optional
from .graph.store import GraphStore, OverviewStore
from .ingestion.claims import Leases
from .ingestion.ingestor import Ingestor, Item
from .ingestion.pacing import PacedLLM, Priority, paced
from .local_model import LocalModel
from .overview import OverviewOptions, Upkeep
from .pipeline.options import IngestOptions, for_small_model, with_retention
from .privacy.vault import key_of
from .prompts.protocol import LLM
from .publish.producer import EpisodeProducer, Published, Redact
from .webhooks import Webhooks, webhooks_from_settings

log = logging.getLogger("epigraph.ingest")

NO_UPKEEP = (
    "%s has no derived-view roles (graph.store.DerivedViews): ingestion keeps no conversation summaries "
    "or communities up to date after its batches"
)


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

    return EmbeddedStore(settings.db_path, create=settings.db_create, exact_below=settings.exact_below)


def llm_from_settings(settings: Settings) -> LLM | None:
    """The OpenAI-compatible client the settings describe, or None when no LLM is configured."""
    if not settings.llm_configured:
        return None
    from .llm import OpenAIChat

    return OpenAIChat.from_settings(settings)


def _local_model(settings: Settings) -> LocalModel | None:
    """The local model when the settings ask for it (``EPIGRAPH_LLM=local``), else None."""
    return LocalModel(settings) if settings.llm_local else None


class KnowledgeGraph(GroupHandle):
    """A temporal knowledge graph: ingest episodes, search, explore, ask. An async context manager.

    The graph is the handle (:class:`~epigraph.facade.group.GroupHandle`) of its default group
    (``group_id``, default ``EPIGRAPH_GROUP_ID``): ``kg.add_episode``, ``kg.search``, ``kg.entity``,
    ``kg.ask`` and the namespaces ``kg.corrections``, ``kg.overview``, ``kg.transfer`` work on it;
    ``kg.group("alice")`` gives the same methods for another group."""

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
        super().__init__(self, group_id or self.settings.group_id)
        self.store = store if store is not None else store_from_settings(self.settings)
        self.embedder = embedder if embedder is not None else embedder_from_settings(self.settings)
        self._local = _local_model(self.settings) if llm is None else None
        self._lease: str | None = None
        self.llm = llm if llm is not None or self._local else llm_from_settings(self.settings)
        self._owns_llm = llm is None and self.llm is not None
        self.options = options or IngestOptions()
        if self._local is not None:  # the 1.5B model's own options (``pipeline.options.for_small_model``)
            self.options = for_small_model(options)
        if self.settings.redact and not self.options.redact:  # EPIGRAPH_REDACT=1 / --redact
            self.options = replace(self.options, redact=True)
        if options is None and self.settings.in_flight is not None:  # EPIGRAPH_IN_FLIGHT
            self.options = replace(self.options, in_flight=self.settings.in_flight)
        self.options = with_retention(self.options, self.settings.decisions_days)
        self._ingestor: Ingestor | None = None
        self.priority = Priority()
        """Reads first: what the ingestion queue is paced by (idle, it never waits: the server marks the
        reads someone waits for with ``priority.foreground()``)."""
        self._producer: EpisodeProducer | None = None
        self._opened = False
        self.overview_options = overview or OverviewOptions()
        self.webhooks: Webhooks | None = webhooks_from_settings(self.settings)
        """``episode.done`` / ``episode.failed`` posted to ``EPIGRAPH_WEBHOOK_URLS`` (None without them):
        told of every episode the queue runs, never holding it up (``epigraph.webhooks``)."""
        if self.settings.tracing:
            tracing.enable()  # spans to the process's tracer provider (``epigraph.tracing``)

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
        if self.webhooks is not None:
            await self.webhooks.close()
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
        communities brought up to date (``overview.Upkeep``), when the store has the derived-view
        roles (a store with only the core skips it, logged once here at INFO). Without an LLM it
        accepts episodes but running one raises ConfigError."""
        if self._ingestor is None:
            if self._local is not None and self.llm is None:
                raise ConfigError("the local model starts when the graph is opened: open it first")
            store = paced(self.store, self.priority)
            llm = PacedLLM(self.llm, self.priority) if self.llm is not None else None
            leases = Leases(seconds=self.settings.claim_seconds)
            views = optional(store, OverviewStore)
            upkeep = Upkeep(views, self.embedder, self.overview_options) if views is not None else None
            if views is None:
                log.info(NO_UPKEEP, type(self.store).__name__)
            watch = self.webhooks.episode_finished if self.webhooks is not None else None
            self._ingestor = Ingestor(
                store, llm, self.embedder, self.options, leases=leases, after_batch=upkeep, watch=watch,
                redact_key=key_of(self.settings),
            )  # fmt: skip
        return self._ingestor

    # --- groups and Kafka -------------------------------------------------------------------------
    def group(self, group_id: str) -> GroupHandle:
        """The handle of another group of this graph, with every group-scoped method (the graph itself
        is its default group's): ``await kg.group("alice").search("where does Alice live?")``."""
        return GroupHandle(self, group_id)

    async def enqueue(self, items: Iterable[Item]) -> list[Published]:
        """Hand episodes to ``epigraph worker`` processes through Kafka (``settings.kafka_bootstrap``,
        topic ``settings.kafka_topic``), keyed by group so each group stays in order; returns once Kafka
        acknowledged every one (partition and offset). All are validated first: a malformed episode
        raises InputError and none of them is published. Without a bootstrap they are ingested here, as
        by :meth:`add_episodes`, and each ``Published`` carries its ``result``. With the redaction
        policy on, what is published is already redacted, through this graph's store
        (:func:`publish_redaction`)."""
        if not self.settings.kafka_bootstrap:
            results = await self.add_episodes(items)
            return [Published(r.episode.uuid, r.episode.group_id, result=r) for r in results]
        if self._producer is None:
            self._producer = EpisodeProducer(self.settings.kafka_bootstrap, self.settings.kafka_topic)
        return await self._producer.publish(self._grouped(items), redact=await publish_redaction(self))


async def publish_redaction(kg: KnowledgeGraph) -> Redact | None:
    """What an episode published to Kafka is redacted with (``EpisodeProducer.publish``'s ``redact``:
    :meth:`KnowledgeGraph.enqueue`, ``--to-kafka``), None when the redaction policy is off: the queue's
    own door (``Ingestor.redacted``), numbering placeholders in ``kg``'s store (opened for it). That
    store must be the workers' (a Neo4j, or one SQLite file they share): the envelope names its vault
    and a worker refuses an episode redacted into another."""
    if not kg.options.redact:
        return None
    await kg.open()
    return kg.ingestor.redacted


async def prepare_vectors(kg: KnowledgeGraph) -> int | None:
    """Build the approximate vector indexes of the graph's group (the embedded store: each kind with
    ``exact_below`` vectors or more, usearch installed), or read them where saved, wait until they are
    ready and save them next to the database: how many are ready; ``None`` when the store keeps its own
    (Neo4j). ``epigraph index`` runs it (a function, not a method: a rare operator's step)."""
    from .graph.embedded import EmbeddedStore

    if not isinstance(kg.store, EmbeddedStore):
        return None
    await kg.open()
    return await kg.store.prepare_vectors([kg.group_id])
