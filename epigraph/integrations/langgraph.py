"""LangGraph's long-term memory over the graph (``pip install 'epigraph[langgraph]'``).

:class:`EpigraphStore` implements LangGraph's store interface (``langgraph.store.base.BaseStore``), so
a graph compiled with ``builder.compile(store=EpigraphStore(kg))`` hands it to its nodes, as LangGraph's
memory guide describes. The mapping:

- a namespace is a group: its labels joined by ``.`` (``("memories", "alice")`` is the group
  ``memories.alice``); a label holds the characters a group id allows (``A-Za-z0-9_:@-``);
- a put is an episode of that group (kind ``json``: the value, its ``name`` the key), ingested at once,
  so the facts it states join the group's graph with their validity windows; putting a key again
  replaces its episode (what only the old value supported goes), a put of ``None`` removes it;
- a search with a ``query`` is epigraph's hybrid search of the groups under the prefix: the episodes
  it ranks, with their scores; without one, the latest items (at most :data:`SCAN_LIMIT` a group),
  newest first; ``filter`` keeps the items whose top-level fields equal the ones given;
- listing namespaces lists the graph's groups.

Items that came by another door (a chat message, an imported document) are listed too: key their
uuid, value ``{"content": ...}``. ``index`` and TTLs are not supported (every item is ingested).

Its work is asynchronous (``abatch`` and the ``a*`` methods); ``batch`` and the synchronous methods
work from another thread while the loop that first used the store runs (a synchronous node of a graph
run with ``ainvoke`` is such a thread), as LangGraph's asynchronous stores do.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable
from typing import Any

from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    validate_op_namespace,
)

from ..client import KnowledgeGraph
from ..errors import UsageError
from ..graph.model import GROUP_ID_RE, Episode, EpisodeKind, episode_uuid, utc_now
from .memory import GroupMemory, groups_of

SEPARATOR = "."
SCAN_LIMIT = 1000
"""A search without a query reads at most this many of each group's latest items."""


def group_of(namespace: tuple[str, ...]) -> str:
    """The group a namespace names (its labels joined by ``.``)."""
    for label in namespace:
        if not GROUP_ID_RE.fullmatch(label):
            raise UsageError(
                f"namespace {namespace!r}: the label {label!r} must be characters of [A-Za-z0-9_:@-] "
                "(it becomes part of a group id)"
            )
    group = SEPARATOR.join(namespace)
    if not GROUP_ID_RE.fullmatch(group):
        raise UsageError(f"namespace {namespace!r}: more than 128 characters as a group id")
    return group


def namespace_of(group: str) -> tuple[str, ...]:
    return tuple(group.split(SEPARATOR))


