"""What ``live.py`` measures of a built graph against a gold graph when the model wrote its own names
and sentences (so nothing can be compared by exact text); its calls are ``live_calls``.

Matching rules (stated in the results' notes):

- entities: the same normalized name or alias, or the same content words up to plural/verb endings
  ("Melanie's kids" = "kids of Melanie"; "Mel" is not "Melanie" unless the graph merged them);
- facts: a gold fact is recalled by a built fact joining the same two entities (either direction), or
  by a built fact saying the same thing: cosine of the two sentences' embeddings >= the threshold;
- a gold contradiction (a later fact retiring an earlier one) is applied when a built fact matching the
  earlier one was retired by a built fact matching the later one; every other retirement is spurious.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np

from bench.quality.name_rules import kept_by_rule
from bench.quality.reading import fact_precision, facts_readable, owner_right, summary_check
from bench.shared.gold import GoldSet, Turn, canonical_ids
from epigraph.embed import Embedder
from epigraph.episodes.events import EpisodeResult
from epigraph.graph.model import Entity, Fact, normalize_name
from epigraph.graph.store import GraphStore
from epigraph.graph.temporal import effective_valid_at
from epigraph.language import plain_words as words
from epigraph.language import stem
from epigraph.pipeline.dating import among, parse_iso

# ------------------------------------------------------------------------------------------- graph


def name_key(name: str) -> frozenset[str]:
    """Content words of a name up to endings: the loose identity of an entity name."""
    return frozenset(stem(w) for w in words(name) if w not in ("s", "the", "a", "an", "of"))


def same_entity(a: Sequence[str], b: Sequence[str]) -> bool:
    """Whether two entities (each as its name and aliases) are one by name or by content words."""
    exact = {normalize_name(n) for n in a} & {normalize_name(n) for n in b}
    return bool(exact) or bool({name_key(n) for n in a} & {name_key(n) for n in b} - {frozenset()})


@dataclass
class Built:
    """The final state of every entity and fact the episodes wrote."""

    entities: dict[str, Entity]
    facts: list[Fact]

    def names(self, uuid: str) -> list[str]:
        entity = self.entities.get(uuid)
        return [entity.name, *entity.aliases] if entity else []


async def built_graph(store: GraphStore, group: str, results: Sequence[EpisodeResult]) -> Built:
    entity_ids = sorted({e.uuid for r in results for e in r.entities})
    fact_ids = sorted({f.uuid for r in results for f in (*r.facts, *r.invalidated)})
    facts = await store.get_facts(group, fact_ids)
    ends = sorted({u for f in facts for u in (f.source_uuid, f.target_uuid)} | set(entity_ids))
    entities = {e.uuid: e for e in await store.get_entities(group, ends)}
    return Built(entities, facts)


async def stored_readable(
    store: GraphStore, group: str, results: Sequence[EpisodeResult], speakers: Sequence[str]
) -> dict[str, float]:
    """``facts_readable`` (and its checks' failures) of what the episodes wrote (the ingest bench's,
    from scripted answers: how the gold sentences read once stored)."""
    built = await built_graph(store, group, results)
    message_of = {r.episode.uuid: r.episode.content for r in results}
    return facts_readable(built.facts, built.names, message_of, speakers)[0]


def _gold_in(gold_set: GoldSet, turns: Sequence[Turn]) -> list[dict[str, Any]]:
    chosen = {t.dia_id for t in turns}
    return [t for dia_id, t in gold_set.gold["turns"].items() if dia_id in chosen]


async def graph_quality(
    store: GraphStore,
    gold_set: GoldSet,
    turns: Sequence[Turn],
    results: Sequence[EpisodeResult],
    embedder: Embedder,
    threshold: float,
) -> dict[str, float]:
    """Entity recall/precision, fact recall, contradictions against the gold of the turns that ran."""
    gold_turns = _gold_in(gold_set, turns)
    built = await built_graph(store, gold_set.name, results)
    metrics = entity_quality(gold_turns, built)
    episodes = _episodes_of(turns, results)
    metrics.update(await fact_quality(gold_set, gold_turns, built, embedder, threshold, episodes))
    metrics.update(await reader_quality(gold_set, gold_turns, built, results, embedder, threshold))
    metrics.update(name_rule_quality(gold_set, gold_turns, built, results))
    return metrics


def name_rule_quality(
    gold_set: GoldSet, gold_turns: Sequence[dict[str, Any]], built: Built, results: Sequence[EpisodeResult]
) -> dict[str, float]:
    """The graph each candidate name rule would leave (``name_rules``), scored: ``names.<rule>.``
    ``entity_precision``, ``entity_recall``, ``entities_built``, ``fact_recall_endpoints``."""
    mentions: dict[str, int] = {}
    for result in results:
        for uuid in {e.uuid for e in result.entities}:
            mentions[uuid] = mentions.get(uuid, 0) + 1
    canonical = canonical_ids(gold_set.gold)
    gold = [f for t in gold_turns for f in t["facts"] if canonical[f["id"]] == f["id"]]
    speakers = list(gold_set.gold.get("speakers", []))
    figures: dict[str, float] = {}
    for rule, kept in kept_by_rule(built.entities, built.facts, mentions, speakers).items():
        facts = [f for f in built.facts if f.source_uuid in kept and f.target_uuid in kept]
        left = Built({u: built.entities[u] for u in kept}, facts)
        quality = entity_quality(gold_turns, left)
        for key in ("entity_precision", "entity_recall", "entities_built"):
            figures[f"names.{rule}.{key}"] = quality[key]
        ends = sum(1 for g in gold if any(_same_ends(g, f, left) for f in facts))
        figures[f"names.{rule}.fact_recall_endpoints"] = _share(ends, len(gold))
    return figures


async def reader_quality(
    gold_set: GoldSet,
    gold_turns: Sequence[dict[str, Any]],
    built: Built,
    results: Sequence[EpisodeResult],
    embedder: Embedder,
    threshold: float,
    unreadable: list[tuple[Fact, list[str]]] | None = None,
) -> dict[str, float]:
    """What a reader sees (``bench.quality.reading``): readable facts, owners, summaries;
    ``unreadable`` gets the facts that do not read, with the checks each failed."""
    speakers = list(gold_set.gold.get("speakers", []))
    message_of = {r.episode.uuid: r.episode.content for r in results}
    figures, failures = facts_readable(built.facts, built.names, message_of, speakers)
    if unreadable is not None:
        unreadable.extend(failures)

    async def cosines(left: list[str], right: list[str]) -> np.ndarray:
        return await _cosines(left, right, embedder)

    gold_names = list(gold_entities(gold_turns).values())
    canonical = canonical_ids(gold_set.gold)
    facts = [f for t in gold_turns for f in t["facts"] if canonical[f["id"]] == f["id"]]
    every = [f["fact"] for t in gold_turns for f in t["facts"]]
    entities = list(built.entities.values())
    figures.update(
        await owner_right(built.facts, entities, every, gold_names, speakers, cosines, same_entity, threshold)
    )
    aliases = {normalize_name(n): names for names in gold_names for n in names}
    ends = [
        (
            normalize_name(aliases.get(normalize_name(f["source"]), [f["source"]])[0]),
            normalize_name(aliases.get(normalize_name(f["target"]), [f["target"]])[0]),
            f["fact"],
        )
        for f in facts
    ]
    figures.update(
        await summary_check(
            [[normalize_name(n[0]), *list(n)] for n in gold_names],
            ends,
            entities,
            [f.text for f in built.facts],
            cosines,
            same_entity,
            threshold,
        )
    )
    return figures


def _episodes_of(turns: Sequence[Turn], results: Sequence[EpisodeResult]) -> dict[str, str]:
    """dia_id -> the uuid of the episode that turn became (results come in the turns' order)."""
    return {
        turn.dia_id: result.episode.uuid
        for turn, result in zip(turns, results, strict=False)
        if result.episode.content.endswith(turn.text)
    }


def gold_entities(gold_turns: Sequence[dict[str, Any]]) -> dict[str, list[str]]:
    """Each gold entity of the turns (by its first name, normalized) -> its names (aliases merged)."""
    aliases = {normalize_name(d["name"]): d["same_as"] for t in gold_turns for d in t.get("duplicates", [])}
    gold: dict[str, list[str]] = {}
    for turn in gold_turns:
        for entity in turn["entities"]:
            norm = normalize_name(entity["name"])
            canonical = normalize_name(aliases.get(norm, entity["name"]))
            gold.setdefault(canonical, [aliases.get(norm, entity["name"])]).append(entity["name"])
    return gold


def entity_quality(gold_turns: Sequence[dict[str, Any]], built: Built) -> dict[str, float]:
    gold = gold_entities(gold_turns)
    entities = [built.names(u) for u in built.entities]
    found = [g for g in gold.values() if any(same_entity(g, e) for e in entities)]
    exact = [
        g
        for g in gold.values()
        if any({normalize_name(n) for n in g} & {normalize_name(n) for n in e} for e in entities)
    ]
    correct = [e for e in entities if any(same_entity(g, e) for g in gold.values())]
    return {
        "entities_expected": len(gold),
        "entities_built": len(entities),
        "entity_recall": _share(len(found), len(gold)),
        "entity_recall_exact": _share(len(exact), len(gold)),
        "entity_precision": _share(len(correct), len(entities)),
    }


async def fact_quality(
    gold_set: GoldSet,
    gold_turns: Sequence[dict[str, Any]],
    built: Built,
    embedder: Embedder,
    threshold: float,
    episode_of: Mapping[str, str],
) -> dict[str, float]:
    """Fact recall (same endpoints or meaning), contradictions applied, and restatements merged: a
    gold fact that restates an earlier one (``duplicate_of``) whose turn the graph counted as one more
    statement of a built fact matching the first (its provenance holds both turns' episodes;
    ``episode_of``: dia_id -> episode uuid)."""
    canonical = canonical_ids(gold_set.gold)
    every = {f["id"]: f for t in gold_turns for f in t["facts"]}
    gold = [f for fid, f in every.items() if canonical[fid] == fid]
    statements = list(every.values())
    similar = await _cosines([f["fact"] for f in statements], [f.text for f in built.facts], embedder)
    meaning_of: dict[str, set[int]] = {}
    ends_of: dict[str, set[int]] = {}
    for i, fact in enumerate(statements):
        meaning_of[fact["id"]] = {j for j in range(len(built.facts)) if similar[i, j] >= threshold}
        ends_of[fact["id"]] = {j for j, f in enumerate(built.facts) if _same_ends(fact, f, built)}
    by_meaning = {f["id"]: meaning_of[f["id"]] for f in gold}
    by_ends = {f["id"]: ends_of[f["id"]] for f in gold}
    matched = set().union(*meaning_of.values(), *ends_of.values()) if statements else set()
    recalled = [fid for fid in by_meaning if by_meaning[fid] or by_ends[fid]]
    pairs = [
        (canonical[f["id"]], canonical[old])
        for f in every.values()
        for old in f.get("contradicts", [])
        if old in every or canonical[old] in every
    ]
    applied, explained = 0, set()
    for new, old in pairs:
        olds = by_meaning.get(old, set()) | by_ends.get(old, set())
        news = {built.facts[j].uuid for j in by_meaning.get(new, set()) | by_ends.get(new, set())}
        hit = [j for j in olds if (by := built.facts[j].invalidated_by) is not None and by.fact_uuid in news]
        applied += bool(hit)
        explained.update(hit)
    restated = [
        (fid, canonical[fid]) for fid in every if canonical[fid] != fid and canonical[fid] in by_meaning
    ]
    merged = 0
    for fid, first in restated:
        both = {episode_of.get(first.split("#")[0]), episode_of.get(fid.split("#")[0])}
        merged += any(both <= set(built.facts[j].episodes) for j in by_meaning[first] | by_ends[first])
    starts: dict[int, set[datetime]] = {}  # built fact -> the starts of the dated gold facts it matches
    for fact in gold:
        if (day := parse_iso(fact.get("valid_at"))) is not None:
            for j in by_meaning[fact["id"]] | by_ends[fact["id"]]:
                starts.setdefault(j, set()).add(day)
    dates_right = sum(_starts_when(built.facts[j], days) for j, days in starts.items())
    retired = [j for j, f in enumerate(built.facts) if f.invalidated_by is not None]
    return {
        "facts_expected": len(gold),
        "facts_built": len(built.facts),
        "fact_recall": _share(len(recalled), len(gold)),
        "fact_recall_endpoints": _share(sum(1 for s in by_ends.values() if s), len(gold)),
        "fact_recall_meaning": _share(sum(1 for s in by_meaning.values() if s), len(gold)),
        "fact_precision": fact_precision([j in matched for j in range(len(built.facts))]),
        "fact_dates_checked": len(starts),
        "fact_dates_right": _share(dates_right, len(starts)),
        "restatements_expected": len(restated),
        "restatements_merged": merged,
        "contradictions_expected": len(pairs),
        "contradictions_applied": applied,
        "invalidations_spurious": len([j for j in retired if j not in explained]),
    }


def _starts_when(fact: Fact, days: set[datetime]) -> bool:
    """Whether a built fact starts (its own date, else when it was said: ``effective_valid_at``) on
    one of the starts of the gold facts it matches, at the coarser precision of the two."""
    return fact.stated_at is not None and among(
        effective_valid_at(fact.valid_at, fact.stated_at), frozenset(days)
    )


def _same_ends(gold: dict[str, Any], fact: Fact, built: Built) -> bool:
    source, target = built.names(fact.source_uuid), built.names(fact.target_uuid)
    forward = same_entity([gold["source"]], source) and same_entity([gold["target"]], target)
    backward = same_entity([gold["source"]], target) and same_entity([gold["target"]], source)
    return forward or backward


async def _cosines(left: list[str], right: list[str], embedder: Embedder) -> np.ndarray:
    if not left or not right:
        return np.zeros((len(left), len(right)))
    a, b = await embedder.embed(left), await embedder.embed(right)
    a = a / np.maximum(np.linalg.norm(a, axis=1, keepdims=True), 1e-12)
    b = b / np.maximum(np.linalg.norm(b, axis=1, keepdims=True), 1e-12)
    return np.asarray(a @ b.T)


def _share(hits: int, total: int) -> float:
    return round(hits / total, 4) if total else 1.0
