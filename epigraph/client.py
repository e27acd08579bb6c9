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
from collections.abc import AsyncGenerator, AsyncIterator, Coroutine, Iterable, Sequence
from contextlib import aclosing
from datetime import datetime
from pathlib import Path
from typing import Any, Literal, overload

from .ask import Answer, AskChunk, AskMode, AskOptions, ask_mode, collect, dialog
from .config import Settings
from .edit import UNSET, Editor, EntityRef
from .edit.build import MaybeTime
from .edit.refs import entities_named
from .embed import Embedder, embedder_from_settings
from .errors import ConfigError, ConversationNotFound, UsageError
from .explore import GraphView
from .explore.gather import entity_graph, search_graph
from .graph.corrections import Correction, author_of
from .graph.derived import chain_key
from .graph.model import Episode, EpisodeStatus
from .graph.search import (
    DEFAULT,
    EntityView,
    SearchConfig,
    SearchResults,
    entity_view,
    search,
)
from .graph.store import GraphStore, StoreStats
from .local_model import LocalModel
from .overview import (
    ChainView,
    Communities,
    CommunityUpdate,
    CommunityView,
    Conversation,
    Conversations,
    ConversationUpdate,
    OverviewOptions,
    OverviewUpdated,
    upkeep,
)
from .pipeline.claims import Leases
from .pipeline.events import EpisodeResult, ProgressEvent
from .pipeline.ingestor import Ingestor, Item, RemovalResult
from .pipeline.options import IngestOptions, Mode, for_small_model
from .prompts.protocol import LLM
from .publish.producer import EpisodeProducer, Published
from .transfer import Dump, LoadReport, export_lines, load
from .transfer.files import read_dump, write_dump


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


