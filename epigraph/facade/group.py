"""One group of a graph, and every method scoped to it: ``kg.group("alice")`` (the graph itself is the
handle of its default group, so ``kg.search(...)`` searches that one). Ingestion goes to the graph's one
queue, reads go through :mod:`epigraph.search` and :mod:`epigraph.explore`, questions through
:mod:`epigraph.ask`; corrections, the overview (communities, conversations) and transfer (export, load)
are namespaces of the handle: ``alice.corrections.add_fact(...)``, ``alice.overview.communities()``,
``alice.transfer.export(path)``, ``alice.forget.set_retention(30)``; forgetting a subject is
``alice.forget(name)`` (:mod:`epigraph.forget`), listing its episodes ``alice.episodes()`` and reading
one ``alice.episodes.get(uuid)``; why it holds a fact or an entity is ``alice.explain(subject)``."""

from __future__ import annotations

import warnings
from collections.abc import AsyncIterator, Coroutine, Iterable, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any, Literal, Unpack, overload

from typing_extensions import deprecated

from ..ask import Answer, AskChunk, AskMode, AskOptions, ask_mode, collect
from ..episodes.events import EpisodeResult, ProgressEvent
from ..episodes.inputs import EpisodeFields, EpisodeInput
from ..errors import ConfigError, InputError
from ..explore import GraphView
from ..explore.gather import AROUND, entity_graph, facts_graph, search_graph
from ..graph.model import Episode, check_group_id
from ..graph.roles import role
from ..graph.store import StoreStats
from ..graph.store_roles import WholeGroups
from ..ingestion.ingestor import Item, RemovalResult
from ..pipeline.options import Mode
from ..pipeline.state import Emit
from ..present.changes import ChangeList
from ..present.explain import Explanation
from ..privacy.vault import key_of
from ..search import DEFAULT, EntityView, SearchConfig, SearchResults, entity_view, search
from ..search.explain import explain as explain_subject
from ..search.explain import explain_entity, explain_fact
from .asking import asking
from .changes import group_changes
from .corrections import Corrections
from .episodes import Episodes
from .forgetting import Forgettings
from .overview import Overview
from .parts import Graph, asked, opened
from .transfer import Transfer


