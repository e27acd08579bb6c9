"""Why the graph holds a fact or an entity (``kg.explain``): the chain from the message to what the graph
holds now, read from the store (drawn by ``present.explain``).

- a **fact** (:func:`explain_fact`): each episode that said it (oldest first) and, from its decision
  record (``graph.decisions``), the line of the model's reply it came from, what decided it (new without
  candidates, by the resolve call and the candidates it was shown, restated word for word or by
  meaning), the words that dated it; what retired it (the episode, the fact that contradicted it and
  what decided that) or the correction that did; every correction by hand that touched it;
- an **entity** (:func:`explain_entity`, by name, alias or uuid): what the graph holds now; each episode
  that named it and how the name was resolved (new, the same name, merged by the resolve call and the
  candidates shown, kept apart); its names refused or repaired by a gate of the names room (a name the
  graph holds nothing of is explained by those alone); merges and renames by hand.

A store without decision records (``DecisionReads``) or corrections (``CorrectionReads``) still explains
what the graph holds; the episodes without a record are listed (``Explanation.unrecorded``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ..errors import EntityNotFound, FactNotFound
from ..graph import decisions as d
from ..graph.corrections import CORRECTION_PREFIX, Correction, CorrectionOp
from ..graph.decisions import DecisionRecord, Step
from ..graph.model import Entity, Episode, Fact, normalize_name
from ..graph.roles import optional
from ..graph.store import CorrectionReads, GraphReads
from ..graph.store_roles import DecisionReads
from ..graph.temporal import EVERYTHING
from ..present.corrections import describe
from ..present.explain import Explanation, Link
from ..present.tables import fmt_validity, shorten
from .entity import closest_names, find_entities, most_mentioned

EPISODES_LIMIT = 50
"""Episodes of an entity whose decisions an explanation reads, at most (the newest)."""

_DECIDED_BY = {
    "no_candidates": "no stored fact to compare it with",
    "word_for_word": "the same words as a stored fact",
    "restated": "the same meaning as a stored fact",
    "resolve_call": "the resolve call",
    "unasked": "no resolve call answered it",
}
_RESOLVED = {
    d.NEW: "a new entity (no candidate)",
    "exact": "the same name as a stored entity",
    "head": "the one stored name it heads",
    d.MERGED: "merged into it by the resolve call",
    d.DISTINCT: "kept apart by the resolve call",
}


async def explain(store: GraphReads, group_id: str, subject: str) -> Explanation:
    """A fact's explanation when ``subject`` is the uuid of one of the group's facts, else an entity's."""
    facts = await store.get_facts(group_id, [subject])
    if facts:
        return await explain_fact(store, group_id, subject)
    return await explain_entity(store, group_id, subject)


async def explain_fact(store: GraphReads, group_id: str, fact_uuid: str) -> Explanation:
    """Why the group holds the fact ``fact_uuid`` (module docstring); FactNotFound if it holds none."""
    found = await store.get_facts(group_id, [fact_uuid])
    if not found:
        raise FactNotFound(fact_uuid, group_id)
    fact = found[0]
    retired_by = fact.invalidated_by
    by_episode = retired_by is not None and not retired_by.episode_uuid.startswith(CORRECTION_PREFIX)
    cause_episode = [retired_by.episode_uuid] if retired_by is not None and by_episode else []
    episodes = await _episodes(store, group_id, [*fact.episodes, *cause_episode])
    records = await _records(store, group_id, list(episodes))
    names = {e.uuid: e.name for e in await store.get_entities(group_id, [fact.source_uuid, fact.target_uuid])}
    links: list[Link] = []
    for uuid in fact.episodes:
        episode = episodes.get(uuid)
        links.append(_said(uuid, episode))
        record = records.get(uuid)
        if record is not None:
            links += _fact_links(record, fact.uuid, episode)
    if retired_by is not None and by_episode:
        links += await _retirement(store, group_id, fact, episodes.get(retired_by.episode_uuid),
                                   records.get(retired_by.episode_uuid))  # fmt: skip
    links += _corrections(await _corrections_of(store, group_id, fact.uuid))
    source, target = names.get(fact.source_uuid, "?"), names.get(fact.target_uuid, "?")
    holds = f"{source} {fact.relation} {target}: {fact.text!r}, valid {fmt_validity(fact)}"
    holds += f", retired {fact.expired_at.date().isoformat()}" if fact.expired_at else ", current"
    unrecorded = tuple(u for u in fact.episodes if u in episodes and u not in records)
    return Explanation(group_id, fact_uuid, "fact", holds, _in_order(links), fact.uuid, unrecorded)


