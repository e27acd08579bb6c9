"""A group's records as two runs of it must agree on (``tests/ingestion/test_in_flight*.py``): entities,
facts with their ends' names, mentions and episodes, read from one consistent dump, system times left
out (they are the clock's)."""

from __future__ import annotations

from contextlib import aclosing
from typing import Any

from epigraph.graph.model import Entity, Episode, Fact, Mention
from epigraph.graph.store import GraphStore


async def group_records(store: GraphStore, group_id: str) -> dict[str, Any]:
    """The group's records without its ids and system times: what the two runs must agree on."""
    records: list[Any] = []
    async with aclosing(store.dump([group_id])) as items:  # type: ignore[attr-defined]
        records = [item async for item in items]
    entities = {e.uuid: e for e in records if isinstance(e, Entity)}
    episodes = {e.uuid: e for e in records if isinstance(e, Episode)}

    def name(uuid: str) -> str:
        return f"{entities[uuid].name} {uuid}"

    facts = sorted(
        (
            f.uuid,
            f.text,
            name(f.source_uuid),
            name(f.target_uuid),
            f.relation,
            f.valid_at,
            f.invalid_at,
            f.expired_at is not None,
            sorted(episodes[u].content for u in f.episodes),
        )
        for f in records
        if isinstance(f, Fact)
    )
    mentions = sorted(
        (episodes[m.episode_uuid].content, entities[m.entity_uuid].name)
        for m in records
        if isinstance(m, Mention)
    )
    return {
        "entities": sorted(
            (e.uuid, e.name, e.labels, e.summary, sorted(e.aliases)) for e in entities.values()
        ),
        "facts": facts,
        "mentions": mentions,
        "episodes": sorted((e.content, e.status) for e in episodes.values()),
    }
