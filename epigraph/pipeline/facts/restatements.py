"""Restatements without a model: a fact joining the same two entities as another, in the same words'
meaning, is one more statement of it.

A small model says one thing two or three times in a reply ("[Melanie] is off to go swimming [kids]"
and "... with the kids"), and a conversation says it again a turn later ("Jon is passionate about
dancing", then "Dancing has been my passion"). With ``FactOptions.restated_similarity`` set (the
local model's options: it has no resolve call to ask), a new fact is a restatement of

- an earlier fact of its own episode, when both join the same two entities (either direction) and
  their sentence vectors reach the threshold: the later one is dropped (said in the report);
- a believed fact of the graph among its candidates (``candidates``) on the same two entities
  whose vector reaches it: the episode becomes one more source of that fact
  (``fact_resolution.apply``), no second fact is written.

The vectors are the ones already computed (the new facts' batch, the stored facts' own): no request.
The threshold and the figures behind it: docs/decisions/2026-11-28-names-that-are-things.md.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from ...episodes.verdicts import Verdict
from ...graph.model import Fact
from ..state import EpisodeRun
from .drafts import DraftFact

Vector = Sequence[float]

RESTATED_IN_EPISODE = "restated_in_episode"
"""The gate that drops a draft restating an earlier draft of its episode."""


def same_pair(a: Fact, b: Fact) -> bool:
    """Whether two facts join the same two entities, in either direction."""
    return {a.source_uuid, a.target_uuid} == {b.source_uuid, b.target_uuid}


def cosine(a: Vector | None, b: Vector | None) -> float:
    if a is None or b is None:
        return 0.0
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    norm = float(np.linalg.norm(x) * np.linalg.norm(y))
    return float(x @ y) / norm if norm else 0.0


def without_repeats(
    run: EpisodeRun, drafts: Sequence[DraftFact], vectors: Mapping[str, Vector], threshold: float
) -> tuple[list[DraftFact], list[Verdict]]:
    """The drafts less each one restating an earlier draft of the episode, and a verdict for each one
    taken out (``RESTATED_IN_EPISODE``; also said in the report)."""
    kept: list[DraftFact] = []
    verdicts: list[Verdict] = []
    for draft in drafts:
        fact = draft.fact
        earlier = next(
            (
                k.fact
                for k in kept
                if same_pair(k.fact, fact)
                and cosine(vectors.get(k.fact.uuid), vectors.get(fact.uuid)) >= threshold
            ),
            None,
        )
        if earlier is None:
            kept.append(draft)
        else:
            verdicts.append(Verdict(RESTATED_IN_EPISODE, fact.text, f"it restates {earlier.text[:80]!r}"))
            run.report.warn(f"fact {fact.text[:80]!r} dropped: it restates {earlier.text[:80]!r}")
    return kept, verdicts


def restated(fact: Fact, vector: Vector | None, candidates: Sequence[Fact], threshold: float) -> Fact | None:
    """The candidate on the same two entities that ``fact`` restates (the closest at or above
    ``threshold``), or None."""
    scored = [(cosine(vector, c.text_embedding), c) for c in candidates if same_pair(c, fact)]
    best = max(scored, key=lambda pair: pair[0], default=None)
    return best[1] if best is not None and best[0] >= threshold else None
