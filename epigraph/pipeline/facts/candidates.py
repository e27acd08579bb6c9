"""Which believed facts a new fact is compared with: structurally scoped, then ranked by meaning.

**Scope** (structural, never group-wide). An earlier fact ``old`` is in scope of a new fact ``s -> t``
when it is still believed (not expired) and

- it joins the same endpoint pair, in either direction (always kept, whatever its wording); or
- it shares an endpoint with the new fact, except when the only endpoint they share is the *object*
  of both under the same relation: "Bob lives in Paris" never meets "Alice lives in Paris", so two
  people with the same relation to one thing can never retire each other, whatever a model answers.
  Under different relations the model decides ("Alice bought the house" does retire "Bob owns the
  house"; "Jon performed at the festival" retires "Jon's dance group will perform at the festival").

A fact that shares no endpoint is never read, so it can never be retired.

**Ranking by meaning**, no relation-name lists (a model names relations freely: LIVES_IN, RESIDES_IN,
"is based in"). Two rankings over the scoped facts, fused by reciprocal rank (``fusion.rrf``):

- the cosine of the fact vectors after the shared endpoints' *name vectors* are projected out of both:
  every fact about Caroline names Caroline, so without that every fact of one person looks alike. The
  vectors are the ones already computed (the new fact's batch and the stored facts' and entities' own),
  so this costs no embedding request.
- BM25 over the fact sentences with the endpoints' names left out ("lost his job as a *banker*").

**Shown per shared endpoint** (``select``). The facts sharing only the subject, those sharing only the
object and those on the pair are three lists, each best first; each shared endpoint is shown its own
``FactOptions.candidates_per_end`` best (the ``candidates_always`` best whatever their score, further ones
when their residual cosine reaches ``similarity_floor``), and the pair facts take the remaining
slots, round robin, at most ``max_candidates``: one ranking over all of them let a busy endpoint
take every slot. A user's ``relation_families`` put the same-subject facts of a compatible relation first
in the subject's list. The measurements behind both rules:
docs/decisions/2026-11-25-contradiction-candidates.md.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from rank_bm25 import BM25Okapi

from ...graph.model import Fact
from ...graph.store import FactFilter
from ...graph.temporal import EVERYTHING
from ...language import LUCENE_STOP_WORDS, singular, words
from ...search.fusion import rrf
from ..state import EpisodeRun
from .wording import compatible_relations

Vector = Sequence[float]

POOL_AROUND = 500
"""Newest facts around the episode's endpoints read in one query (the pool every draft ranks)."""
POOL_NEAREST = 20
"""Plus each new fact's nearest facts in the group, kept only when in scope: old facts of a busy entity
that the newest-first read would miss."""
_RRF_K = 5.0


@dataclass(frozen=True, slots=True)
class Ranked:
    fact: Fact
    similarity: float
    """Cosine after the shared endpoints' name vectors are projected out (0 when a vector is missing)."""
    lexical: float
    """BM25 of the fact sentence against the new one, endpoint names left out."""
    pair: bool


def in_scope(new: Fact, old: Fact) -> bool:
    """Structural scope: same endpoint pair, or a shared endpoint that is not only both facts' object
    under one relation."""
    if old.uuid == new.uuid or old.expired_at is not None:
        return False
    ends = {new.source_uuid, new.target_uuid}
    if {old.source_uuid, old.target_uuid} == ends:
        return True
    shared = ends & {old.source_uuid, old.target_uuid}
    only_the_object = shared == {new.target_uuid} and old.target_uuid == new.target_uuid
    return bool(shared) and not (only_the_object and old.relation == new.relation)


def endpoints(new: Fact, old: Fact) -> list[str]:
    return sorted({new.source_uuid, new.target_uuid, old.source_uuid, old.target_uuid})


async def candidate_pool(run: EpisodeRun, facts: Sequence[Fact], vectors: Mapping[str, Vector]) -> list[Fact]:
    """Believed facts around the new facts' endpoints: one read around all of them, plus each new
    fact's nearest facts in the group that are in its scope (``facts`` may hold several versions of one
    fact, with other endpoints: one search per fact, kept when in scope of any version)."""
    store, group = run.store, run.group_id
    if not facts:
        return []
    endpoints = sorted({u for f in facts for u in (f.source_uuid, f.target_uuid)})
    everything = FactFilter(time=EVERYTHING)
    pool = {f.uuid: f for f in await store.facts_around(group, endpoints, everything, limit=POOL_AROUND)}
    versions: dict[str, list[Fact]] = {}
    for fact in facts:
        versions.setdefault(fact.uuid, []).append(fact)
    searched = [u for u in versions if vectors.get(u) is not None]
    found = await asyncio.gather(
        *(store.search_facts_vector([group], vectors[u], POOL_NEAREST, everything) for u in searched)
    )
    for uuid, hits in zip(searched, found, strict=True):
        pool.update((h.item.uuid, h.item) for h in hits if any(in_scope(v, h.item) for v in versions[uuid]))
    return [f for f in pool.values() if f.expired_at is None]


