"""Records built by hand for the store tests: episodes, entities, facts and their one write, at fixed
times, with small deterministic vectors exactly representable in float32 (so any store returns them
verbatim); and a group's records as a dump and as ``load_group`` takes them."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import aclosing
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np

from epigraph.graph.corrections import Correction
from epigraph.graph.decisions import DecisionRecord
from epigraph.graph.derived import Community, ConversationSummary
from epigraph.graph.forgetting import ForgetRecord, RetentionPolicy
from epigraph.graph.model import Entity, Episode, Fact, Mention
from epigraph.graph.store import DumpItem, EpisodeWrite, GraphStore, GroupDump, OwedSummaries
from tests.support.stores import DIM

T0 = datetime(2024, 1, 1, tzinfo=UTC)


def day(n: float) -> datetime:
    return T0 + timedelta(days=n)


def vec(seed: int) -> list[float]:
    """A deterministic DIM-d vector whose values are exact float32 numbers."""
    values: list[float] = np.random.default_rng(seed).normal(size=DIM).astype(np.float32).tolist()
    return values


def make_episode(group: str, content: str = "a conversation turn", at: datetime = T0, **kw: Any) -> Episode:
    return Episode(group_id=group, content=content, reference_time=at, **kw)


def make_entity(group: str, name: str, seed: int | None = None, **kw: Any) -> Entity:
    return Entity(group_id=group, name=name, name_embedding=None if seed is None else vec(seed), **kw)


def make_fact(
    group: str,
    src: Entity,
    dst: Entity,
    text: str,
    episodes: Sequence[str],
    seed: int | None = None,
    **kw: Any,
) -> Fact:
    kw.setdefault("relation", "RELATES_TO")
    return Fact(
        group_id=group,
        source_uuid=src.uuid,
        target_uuid=dst.uuid,
        text=text,
        episodes=list(episodes),
        text_embedding=None if seed is None else vec(seed),
        **kw,
    )


def write_of(
    ep: Episode,
    entities: Sequence[Entity] = (),
    facts: Sequence[Fact] = (),
    mentioned: Sequence[Entity] | None = None,
) -> EpisodeWrite:
    """An EpisodeWrite whose episode mentions ``mentioned`` (default: every entity written)."""
    mentions = [
        Mention(group_id=ep.group_id, episode_uuid=ep.uuid, entity_uuid=e.uuid)
        for e in (entities if mentioned is None else mentioned)
    ]
    return EpisodeWrite(episode=ep, entities=list(entities), facts=list(facts), mentions=mentions)


async def snapshot(store: GraphStore, group: str) -> list[DumpItem]:
    async with aclosing(store.dump([group], vectors=True)) as items:
        return [item async for item in items]


def group_of(group: str, items: Sequence[DumpItem]) -> GroupDump:
    """The records of a dump as ``load_group`` takes them."""
    return GroupDump(
        group,
        episodes=[i for i in items if isinstance(i, Episode)],
        entities=[i for i in items if isinstance(i, Entity)],
        facts=[i for i in items if isinstance(i, Fact)],
        mentions=[i for i in items if isinstance(i, Mention)],
        corrections=[i for i in items if isinstance(i, Correction)],
        communities=[i for i in items if isinstance(i, Community)],
        conversations=[i for i in items if isinstance(i, ConversationSummary)],
        owed_summaries=[u for i in items if isinstance(i, OwedSummaries) for u in i.entity_uuids],
        forgettings=[i for i in items if isinstance(i, ForgetRecord)],
        retention=next((i for i in items if isinstance(i, RetentionPolicy)), None),
        decisions=[i for i in items if isinstance(i, DecisionRecord)],
    )
