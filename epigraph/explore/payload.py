"""The data an interactive view carries: entities, facts with both time axes, and their episodes, as JSON.

One shape for every place the view appears (a notebook cell, a saved file, the served page, which fetches
more of the same shape and merges it). The page filters it by time itself, so every fact carries
``valid_at`` / ``invalid_at`` (event time), ``stated_at`` (when it was first stated: an unknown start,
``start_unknown``, begins there), ``created_at`` / ``expired_at`` (system time) and, when a
contradiction retired it, ``invalidated_by`` with the ``previous_invalid_at`` it had before: the page's
``factState`` is :func:`epigraph.graph.temporal.matches` written again in JavaScript.

``shown`` facts are drawn at first; the others are the bounded neighbourhood a saved file embeds so that
"expand" can reveal it without a server. Texts are cut to bounded lengths (summaries, episodes).
Each entity names its ``community`` (a uuid of ``communities``, or null), so the page can colour and list
entities by community (``overview``), and carries when it was mentioned (``said``, ``alias_said``), so
the page shows it, its aliases, its summary and its mention count as they were at the slider's moment
(``graph.entity_time``, again in ``view.js``: ``nodeState``).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from datetime import datetime
from typing import Any

from ..graph.derived import Community
from ..graph.entity_time import Mentioned, says
from ..graph.model import Entity, Episode, Fact
from ..graph.temporal import start_unknown

VERSION = 1
SUMMARY_CHARS = 600
EPISODE_CHARS = 400
EPISODES_PER_FACT = 3


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def _cut(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def said_dict(entity: Entity, said: Sequence[Mentioned] | None) -> dict[str, Any]:
    """When the entity was mentioned, for the page's time rules (``view.js``'s ``nodeState``, which is
    ``graph.entity_time`` again): ``said``, each mention's ``[reference_time, created_at]`` (null: not
    read, the entity then always drawn as it is now), and ``alias_said``, for each alias the indexes of
    the mentions that say it."""
    if said is None:
        return {"said": None, "alias_said": {}}
    return {
        "said": [[_iso(m.said_at), _iso(m.recorded_at)] for m in said],
        "alias_said": {a: [i for i, m in enumerate(said) if says(m.text, a)] for a in entity.aliases},
    }


def node_dict(
    uid: str, entity: Entity | None, mentions: int, shown: bool, community: str | None = None,
    said: Sequence[Mentioned] | None = None,
) -> dict[str, Any]:  # fmt: skip
    """One entity as the page draws it (an endpoint the store did not return shows its uuid)."""
    if entity is None:
        return {"id": uid, "name": uid[:8], "type": "", "labels": [], "aliases": [], "summary": "",
                "mentions": mentions, "created_at": None, "shown": shown, "community": community,
                "said": None, "alias_said": {}}  # fmt: skip
    return {
        "id": uid,
        "name": entity.name,
        "type": entity.labels[0] if entity.labels else "",
        "labels": list(entity.labels),
        "aliases": list(entity.aliases),
        "summary": _cut(entity.summary, SUMMARY_CHARS),
        "mentions": mentions,
        "created_at": _iso(entity.created_at),
        "shown": shown,
        "community": community,
        **said_dict(entity, said),
    }


def edge_dict(fact: Fact, shown: bool) -> dict[str, Any]:
    """One fact with both of its time axes and what retired it."""
    inv = fact.invalidated_by
    return {
        "id": fact.uuid,
        "source": fact.source_uuid,
        "target": fact.target_uuid,
        "relation": fact.relation,
        "text": fact.text,
        "valid_at": _iso(fact.valid_at),
        "invalid_at": _iso(fact.invalid_at),
        "stated_at": _iso(fact.stated_at),
        "start_unknown": start_unknown(fact),
        "created_at": _iso(fact.created_at),
        "expired_at": _iso(fact.expired_at),
        "invalidated_by": None
        if inv is None
        else {
            "fact": inv.fact_uuid,
            "episode": inv.episode_uuid,
            "previous_invalid_at": _iso(inv.previous_invalid_at),
        },
        "episodes": list(fact.episodes[:EPISODES_PER_FACT]),
        "shown": shown,
    }


def episode_entry(episode: Episode) -> dict[str, Any]:
    return {
        "id": episode.uuid,
        "when": _iso(episode.reference_time),
        "source": episode.source_description,
        "content": _cut(episode.content, EPISODE_CHARS),
    }


def community_dict(community: Community) -> dict[str, Any]:
    return {"name": community.name, "summary": _cut(community.summary, SUMMARY_CHARS),
            "size": len(community.members)}  # fmt: skip


def build(
    entities: Mapping[str, Entity],
    facts: Sequence[Fact],
    *,
    shown: Collection[str] | None = None,
    focus: Sequence[str] = (),
    mentions: Mapping[str, int] | None = None,
    episodes: Mapping[str, Episode] | None = None,
    title: str = "",
    group_id: str = "",
    communities: Mapping[str, Community] | None = None,
    said: Mapping[str, Sequence[Mentioned]] | None = None,
) -> dict[str, Any]:
    """The view's JSON data. ``shown``: the fact uuids drawn at first (None: all); ``focus``: entity uuids
    drawn even without a fact (the center first); ``communities``: by uuid, those of the entities;
    ``said``: by uuid, the episodes that mention them (``said_dict``; an entity not in it: not read)."""
    shown_facts = {f.uuid for f in facts} if shown is None else set(shown)
    counts = mentions or {}
    drawn = set(focus) | {u for f in facts if f.uuid in shown_facts for u in (f.source_uuid, f.target_uuid)}
    ids = dict.fromkeys([*focus, *entities])
    for f in facts:
        ids.setdefault(f.source_uuid)
        ids.setdefault(f.target_uuid)
    found = communities or {}
    member_of = {m: uuid for uuid, c in found.items() for m in c.members if m in ids}
    return {
        "version": VERSION,
        "title": title,
        "group_id": group_id,
        "focus": list(focus),
        "nodes": [
            node_dict(u, entities.get(u), counts.get(u, 0), u in drawn, member_of.get(u), (said or {}).get(u))
            for u in ids
        ],
        "edges": [edge_dict(f, f.uuid in shown_facts) for f in dict((f.uuid, f) for f in facts).values()],
        "episodes": {uid: episode_entry(e) for uid, e in (episodes or {}).items()},
        "communities": {uuid: community_dict(found[uuid]) for uuid in sorted(set(member_of.values()))},
    }