def _matches(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    path = tuple(condition.path)
    if len(path) > len(namespace):
        return False
    start = 0 if condition.match_type == "prefix" else len(namespace) - len(path)
    part = namespace[start : start + len(path)]
    return all(want in ("*", have) for want, have in zip(path, part, strict=True))


def _passes(value: dict[str, Any], wanted: dict[str, Any] | None) -> bool:
    for field, expected in (wanted or {}).items():
        if isinstance(expected, dict) and any(str(k).startswith("$") for k in expected):
            raise UsageError(f"search filter {field!r}: operators ({', '.join(expected)}) are not supported")
        if value.get(field) != expected:
            return False
    return True


class EpigraphStore(BaseStore):
    """LangGraph's store over ``kg``: a namespace is a group, an item an episode (see the module)."""

    def __init__(self, kg: KnowledgeGraph) -> None:
        self.kg = kg
        self._loop: asyncio.AbstractEventLoop | None = None

    # --- the interface ------------------------------------------------------------------------------
    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        self._loop = self._loop or asyncio.get_running_loop()
        ops = list(ops)
        for op in ops:
            validate_op_namespace(op)
        return [await self._run(op) for op in ops]

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """The operations run on the loop that first used the store, from another thread."""
        loop = self._loop
        if loop is None or loop.is_closed():
            raise UsageError(
                "the store is asynchronous: use `await store.abatch(ops)` (or aget, aput, asearch)"
            )
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            raise UsageError(
                "a synchronous store call on the store's own event loop would block it: use the async "
                "methods (await store.aget / aput / asearch) in async code"
            )
        return asyncio.run_coroutine_threadsafe(self.abatch(ops), loop).result()

    async def _run(self, op: Op) -> Result:
        if isinstance(op, GetOp):
            return await self._get(op)
        if isinstance(op, PutOp):
            await self._put(op)
            return None
        if isinstance(op, SearchOp):
            return await self._search(op)
        if isinstance(op, ListNamespacesOp):
            return await self._namespaces(op)
        raise UsageError(f"unknown store operation {type(op).__name__}")

    # --- operations ---------------------------------------------------------------------------------
    async def _get(self, op: GetOp) -> Item | None:
        episode = await self._episode(op.namespace, op.key)
        if episode is None:
            return None
        key, value = _key_value(episode)
        when = episode.created_at
        return Item(namespace=op.namespace, key=key, value=value, created_at=when, updated_at=when)

    async def _put(self, op: PutOp) -> None:
        memory = GroupMemory(self.kg, group_of(op.namespace))
        before = await self._episode(op.namespace, op.key)
        if op.value is None:
            if before is not None:
                await memory.forget(before.uuid)
            return
        content = json.dumps(op.value, ensure_ascii=False)
        if before is not None:
            if before.content == content and before.kind == EpisodeKind.JSON:
                return
            await memory.forget(before.uuid)
        await memory.remember(
            content, reference_time=utc_now(), kind=EpisodeKind.JSON, episode_id=op.key, name=op.key
        )

    async def _search(self, op: SearchOp) -> list[SearchItem]:
        prefix = op.namespace_prefix
        groups = [g for g in await groups_of(self.kg) if namespace_of(g)[: len(prefix)] == prefix]
        if not groups:
            return []
        wanted = op.offset + op.limit
        if op.query:
            limit = SCAN_LIMIT if op.filter else wanted
            found = await self.kg.search(op.query, group_ids=groups, limit=limit)
            hits: list[tuple[Episode, float | None]] = [(r.episode, r.score) for r in found.episodes]
        else:
            listed = [e for g in groups for e in await GroupMemory(self.kg, g).episodes(limit=SCAN_LIMIT)]
            listed.sort(key=lambda e: (e.created_at, e.uuid), reverse=True)
            hits = [(e, None) for e in listed]
        items = [_item(e, score) for e, score in hits]
        kept = [i for i in items if _passes(i.value, op.filter)]
        return kept[op.offset : wanted]

    async def _namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        found: set[tuple[str, ...]] = set()
        for group in await groups_of(self.kg):
            namespace = namespace_of(group)
            if all(_matches(c, namespace) for c in op.match_conditions or ()):
                found.add(namespace[: op.max_depth] if op.max_depth is not None else namespace)
        return sorted(found)[op.offset : op.offset + op.limit]

    # --- helpers ------------------------------------------------------------------------------------
    async def _episode(self, namespace: tuple[str, ...], key: str) -> Episode | None:
        """The episode of ``key``: put by this store (its id derived from the key), else one whose uuid
        is the key (an episode that came by another door)."""
        memory = GroupMemory(self.kg, group_of(namespace))
        episode = await memory.episode(episode_uuid(memory.group_id, "", utc_now(), given_id=key))
        return episode if episode is not None else await memory.episode(key)


def _key_value(episode: Episode) -> tuple[str, dict[str, Any]]:
    """An episode as a store item's key and value: a JSON object episode's name and object; any other
    episode's uuid and ``{"content": its content}``."""
    if episode.kind == EpisodeKind.JSON and episode.name:
        value = json.loads(episode.content)
        if isinstance(value, dict):
            return episode.name, value
    return episode.uuid, {"content": episode.content}


def _item(episode: Episode, score: float | None) -> SearchItem:
    key, value = _key_value(episode)
    when = episode.created_at
    namespace = namespace_of(episode.group_id)
    return SearchItem(
        namespace=namespace, key=key, value=value, created_at=when, updated_at=when, score=score
    )