async def explain_entity(store: GraphReads, group_id: str, name: str) -> Explanation:
    """Why the group holds (or refused) the entity ``name`` (a name, alias or uuid; module docstring);
    EntityNotFound (with the closest names) when it holds none and no record names it."""
    found = (await find_entities(store, group_id, [name])).get(name, [])
    reads = optional(store, DecisionReads)
    naming = await reads.decisions_naming(group_id, name) if reads is not None else []
    if not found and not any(s.act in (d.REFUSED, d.REPAIRED) for r in naming for s in r.naming(name)):
        raise EntityNotFound(name, group_id, closest=await closest_names(store, [group_id], name))
    entity = (await most_mentioned(store, group_id, found))[0] if found else None
    mentioning = (
        await store.episodes_mentioning(group_id, entity.uuid, EPISODES_LIMIT, EVERYTHING) if entity else []
    )
    records = await _records(store, group_id, [e.uuid for e in mentioning])
    for record in naming:
        records.setdefault(record.episode_uuid, record)
    episodes = {e.uuid: e for e in mentioning}
    episodes.update(await _episodes(store, group_id, [u for u in records if u not in episodes]))
    links: list[Link] = []
    for uuid, record in records.items():
        links += _name_links(record, entity, name, episodes.get(uuid))
    if entity is not None:
        links += _corrections(await _corrections_of(store, group_id, entity.uuid))
    unrecorded = tuple(e.uuid for e in mentioning if e.uuid not in records)
    holds = _entity_holds(entity, len(mentioning)) if entity is not None else None
    found_uuid = entity.uuid if entity is not None else None
    return Explanation(group_id, name, "entity", holds, _in_order(links), found_uuid, unrecorded)


# --- reading ---------------------------------------------------------------------------------------------


async def _episodes(store: GraphReads, group_id: str, uuids: Iterable[str]) -> dict[str, Episode]:
    out: dict[str, Episode] = {}
    for uuid in dict.fromkeys(uuids):
        episode = await store.get_episode(group_id, uuid)
        if episode is not None:
            out[uuid] = episode
    return out


async def _records(
    store: GraphReads, group_id: str, episode_uuids: Sequence[str]
) -> dict[str, DecisionRecord]:
    reads = optional(store, DecisionReads)
    if reads is None or not episode_uuids:
        return {}
    return {r.episode_uuid: r for r in await reads.decision_records(group_id, episode_uuids)}


async def _corrections_of(store: GraphReads, group_id: str, subject: str) -> list[Correction]:
    log = optional(store, CorrectionReads)
    return list(reversed(await log.corrections(group_id, subject=subject))) if log is not None else []


# --- lines -----------------------------------------------------------------------------------------------


def _in_order(links: list[Link]) -> list[Link]:
    """Oldest first (a line without a time after those of its episode: it stays where it was put)."""
    timed = [(link.at, i) for i, link in enumerate(links)]
    last = None
    keys = []
    for at, i in timed:
        last = at if at is not None else last
        keys.append((last.timestamp() if last is not None else 0.0, i))
    return [links[i] for _, i in sorted(keys)]


def _episode_ref(uuid: str, episode: Episode | None) -> str:
    if episode is None:
        return f"episode {uuid} (removed)"
    return f"episode {episode.name!r}" if episode.name else f"episode {uuid}"


def _said(uuid: str, episode: Episode | None) -> Link:
    if episode is None:
        return Link("said", f"{_episode_ref(uuid, None)}", None, uuid)
    text = f"{_episode_ref(uuid, episode)} said: {shorten(episode.content, 100)!r}"
    return Link("said", text, episode.reference_time, uuid)