def rank(
    new: Fact,
    vector: Vector | None,
    pool: Sequence[Fact],
    names: Mapping[str, tuple[str, Vector | None]],
    families: Sequence[frozenset[str]] = (),
) -> list[Ranked]:
    """The scoped facts of ``pool`` for ``new``, best first (pair facts and family facts first).

    ``names``: entity uuid -> (name, name vector) for the endpoints involved.
    """
    scoped = [old for old in pool if in_scope(new, old)]
    if not scoped:
        return []
    similarity = {old.uuid: _residual_cosine(new, vector, old, names) for old in scoped}
    lexical = _bm25(new, scoped, names)
    by_meaning = sorted(scoped, key=lambda f: (-similarity[f.uuid], f.uuid))
    by_words = sorted((f for f in scoped if lexical[f.uuid] > 0), key=lambda f: (-lexical[f.uuid], f.uuid))
    fused = rrf([[f.uuid for f in by_meaning], [f.uuid for f in by_words]], k=_RRF_K)
    related = compatible_relations(new.relation, families) if families else frozenset()
    by_uuid = {f.uuid: f for f in scoped}
    out = [
        Ranked(
            fact=by_uuid[uuid],
            similarity=similarity[uuid],
            lexical=lexical[uuid],
            pair={by_uuid[uuid].source_uuid, by_uuid[uuid].target_uuid} == {new.source_uuid, new.target_uuid},
        )
        for uuid, _ in fused
    ]
    first = [r for r in out if r.pair or _same_subject_family(new, r.fact, related)]
    return first + [r for r in out if r not in first]


def select(
    new: Fact, ranked: Sequence[Ranked], limit: int, per_end: int, floor: float, always: int
) -> list[Fact]:
    """At most ``limit`` of ``ranked`` (best first) for ``new``: each endpoint it shares with other facts
    gets its own ``per_end`` best (the ``always`` best whatever their score, further ones from ``floor``
    up), the pair facts the slots left (at least a third); round robin pair, subject, object."""
    ends = [
        [r for r in ranked if not r.pair and end in (r.fact.source_uuid, r.fact.target_uuid)]
        for end in dict.fromkeys((new.source_uuid, new.target_uuid))
    ]
    shown = [
        [r.fact for i, r in enumerate(end) if i < always or r.similarity >= floor][:per_end] for end in ends
    ]
    room = max(limit - sum(len(end) for end in shown), limit // 3)
    pair = [r.fact for r in ranked if r.pair][:room]
    return interleave([pair, *shown])[: max(0, limit)]


def interleave(lists: Sequence[Sequence[Fact]]) -> list[Fact]:
    """Round robin over the lists (each best first), each fact once."""
    seen: dict[str, Fact] = {}
    for position in range(max((len(x) for x in lists), default=0)):
        for facts in lists:
            if position < len(facts):
                seen.setdefault(facts[position].uuid, facts[position])
    return list(seen.values())


def _same_subject_family(new: Fact, old: Fact, related: frozenset[str]) -> bool:
    return bool(related) and old.source_uuid == new.source_uuid and old.relation in related


def _residual_cosine(
    new: Fact, vector: Vector | None, old: Fact, names: Mapping[str, tuple[str, Vector | None]]
) -> float:
    if vector is None or old.text_embedding is None:
        return 0.0
    a = np.asarray(vector, dtype=np.float64)
    b = np.asarray(old.text_embedding, dtype=np.float64)
    basis = _orthonormal([names[u][1] for u in endpoints(new, old) if u in names])
    for axis in basis:
        a = a - (a @ axis) * axis
        b = b - (b @ axis) * axis
    norm = float(np.linalg.norm(a) * np.linalg.norm(b))
    return float(a @ b) / norm if norm > 1e-12 else 0.0


def _orthonormal(vectors: Sequence[Vector | None]) -> list[np.ndarray]:
    """Gram-Schmidt over the name vectors that exist."""
    basis: list[np.ndarray] = []
    for raw in vectors:
        if raw is None:
            continue
        v = np.asarray(raw, dtype=np.float64)
        for axis in basis:
            v = v - (v @ axis) * axis
        length = float(np.linalg.norm(v))
        if length > 1e-9:
            basis.append(v / length)
    return basis


def _bm25(
    new: Fact, scoped: Sequence[Fact], names: Mapping[str, tuple[str, Vector | None]]
) -> dict[str, float]:
    """BM25 of each scoped sentence against the new one, the endpoints' name words left out."""
    ends = {new.source_uuid, new.target_uuid} | {u for f in scoped for u in (f.source_uuid, f.target_uuid)}
    skip = {w for u in ends if u in names for w in _words(names[u][0])}
    query = [w for w in _words(new.text) if w not in skip]
    documents = [[w for w in _words(f.text) if w not in skip] for f in scoped]
    if not query or not any(documents):
        return {f.uuid: 0.0 for f in scoped}
    scores = BM25Okapi([d or ["\x00"] for d in documents]).get_scores(query)
    present = [bool(set(query) & set(d)) for d in documents]
    return {f.uuid: float(s) if hit else 0.0 for f, s, hit in zip(scoped, scores, present, strict=True)}


def _words(text: str) -> list[str]:
    return [singular(w) for w in words(text.casefold()) if w not in LUCENE_STOP_WORDS and len(w) > 1]
