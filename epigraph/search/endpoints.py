"""The entities facts name, read as they were at the time a read asks about (``graph.entity_time``).

A fact shown as of a time can name an entity no episode had mentioned by then (a fact's start can lie
before it was said: "consults for Initech since 2021", said in 2024): it keeps its name and labels,
with no alias and no summary (``entity_time.not_yet_mentioned``), so the fact still reads.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ..concurrency import gather
from ..graph.entity_time import bounded, not_yet_mentioned
from ..graph.model import Entity, Fact
from ..graph.store import CURRENT, GraphReads, TimeFilter


def by_group(pairs: Iterable[tuple[str, str]]) -> dict[str, list[str]]:
    """uuids by group, each once, in their order."""
    out: dict[str, list[str]] = {}
    for group_id, uuid in pairs:
        bucket = out.setdefault(group_id, [])
        if uuid not in bucket:
            bucket.append(uuid)
    return out


async def entities_then(
    store: GraphReads, group_id: str, uuids: Sequence[str], time: TimeFilter = CURRENT
) -> dict[str, Entity]:
    """The group's entities ``uuids`` by uuid as they were under ``time``; those not mentioned by then
    as ``not_yet_mentioned`` (unknown uuids left out)."""
    found = {e.uuid: e for e in await store.get_entities(group_id, list(uuids), time)}
    missing = [u for u in uuids if u not in found]
    if bounded(time) and missing:
        found.update((e.uuid, not_yet_mentioned(e)) for e in await store.get_entities(group_id, missing))
    return found


async def fetch_endpoints(
    store: GraphReads, facts: Sequence[Fact], time: TimeFilter = CURRENT
) -> dict[str, Entity]:
    """The endpoint entities of ``facts`` as they were under ``time``: one read per group (normally one)."""
    wanted = by_group((f.group_id, uuid) for f in facts for uuid in (f.source_uuid, f.target_uuid))
    found = await gather([entities_then(store, g, uuids, time) for g, uuids in wanted.items()])
    return {uuid: e for entities in found for uuid, e in entities.items()}