def _fact_links(record: DecisionRecord, fact_uuid: str, episode: Episode | None) -> list[Link]:
    at = episode.reference_time if episode is not None else None
    links = []
    for step in record.steps:
        if step.stage != d.FACT or not step.ids or step.ids[0] != fact_uuid:
            continue
        line = f"fact line {step.line} of the reply" if step.line else "a fact line of the reply"
        how = _DECIDED_BY.get(step.by, step.by)
        shown = f", {len(step.shown)} candidate(s) shown" if step.by == "resolve_call" else ""
        if step.act == d.RESTATED:
            text = f"{line} {step.subject!r} restated it: merged into it ({how})"
        else:
            text = f"{line} kept as a new fact ({how}{shown})"
        if len(step.ids) > 1:
            text += f"; it retired {len(step.ids) - 1} fact(s)"
        links.append(Link("decided", text, at, record.episode_uuid, step.ids))
        if step.dated:
            links.append(Link("dated", f"dated from the words {step.dated!r}", at, record.episode_uuid))
    return links


async def _retirement(
    store: GraphReads, group_id: str, fact: Fact, episode: Episode | None, record: DecisionRecord | None
) -> list[Link]:
    assert fact.invalidated_by is not None
    cause_uuid, episode_uuid = fact.invalidated_by.fact_uuid, fact.invalidated_by.episode_uuid
    causes = await store.get_facts(group_id, [cause_uuid])
    cause = f"{causes[0].text!r}" if causes else f"fact {cause_uuid} (gone)"
    step = _retire_step(record, fact.uuid)
    how = f" (decided by {_DECIDED_BY.get(step.by, step.by)})" if step is not None and step.by else ""
    at = episode.reference_time if episode is not None else fact.expired_at
    text = f"retired by {_episode_ref(episode_uuid, episode)}: {cause} contradicts it{how}"
    return [Link("retired", text, at, episode_uuid, (fact.uuid, cause_uuid))]


def _retire_step(record: DecisionRecord | None, fact_uuid: str) -> Step | None:
    if record is None:
        return None
    return next((s for s in record.steps if s.stage == d.RETIRE and s.ids and s.ids[0] == fact_uuid), None)


def _name_links(
    record: DecisionRecord, entity: Entity | None, name: str, episode: Episode | None
) -> list[Link]:
    at = episode.reference_time if episode is not None else record.created_at
    where = _episode_ref(record.episode_uuid, episode)
    names = set(entity.normalized_names) if entity is not None else set()
    links = []
    for step in record.steps:
        if step.stage != d.NAME:
            continue
        about_entity = entity is not None and entity.uuid in step.ids
        if about_entity:
            how = _RESOLVED.get(step.act, step.act)
            shown = f", {len(step.shown)} candidate(s) shown" if step.shown else ""
            what = "merged" if step.act == d.MERGED else "resolved"
            links.append(
                Link(what, f"{step.subject!r} in {where}: {how}{shown}", at, record.episode_uuid, step.ids)
            )
        elif step in record.naming(name) or _names(step) & names:
            if step.act == d.REFUSED:
                text = f"{step.subject!r} in {where}: refused by the {step.by} gate ({step.why})"
                links.append(Link("refused", text, at, record.episode_uuid))
            elif step.act == d.REPAIRED:
                text = f"{step.subject!r} in {where}: repaired by {step.by} into {step.became!r} ({step.why})"
                links.append(Link("repaired", text, at, record.episode_uuid))
    return links


def _names(step: Step) -> set[str]:
    return {normalize_name(n) for n in (step.subject, step.became) if n}


def _corrections(corrections: Sequence[Correction]) -> list[Link]:
    links = []
    for correction in corrections:
        what = "merged" if correction.operation == CorrectionOp.MERGE_ENTITIES else "corrected"
        text = f"by hand ({correction.author}): {describe(correction)}"
        if correction.reason:
            text += f"; why: {correction.reason}"
        links.append(Link(what, text, correction.created_at, None, (correction.uuid,)))
    return links


def _entity_holds(entity: Entity, episodes: int) -> str:
    labels = f" ({', '.join(entity.labels)})" if entity.labels else ""
    aliases = f", also {', '.join(repr(a) for a in entity.aliases)}" if entity.aliases else ""
    return f"{entity.name}{labels}{aliases}: named by {episodes} episode(s)"
