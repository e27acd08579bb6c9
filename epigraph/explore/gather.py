"""Read what a view shows from a store: an entity's neighbourhood, a search result, a set of facts, and the
communities of their entities.

Every view embeds, beside the facts it draws, a *bounded* neighbourhood (``around`` facts touching the
drawn entities, retired ones included) so that "expand" in a saved file has something to reveal, and the
episodes the facts came from (at most :data:`MAX_EPISODES`). Retired facts are always read: the page's
time slider needs them; ``include_retired`` only decides whether they are drawn at first.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ..concurrency import gather
from ..embed import Embedder
from ..errors import EntityNotFound
from ..graph.entity_time import Mentioned
from ..graph.model import Entity, Episode, Fact
from ..graph.store import EVERYTHING, FactFilter, GraphReads
from ..search import search
from ..search.communities import of_groups
from ..search.entity import closest_names, find_entities, most_mentioned
from .payload import EPISODES_PER_FACT
from .view import GraphView

LIMIT = 200
"""Facts drawn at most."""
AROUND = 150
"""Facts embedded around the drawn entities for "expand", at most."""
MAX_EPISODES = 80
MENTIONS_READ = 2000
"""Mentions read per entity for the page's slider (an entity mentioned more often is counted to this
many, its oldest left out)."""

_ALL = FactFilter(EVERYTHING)


def _endpoints(facts: Iterable[Fact]) -> set[str]:
    return {u for f in facts for u in (f.source_uuid, f.target_uuid)}


async def pick_entity(
    store: GraphReads, group_id: str, name_or_uuid: str, embedder: Embedder | None = None
) -> Entity:
    """The entity a name, an alias or a uuid denotes (the most mentioned of several, as in the entity
    view); EntityNotFound naming the closest names when none does."""
    found = (await find_entities(store, group_id, [name_or_uuid])).get(name_or_uuid, [])
    if not found:
        closest = await closest_names(store, [group_id], name_or_uuid, embedder)
        raise EntityNotFound(name_or_uuid, group_id, closest=closest)
    entity, _ = await most_mentioned(store, group_id, found)
    return entity


async def entity_graph(
    store: GraphReads,
    group_id: str,
    name_or_uuid: str,
    *,
    depth: int = 1,
    include_retired: bool = False,
    limit: int = LIMIT,
    around: int = AROUND,
    embedder: Embedder | None = None,
) -> GraphView:
    """The facts within ``depth`` hops of an entity (a name, alias or uuid), the entity in the middle."""
    if depth < 1:
        raise ValueError(f"depth must be at least 1, got {depth}")
    entity = await pick_entity(store, group_id, name_or_uuid, embedder)
    inner = [entity.uuid]
    if depth > 1:
        inner += list(await store.neighbours(group_id, [entity.uuid], depth - 1, _ALL))
    facts = await store.facts_around(group_id, inner, _ALL, limit)
    title = entity.name if depth == 1 else f"{entity.name} ({depth} hops)"
    return await complete(store, group_id, facts, focus=[entity.uuid], title=title,
                          show_retired=include_retired, around=around)  # fmt: skip


async def search_graph(
    store: GraphReads,
    embedder: Embedder,
    group_id: str,
    query: str,
    *,
    limit: int = 20,
    around: int = AROUND,
    **filters: Any,
) -> GraphView:
    """What a search finds (retired facts included, drawn dashed), and the neighbourhood around it."""
    results = await search(store, embedder, query, group_ids=group_id, include_retired=True, limit=limit,
                           **filters)  # fmt: skip
    found = GraphView.from_search(results)
    return await complete(store, group_id, found.facts, focus=found.focus, title=found.title, around=around)


async def facts_graph(store: GraphReads, group_id: str, uuids: Sequence[str]) -> GraphView:
    """Just these facts and their endpoints (e.g. the facts an answer cites)."""
    facts = await store.get_facts(group_id, list(dict.fromkeys(uuids)))
    return await complete(store, group_id, facts, focus=[], title="cited facts", around=0)


async def complete(
    store: GraphReads,
    group_id: str,
    facts: Sequence[Fact],
    *,
    focus: Sequence[str],
    title: str,
    show_retired: bool = True,
    around: int = AROUND,
) -> GraphView:
    """A view of ``facts`` with their entities, mention counts, episodes and the bounded neighbourhood."""
    drawn = set(focus) | _endpoints(facts)
    extra: list[Fact] = []
    if around > 0 and drawn:
        extra = await store.facts_around(group_id, sorted(drawn), _ALL, around)
    every = list({f.uuid: f for f in [*facts, *extra]}.values())
    ids = sorted(drawn | _endpoints(every))
    found, mentions, episodes, communities, said = await gather(
        [store.get_entities(group_id, ids), store.mention_counts(group_id, ids),
         _episodes(store, group_id, every), of_groups(store, [group_id]), _said(store, group_id, ids)]
    )  # fmt: skip
    drawn_ids = set(ids)
    return GraphView(
        entities={e.uuid: e for e in found},
        facts=tuple(every),
        shown=frozenset(f.uuid for f in facts),
        focus=tuple(focus),
        title=title,
        group_id=group_id,
        mentions=mentions,
        episodes=episodes,
        show_retired=show_retired,
        communities={c.uuid: c for c in communities if drawn_ids.intersection(c.members)},
        said=said,
    )


async def _said(store: GraphReads, group_id: str, ids: Sequence[str]) -> dict[str, tuple[Mentioned, ...]]:
    """The episodes mentioning each entity (at most MENTIONS_READ each), as the page's time rules read
    them: one read per entity, concurrently."""
    found = await gather([store.episodes_mentioning(group_id, u, MENTIONS_READ, EVERYTHING) for u in ids])
    return {
        u: tuple(Mentioned(e.reference_time, e.created_at, e.content) for e in episodes)
        for u, episodes in zip(ids, found, strict=True)
    }


async def _episodes(store: GraphReads, group_id: str, facts: Sequence[Fact]) -> dict[str, Episode]:
    """The episodes the facts came from (the first few of each fact, at most MAX_EPISODES)."""
    wanted = list(dict.fromkeys(u for f in facts for u in f.episodes[:EPISODES_PER_FACT]))[:MAX_EPISODES]
    found = await gather([store.get_episode(group_id, uid) for uid in wanted])
    return {e.uuid: e for e in found if e is not None}