class KnowledgeGraph:
    """A temporal knowledge graph: ingest episodes, search, explore. An async context manager."""

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
        self._editor: Editor | None = None
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
        if self._ingestor is not None:
            self._ingestor.llm = self.llm

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
            self.llm, self._owns_llm = None, False
            if self._ingestor is not None:
                self._ingestor.llm = None
            await asyncio.to_thread(self._local.release, lease)

    async def __aenter__(self) -> KnowledgeGraph:
        return await self.open()

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    @property
    def ingestor(self) -> Ingestor:
        """The graph's one ingestion queue: every door (these methods, the server, MCP, the Kafka worker)
        goes through it, and it ends each batch with :meth:`_after_batch`. Without an LLM it accepts
        episodes but running one raises ConfigError."""
        if self._ingestor is None:
            self._ingestor = Ingestor(
                self.store, self.llm, self.embedder, self.options,
                leases=Leases(seconds=self.settings.claim_seconds), after_batch=self._after_batch,
            )  # fmt: skip
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

    async def _after_batch(
        self, store: GraphStore, llm: LLM, results: Sequence[EpisodeResult]
    ) -> list[OverviewUpdated]:
        """What the ingestion queue runs after each batch, whatever door it came by: the conversations and
        communities of its groups brought up to date (``overview.upkeep``)."""
        return await upkeep(store, llm, self.embedder, self.overview, results)

    def _communities(self) -> Communities:
        return Communities(self.store, self.llm, self.embedder, self.overview)

    def _conversations(self) -> Conversations:
        return Conversations(self.store, self.llm, self.embedder, self.overview)

    # --- the big picture: communities and conversations ----------------------------------------
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

    # --- reading --------------------------------------------------------------------------------
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

    async def entity(self, name_or_uuid: str, *, group_id: str | None = None) -> EntityView:
        """Summary, aliases, current facts, retired history and mentioning episodes of one entity."""
        await self.open()
        return await entity_view(self.store, group_id or self.group_id, name_or_uuid, embedder=self.embedder)

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

    # --- corrections by hand (epigraph.edit) ---------------------------------------------------------
    @property
    def editor(self) -> Editor:
        if self._editor is None:
            lock = self.ingestor.group_lock  # a correction never runs beside one of the group's episodes
            self._editor = Editor(self.store, self.embedder, self.llm, self.options, lock=lock)
        return self._editor

    def _author(self, author: str | None) -> str:
        """``author`` (or ``EPIGRAPH_AUTHOR``) as ``kind:name``; a bare name is a person."""
        name = author or self.settings.author
        if not name:
            raise UsageError(
                "a correction names its author, a person (alice, or person:alice): pass author= (the CLI: "
                "--by; HTTP and MCP: author), or set EPIGRAPH_AUTHOR"
            )
        try:
            return author_of(name)
        except ValueError as exc:
            raise UsageError(str(exc)) from None

    async def add_fact(
        self,
        source: EntityRef,
        relation: str,
        target: EntityRef,
        *,
        text: str | None = None,
        valid_at: datetime | str | None = None,
        invalid_at: datetime | str | None = None,
        create: bool = False,
        retires: Sequence[str] = (),
        author: str | None = None,
        reason: str = "",
        group_id: str | None = None,
    ) -> Correction:
        """Add a fact between two entities named by uuid, name or alias (exactly; ``create`` makes the
        ones no entity is named so). It cites no episode: its source is ``author``, a person. The facts
        in ``retires`` end where it starts. Returns the stored correction (see :meth:`corrections`)."""
        await self.open()
        return await self.editor.add_fact(
            group_id or self.group_id, source, relation, target, author=self._author(author), text=text,
            valid_at=valid_at, invalid_at=invalid_at, create=create, retires=retires, reason=reason,
        )  # fmt: skip

    async def retire_fact(
        self,
        uuid: str,
        *,
        at: datetime | str | None = None,
        author: str | None = None,
        reason: str = "",
        group_id: str | None = None,
    ) -> Correction:
        """The fact stopped being true at ``at`` (default: now); the graph learns it now."""
        await self.open()
        return await self.editor.retire_fact(
            group_id or self.group_id, uuid, at=at, author=self._author(author), reason=reason
        )

    async def edit_fact(
        self,
        uuid: str,
        *,
        text: str | None = None,
        relation: str | None = None,
        valid_at: MaybeTime = UNSET,
        invalid_at: MaybeTime = UNSET,
        author: str | None = None,
        reason: str = "",
        group_id: str | None = None,
    ) -> Correction:
        """Correct a fact's text, relation or event time (``None`` clears a time) in place."""
        await self.open()
        return await self.editor.edit_fact(
            group_id or self.group_id, uuid, text=text, relation=relation, valid_at=valid_at,
            invalid_at=invalid_at, author=self._author(author), reason=reason,
        )  # fmt: skip

    async def delete_fact(
        self, uuid: str, *, author: str | None = None, reason: str = "", group_id: str | None = None
    ) -> Correction:
        """Delete a fact; the facts it retired come back. The correction keeps it (undo restores it)."""
        await self.open()
        return await self.editor.delete_fact(
            group_id or self.group_id, uuid, author=self._author(author), reason=reason
        )

    async def merge_entities(
        self,
        keep: EntityRef,
        merge: EntityRef,
        *,
        author: str | None = None,
        reason: str = "",
        group_id: str | None = None,
    ) -> Correction:
        """Fold ``merge`` into ``keep``: its names become aliases, its facts and mentions move, summaries
        are rewritten; :meth:`unmerge_entities` (or :meth:`undo`) takes it back exactly."""
        await self.open()
        return await self.editor.merge_entities(
            group_id or self.group_id, keep, merge, author=self._author(author), reason=reason
        )

    async def unmerge_entities(
        self, entity: EntityRef, *, author: str | None = None, reason: str = "", group_id: str | None = None
    ) -> Correction:
        """Undo the latest merge into ``entity`` that is not undone yet."""
        await self.open()
        return await self.editor.unmerge(
            group_id or self.group_id, entity, author=self._author(author), reason=reason
        )

    async def rename_entity(
        self,
        entity: EntityRef,
        new_name: str,
        *,
        keep_alias: bool = True,
        author: str | None = None,
        reason: str = "",
        group_id: str | None = None,
    ) -> Correction:
        """Rename an entity; its old name stays an alias unless ``keep_alias=False``."""
        await self.open()
        return await self.editor.rename_entity(
            group_id or self.group_id, entity, new_name, keep_alias=keep_alias, author=self._author(author),
            reason=reason,
        )  # fmt: skip

    async def undo(
        self, correction: str, *, author: str | None = None, reason: str = "", group_id: str | None = None
    ) -> Correction:
        """Apply a correction backwards, while the graph still holds what it wrote (ConflictError says
        what changed otherwise); recorded as a correction of its own."""
        await self.open()
        return await self.editor.undo(
            group_id or self.group_id, correction, author=self._author(author), reason=reason
        )

    async def corrections(
        self, *, entity: EntityRef | None = None, limit: int = 100, group_id: str | None = None
    ) -> list[Correction]:
        """The group's corrections by hand, newest first; with ``entity``, those that touched it (every
        entity the name denotes, when several share it)."""
        await self.open()
        group = group_id or self.group_id
        if entity is None:
            return await self.store.corrections(group, limit=limit)
        named = await entities_named(self.store, group, entity)
        found = [c for e in named for c in await self.store.corrections(group, subject=e.uuid, limit=limit)]
        unique = {c.uuid: c for c in found}.values()
        return sorted(unique, key=lambda c: (c.created_at, c.uuid), reverse=True)[:limit]

    async def delete_group(self, group_id: str | None = None) -> StoreStats:
        """Delete everything of a group (episodes, entities, facts, corrections) in one transaction;
        returns what it held. Not undoable: export it first (:meth:`export`)."""
        await self.open()
        group = group_id or self.group_id
        async with self.ingestor.group_lock(group):
            return await self.store.delete_group(group)

    # --- export and load (epigraph.transfer) -------------------------------------------------------
    async def _groups(self, groups: str | Sequence[str] | None) -> list[str]:
        if groups is None:
            return [self.group_id]
        if groups == "*":
            return await self.store.groups()
        return [groups] if isinstance(groups, str) else list(dict.fromkeys(groups))

    async def export_lines(
        self, *, groups: str | Sequence[str] | None = None, vectors: bool = False
    ) -> AsyncGenerator[str, None]:
        """The dump of ``groups`` (default: this graph's group; ``"*"``: every group) as JSON Lines, line
        by line, from one consistent read of the store (docs/dump-format.md); embeddings with
        ``vectors``."""
        await self.open()
        chosen = await self._groups(groups)
        lines = export_lines(self.store, chosen, vectors=vectors, embedder=self.embedder)
        async with aclosing(lines) as dump:
            async for line in dump:
                yield line

    async def export(
        self, path: str | Path, *, groups: str | Sequence[str] | None = None, vectors: bool = False
    ) -> dict[str, dict[str, int]]:
        """Write the dump of ``groups`` to ``path`` (``.gz``: compressed); the file appears only when it
        is complete. Returns the records written, per group and kind."""
        return await write_dump(self.export_lines(groups=groups, vectors=vectors), Path(path))

    async def load(self, source: str | Path | Dump, *, into: str | None = None) -> LoadReport:
        """Load a dump (a file, or one already read with ``epigraph.transfer.read``) into this graph's
        store: every line is checked first (InputError naming the line and field), every target group
        must be empty, and each group is written in one transaction. ``into``: load a one-group dump as
        that group. Embeddings are the dump's when it has this graph's embedder's, else computed."""
        await self.open()
        dump = source if isinstance(source, Dump) else await asyncio.to_thread(read_dump, Path(source))
        return await load(self.store, self.embedder, dump, into=into)

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
