"""Export and load: a store's groups to a dump (``format``) and back, into any store.

- :func:`export` streams the store's consistent read of the groups (``WholeGroups.dump``: a snapshot, or
  the groups' writers held off) into lines: the header, the records, the end line.
- :func:`load` takes a dump already read and checked (``format.read``), makes sure every target group is
  empty before writing anything, gives the records the target graph's embeddings (the dump's own when
  they come from the same embedder, else computed again from the names and texts), and writes each group
  in one transaction (``WholeGroups.load_group``): a group is loaded whole or not at all.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from contextlib import aclosing
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, TypeVar

from ..embed import Embedder
from ..errors import ConflictError, UsageError
from ..graph.corrections import Correction, GraphSlice
from ..graph.decisions import DecisionRecord
from ..graph.derived import community_text
from ..graph.forgetting import RetentionPolicy
from ..graph.model import Entity, Episode, Fact, Mention, check_group_id, utc_now
from ..graph.store import GroupDump, OwedSummaries, TransferStore
from ..graph.store_roles import WholeGroups
from .format import KINDS, Dump, Embedding, end_line, header, kind_of, record_line

T = TypeVar("T", Episode, Entity, Fact, Mention, RetentionPolicy, DecisionRecord)


async def export_lines(
    store: WholeGroups,
    group_ids: Sequence[str],
    *,
    vectors: bool = False,
    embedder: Embedder | None = None,
    now: datetime | None = None,
) -> AsyncGenerator[str, None]:
    """The dump of ``group_ids`` line by line (each without its newline); ``embedder`` names the
    embeddings of a dump with ``vectors``."""
    embedding = Embedding(name=embedder.name, dim=embedder.dim) if embedder is not None else None
    yield header(list(group_ids), vectors, embedding, now or utc_now()).to_line()
    counts: dict[str, dict[str, int]] = {g: dict.fromkeys(KINDS, 0) for g in group_ids}
    owed: dict[str, set[str]] = {}
    async with aclosing(store.dump(group_ids, vectors=vectors)) as items:
        async for item in items:
            if isinstance(item, OwedSummaries):  # said on the entity lines that follow
                owed[item.group_id] = set(item.entity_uuids)
                continue
            counts[item.group_id][kind_of(item)] += 1
            yield record_line(item, vectors, owed.get(item.group_id, ()))
    yield end_line(counts)


@dataclass(frozen=True)
class LoadReport:
    """What a load wrote: records per group and kind, and how the embeddings were made."""

    groups: dict[str, dict[str, int]]
    embeddings: str
    """``dump``: the dump's own were kept; ``computed``: made again by the graph's embedder;
    ``none``: the dump had none and nothing was embedded."""
    embedded: int = 0
    """Texts embedded (``computed``)."""
    renamed: dict[str, str] = field(default_factory=dict)
    """Group of the dump -> the group it was loaded as (when it differs)."""


Admit = Callable[[str, str], Awaitable[None]]
"""Told each (group of the dump, group it is loaded as) once every target is known to be empty and
before anything is written; it refuses the load by raising (the redaction policy's check of a dump)."""


async def load(
    store: TransferStore,
    embedder: Embedder | None,
    dump: Dump,
    *,
    into: str | None = None,
    admit: Admit | None = None,
) -> LoadReport:
    """Write ``dump`` into ``store`` (see the module docstring); ``into`` loads a one-group dump as that
    group. ConflictError (nothing written) when a target group holds anything; whatever ``admit``
    raises (nothing written either)."""
    targets = _targets(dump, into)
    busy = [target for target in targets.values() if await _holds(store, target)]
    if busy:
        raise ConflictError(
            f"group(s) {', '.join(map(repr, busy))} already hold data: a dump is loaded into empty groups "
            "only (delete them first, or load it as another, empty group); nothing was written"
        )
    for source, target in targets.items():
        if admit is not None:
            await admit(source, target)
    keep = _same_embedder(dump, embedder)
    embedded = 0
    written: dict[str, dict[str, int]] = {}
    for source, target in targets.items():
        group = regroup(dump.groups[source], target) if target != source else dump.groups[source]
        if not keep:
            group, count = await _embedded(group, embedder)
            embedded += count
        await store.load_group(group)
        written[target] = dump.counts()[source]
    how = "dump" if keep else ("computed" if embedder is not None else "none")
    renamed = {s: t for s, t in targets.items() if s != t}
    return LoadReport(written, how, embedded, renamed)


def _targets(dump: Dump, into: str | None) -> dict[str, str]:
    if into is None:
        return {g: g for g in dump.groups}
    try:
        check_group_id(into)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if len(dump.groups) != 1:
        raise UsageError(
            f"the dump holds {len(dump.groups)} groups ({', '.join(dump.groups)}); only a one-group dump "
            "is loaded as another group"
        )
    return {next(iter(dump.groups)): into}


async def _holds(store: TransferStore, group_id: str) -> bool:
    stats = await store.stats(group_id)
    if stats.episodes or stats.entities or stats.facts or await store.corrections(group_id, limit=1):
        return True
    return bool(await store.communities(group_id) or await store.conversation_summaries(group_id))


def _same_embedder(dump: Dump, embedder: Embedder | None) -> bool:
    """Whether the dump's embeddings are the target graph's kind (same embedder and dimension)."""
    given = dump.header.embedding
    if not dump.header.vectors or given is None:
        return False
    return embedder is None or (given.name == embedder.name and given.dim == embedder.dim)


async def _embedded(group: GroupDump, embedder: Embedder | None) -> tuple[GroupDump, int]:
    """The group with the embeddings the graph makes (entity names, fact texts, communities' names and
    summaries) computed by ``embedder`` and episodes' dropped; without an embedder, none at all."""
    episodes = [e.model_copy(update={"content_embedding": None}) for e in group.episodes]
    texts = [
        *(e.name for e in group.entities),
        *(f.text for f in group.facts),
        *(community_text(c.name, c.summary) for c in group.communities),
    ]
    if embedder is not None and texts:
        vectors: list[list[float] | None] = [[float(x) for x in row] for row in await embedder.embed(texts)]
    else:
        vectors = [None] * len(texts)
    rows = iter(vectors)
    entities = [e.model_copy(update={"name_embedding": next(rows)}) for e in group.entities]
    facts = [f.model_copy(update={"text_embedding": next(rows)}) for f in group.facts]
    communities = [c.model_copy(update={"embedding": next(rows)}) for c in group.communities]
    embedded = replace(group, episodes=episodes, entities=entities, facts=facts, communities=communities)
    return embedded, len(texts) if embedder is not None else 0


def regroup(group: GroupDump, group_id: str) -> GroupDump:
    """Every record of ``group`` as a record of ``group_id`` (corrections' records too)."""
    return GroupDump(
        group_id,
        episodes=[_moved(e, group_id) for e in group.episodes],
        entities=[_moved(e, group_id) for e in group.entities],
        facts=[_moved(f, group_id) for f in group.facts],
        mentions=[_moved(m, group_id) for m in group.mentions],
        corrections=[_moved_correction(c, group_id) for c in group.corrections],
        communities=[c.model_copy(update={"group_id": group_id}) for c in group.communities],
        conversations=[c.model_copy(update={"group_id": group_id}) for c in group.conversations],
        owed_summaries=group.owed_summaries,
        forgettings=[f.model_copy(update={"group_id": group_id}) for f in group.forgettings],
        retention=None
        if group.retention is None
        else group.retention.model_copy(update={"group_id": group_id}),
        decisions=[_moved(r, group_id) for r in group.decisions],
    )


def _moved(item: T, group_id: str) -> T:
    moved: T = item.model_copy(update={"group_id": group_id})
    return moved


def _moved_correction(correction: Correction, group_id: str) -> Correction:
    def side(s: GraphSlice) -> GraphSlice:
        update: dict[str, Any] = {
            "entities": [_moved(e, group_id) for e in s.entities],
            "facts": [_moved(f, group_id) for f in s.facts],
            "mentions": [_moved(m, group_id) for m in s.mentions],
        }
        return s.model_copy(update=update)

    return correction.model_copy(
        update={"group_id": group_id, "before": side(correction.before), "after": side(correction.after)}
    )