class GroupHandle:
    """The group ``group_id`` of ``graph``: ingest into it, read it, ask it, correct it, move it."""

    def __init__(self, graph: Graph, group_id: str) -> None:
        self._graph = graph
        self.group_id = check_group_id(group_id)

    # --- namespaces ---------------------------------------------------------------------------------
    @property
    def corrections(self) -> Corrections:
        """Corrections by hand: ``add_fact``, ``retire_fact``, ``edit_fact``, ``delete_fact``,
        ``merge_entities``, ``unmerge_entities``, ``rename_entity``, ``undo``, ``history``, ``get``."""
        return Corrections(self._graph, self.group_id)

    @property
    def overview(self) -> Overview:
        """Communities and conversation summaries: read, built, brought up to date."""
        return Overview(self._graph, self.group_id)

    @property
    def transfer(self) -> Transfer:
        """Export (this group by default) and load a JSON Lines dump."""
        return Transfer(self._graph, self.group_id)

    @property
    def forget(self) -> Forgettings:
        """Forget a subject: ``await kg.forget("Dana")`` previews, ``apply=True`` forgets (the entity
        ``subject`` names, by its id, its name or an alias; a name two entities share is refused with
        their ids), its aliases and vectors, every fact with it as an end, its names (and ``also``)
        taken out of everything that stays (replaced by ``placeholder``, default ``[forgotten]``), the
        summaries that told of it rebuilt, and the episodes that mention or name it redacted
        (``episodes="redact"``: the other subjects' facts kept) or deleted (``"delete"``, with what only
        they support). ``options``: :class:`~epigraph.forget.ForgetOptions`.

        A preview unless ``apply``: what would go or be rewritten (counts and ids, never a name) and the
        plan's ``digest``; ``apply=True`` forgets it in one transaction, with an audit record, then
        compacts the store's file; ``expect=digest`` applies only that plan (ConflictError, nothing
        written, when the group changed since). The same namespace holds what the group forgot
        (``kg.forget.history()``) and its retention policy (``retention``, ``set_retention(days)``,
        ``clear_retention``, ``apply_retention``: its older episodes, previewed or forgotten)."""
        return Forgettings(self._graph, self.group_id)

    # --- ingestion ----------------------------------------------------------------------------------
    async def add_episode(
        self,
        content: str,
        *,
        reference_time: datetime,
        mode: Mode | None = None,
        raise_on_failure: bool = True,
        **fields: Unpack[EpisodeFields],
    ) -> EpisodeResult:
        """Ingest one episode into the group; returns the episode, its entities, facts, invalidations
        and report. ``fields`` are :class:`~epigraph.episodes.inputs.EpisodeInput`'s (``kind``,
        ``speaker``, ``name``, ``source_description``, ``episode_id``), with its defaults."""
        item = EpisodeInput.coerce(
            {**fields, "content": content, "reference_time": reference_time, "group_id": self.group_id}
        )
        g = await opened(self._graph)
        return await g.ingestor.add_episode(item, mode=mode, raise_on_failure=raise_on_failure)

    async def add_episodes(self, items: Iterable[Item], *, mode: Mode | None = None) -> list[EpisodeResult]:
        """Bulk ingestion (an item that names no ``group_id`` is the handle's group's): groups
        concurrently, each group's episodes in order; failures come back as results with ``ok == False``."""
        g = await opened(self._graph)
        return await g.ingestor.add_episodes(self._grouped(items), mode=mode)

    async def ingest(
        self, items: Iterable[Item], *, mode: Mode | None = None
    ) -> AsyncIterator[ProgressEvent]:
        """Like :meth:`add_episodes`, as an async stream of typed progress events; the last ones, one per
        group, are :class:`~epigraph.overview.OverviewUpdated` (conversations and communities brought up
        to date, with their cost)."""
        g = await opened(self._graph)
        async for event in g.ingestor.ingest(self._grouped(items), mode=mode):
            yield event

    async def retry_failed(
        self, *, mode: Mode | None = None, emit: Emit | None = None
    ) -> list[EpisodeResult]:
        """Run again, in order, the failed episodes and those a crash left pending (events to ``emit``)."""
        g = await opened(self._graph)
        return await g.ingestor.retry_failed(self.group_id, mode=mode, emit=emit)

    async def remove_episode(self, uuid: str) -> RemovalResult:
        """Delete an episode: facts only it supported go, facts it retired come back, summaries refresh
        (its conversation's summary is folded again from the start)."""
        return await (await opened(self._graph)).ingestor.remove_episode(self.group_id, uuid)

    def _grouped(self, items: Iterable[Item]) -> Iterable[EpisodeInput]:
        for item in items:
            if isinstance(item, EpisodeInput):
                yield item
            else:  # the file's spelling ("group") is an alias of group_id (EpisodeInput.coerce)
                named = item.get("group_id") or item.get("group")
                yield EpisodeInput.coerce({**item, "group_id": named or self.group_id})

    async def delete_group(self) -> StoreStats:
        """Delete everything of the group (episodes, entities, facts, corrections) in one transaction;
        returns what it held. Not undoable: export it first (``transfer.export``)."""
        g = await opened(self._graph)
        async with g.ingestor.group_lock(self.group_id):
            return await role(g.store, WholeGroups, feature="delete_group").delete_group(self.group_id)

    # --- reading ------------------------------------------------------------------------------------
    @property
    def episodes(self) -> Episodes:
        """The group's episodes, a namespace that is also called: ``await kg.episodes(since=...,
        until=..., status=..., limit=100)`` (reference time in ``[since, until)``, newest first; ``limit``
        None: every one); ``await kg.episodes.get(uuid)``: one, with its status, error and report
        (:class:`~epigraph.errors.EpisodeNotFound` when the group has none so named)."""
        return Episodes(self._graph, self.group_id)

    @deprecated("kg.episode(uuid) is kg.episodes.get(uuid)")
    async def episode(self, uuid: str) -> Episode:
        """Deprecated: ``await kg.episodes.get(uuid)`` (the name went to :meth:`explain`; a deprecated
        name is outside the facade's cap of 25)."""
        return await self.episodes.get(uuid)

    async def stats(self) -> StoreStats:
        """Counts of the group's episodes, entities, facts and mentions (a store with the whole-groups
        role, ``graph.store_roles.WholeGroups``)."""
        return await role((await opened(self._graph)).store, WholeGroups, feature="stats").stats(
            self.group_id
        )

    async def changes(
        self,
        since: datetime | str | None = None,
        until: datetime | str | None = None,
        *,
        kinds: str | Iterable[str] | None = None,
        limit: int = 1000,
    ) -> ChangeList:
        """What changed in the group in ``[since, until)`` (an unset bound is none), grouped by entity:
        facts that started or ended (event time), were learned, retired, corrected by hand, moved by a
        merge or forgotten (system time), each with both axes' times and its sources
        (:mod:`epigraph.graph.changes` says which axis decides each kind; a forgotten fact is only its
        uuid and its forgetting, under the forgetting's uuid). ``kinds``: only these (``started``,
        ``ended``, ``learned``, ``retired``, ``corrected``, ``merged``, ``forgotten``); ``limit``: at
        most this many facts, corrections and forgettings read (``truncated`` says when the window held
        more). A bad window or kind raises
        :class:`~epigraph.errors.InputError` naming the field; a store without the role
        (``graph.store_roles.ChangeReads``) raises :class:`~epigraph.errors.StoreRoleMissing`."""
        return await group_changes(self._graph, self.group_id, since, until, kinds, limit)

    async def explain(self, subject: str, *, kind: Literal["fact", "entity"] | None = None) -> Explanation:
        """Why the group holds ``subject``: a fact's uuid, or an entity's name, alias or uuid
        (``await kg.explain(fact_id)``, ``await kg.group("alice").explain("Bob")``). The chain from the
        message to what the graph holds now, in a few lines: the episodes that said it and the line of
        the model's reply, what each stage decided (kept, dropped, dated from which words, resolved or
        merged and the candidates shown, a name refused by which gate), what retired it, and every
        correction by hand (:mod:`epigraph.search.explain`; the decision records:
        :mod:`epigraph.graph.decisions`). An entity the graph holds nothing of, and no record names,
        raises :class:`~epigraph.errors.EntityNotFound` with the closest names. ``kind``: only a fact
        (:class:`~epigraph.errors.FactNotFound` when there is none) or only an entity; by default a
        fact's uuid is a fact, anything else an entity. A blank subject is an
        :class:`~epigraph.errors.InputError`."""
        if not subject.strip():
            raise InputError("explain needs a fact id or an entity name", field="subject")
        store = (await opened(self._graph)).store
        if kind == "fact":
            return await explain_fact(store, self.group_id, subject)
        if kind == "entity":
            return await explain_entity(store, self.group_id, subject)
        return await explain_subject(store, self.group_id, subject)

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
        """Hybrid search of the group (or ``group_ids``); by default only facts valid now.

        ``as_of``: facts true then (event time); ``known_at``: as the graph knew it then (system time);
        ``include_retired``: every fact, with its interval; ``labels``: entities with one of these labels
        (facts: an endpoint with one); ``relations``: facts with one of these relations; ``center``: entity
        uuids or names to rank around; ``during=(start, end)``: facts valid at some time in it, episodes
        of it; ``limit``: results per kind; ``group_ids``: search these groups instead (several at once).
        See :func:`epigraph.search.search`."""
        g = await opened(self._graph)
        groups = group_ids or self.group_id
        if center is not None:
            names = [center] if isinstance(center, str) else center
            center = [await asked(g, groups, name) for name in names]
        return await search(
            g.store, g.embedder, await asked(g, groups, query), group_ids=groups, config=config,
            as_of=as_of, known_at=known_at, include_retired=include_retired, limit=limit, labels=labels,
            relations=relations, center=center, during=during,
        )  # fmt: skip

    async def entity(self, name_or_uuid: str, *, as_of: datetime | str | None = None) -> EntityView:
        """Summary, aliases, current facts, retired history and mentioning episodes of one entity; with
        ``as_of``, as it was then (its aliases said by then, the facts current then, the history by
        then, the episodes said by then and their count; a summary written from a later episode is not
        shown: ``view.entity.summary_withheld`` and the note in its output say so). An entity nothing
        said by then names raises :class:`~epigraph.errors.EntityNotFound`."""
        g = await opened(self._graph)
        name = await asked(g, self.group_id, name_or_uuid)
        return await entity_view(g.store, self.group_id, name, embedder=g.embedder, as_of=as_of)

    async def subgraph(self, name_or_uuid: str, *, depth: int = 1, include_retired: bool = False,
                       around: int = AROUND, as_of: datetime | None = None) -> GraphView:  # fmt: skip
        """The facts around an entity as an interactive view (a notebook cell, ``.save("x.html")``; a
        static picture with ``.save("x.svg")``). Retired facts are embedded for the time slider and drawn
        at first only with ``include_retired``; ``around``: how many neighbourhood facts to embed;
        ``as_of``: the page opens as the graph stood then (its slider there)."""
        g = await opened(self._graph)
        name = await asked(g, self.group_id, name_or_uuid)
        view = await entity_graph(g.store, self.group_id, name, depth=depth,
                                  include_retired=include_retired, around=around,
                                  embedder=g.embedder)  # fmt: skip
        return view if as_of is None else replace(view, as_of=as_of)

    async def explore(self, query: str, *, limit: int = 20) -> GraphView:
        """What a search finds (retired facts too, dashed) and its neighbourhood, as an interactive view."""
        g = await opened(self._graph)
        return await search_graph(
            g.store, g.embedder, self.group_id, await asked(g, self.group_id, query), limit=limit
        )

    async def facts_graph(self, uuids: Sequence[str]) -> GraphView:
        """Just these facts and their endpoints as an interactive view (e.g. the facts an answer cited)."""
        return await facts_graph((await opened(self._graph)).store, self.group_id, list(uuids))

    # --- asking -------------------------------------------------------------------------------------
    @overload
    def ask(
        self,
        question: str,
        *,
        as_of: datetime | str | None = None,
        known_at: datetime | str | None = None,
        streaming: Literal[True] = True,
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
        options: AskOptions | None = None,
        mode: AskMode | None = None,
    ) -> AsyncIterator[AskChunk] | Coroutine[Any, Any, Answer]:
        """Answer ``question`` from the group's graph, citing the facts (with their validity windows) and
        episodes used. ``as_of``: answer as of that time (its "now"); ``known_at``: from what the graph
        knew then.

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
        chunks = asking(self._graph, self.group_id, question, as_of, known_at, streaming, options, mode)
        return chunks if streaming else collect(question, chunks)

async def explain(
    handle: GroupHandle, subject: str, *, kind: Literal["fact", "entity"] | None = None
) -> Explanation:
    """Deprecated since 0.2: ``await kg.explain(subject)`` (:meth:`GroupHandle.explain`), which this
    calls, after a :class:`DeprecationWarning`; ``explain(kg.group("alice"), "Bob")`` is
    ``kg.group("alice").explain("Bob")``."""
    warnings.warn(
        "epigraph.explain(kg, subject) is deprecated: use await kg.explain(subject)",
        DeprecationWarning,
        stacklevel=2,
    )
    return await handle.explain(subject, kind=kind)


async def reveal(handle: GroupHandle, text: str, *, key: str | None = None) -> str:
    """``text`` (an episode's, a fact's, an answer's) with ``handle``'s group's placeholders
    (``<PHONE_3>``) replaced by the originals its redaction vault keeps, opened with ``key`` (default:
    the settings' ``EPIGRAPH_REDACT_KEY``; make one with ``epigraph redact-key``): ``await reveal(kg,
    text)``, ``await reveal(kg.group("alice"), text)``. A function, not a handle's method: reading
    originals back is a deliberate act. :class:`~epigraph.errors.ConfigError` without a key,
    :class:`~epigraph.errors.VaultKeyError` for a wrong one; a placeholder the vault keeps no original
    of is left as it is (every one, in a group redacted without a key)."""
    g = await opened(handle._graph)
    vault_key = key_of(g.settings, key)
    if vault_key is None:
        raise ConfigError(
            "reveal needs the redaction key: key=, or EPIGRAPH_REDACT_KEY (epigraph redact-key makes one)"
        )
    return await g.ingestor.vault("reveal").reveal(handle.group_id, text, vault_key)
