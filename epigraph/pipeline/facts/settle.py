"""The facts room's one entry point: what an episode's fact lines change in the graph.

:func:`settle_facts` runs the room's steps in this order, each gate a named step whose decision comes
back in :class:`SettledFacts` (``verdicts``: what a gate refused or changed; ``decisions``: what decided
each draft):

1. **drafts** (``drafts``): each fact line mapped onto the episode's entities, checked and dated, through
   the gates ``grounded``, ``endpoints``, ``two_ends``, ``relation``, ``types``, ``stated_dates`` and
   ``repeat``;
2. **one embedding batch** of the drafts' sentences (their candidates are ranked by meaning);
3. ``restated_in_episode`` (``FactOptions.restated_similarity``): a draft restating an earlier one of the
   episode is dropped (``restatements``);
4. **candidates** (``candidates``): the believed facts each draft is compared with, structurally scoped,
   ranked by meaning;
5. **decisions** (``resolution.decide``): a candidate repeated word for word or by meaning, no candidate
   at all, else the episode's ONE resolve call (``resolve_call``; it also settles the names room's
   ambiguous names), whose retirements are checked (``retire_all_guard``, ``restatement``,
   ``retire_off``) and kept ``in_scope``;
6. **applied** (``resolution.apply``): new facts, provenance extended, contradictions retired by
   ``graph.temporal``; the new facts carry their sentence vectors.

Nothing is written: the changes go into the episode's one write (``pipeline.episode``). Steps 2 to 6 are
the episode's ``resolve_facts`` stage.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from ...episodes.verdicts import Verdict
from ...prompts.extraction import ExtractedFact
from ..names.resolver import EntityResolver
from ..state import EpisodeRun
from .drafts import DraftFact, build_drafts
from .resolution import FactChanges, apply, decide
from .resolve_call import Decision
from .restatements import without_repeats


@dataclass
class SettledFacts:
    """What the episode's facts change (``changes``), what decided each draft (``decisions``, by draft
    key), and the verdict of each gate that refused or changed a line or a decision, in order."""

    changes: FactChanges
    decisions: dict[str, Decision] = field(default_factory=dict)
    verdicts: list[Verdict] = field(default_factory=list)
    drafts: list[DraftFact] = field(default_factory=list)
    """The drafts decided (their lines, keys and facts: the decision record's)."""


async def settle_facts(
    run: EpisodeRun, resolver: EntityResolver, lines: Sequence[ExtractedFact]
) -> SettledFacts:
    """The episode's fact lines through the room's steps, in order (module docstring)."""
    built = await build_drafts(run, resolver, lines)
    verdicts = list(built.verdicts)
    started = time.perf_counter()
    drafts = built.drafts
    vectors = await _embed(run, drafts)
    threshold = run.options.facts.restated_similarity
    if threshold is not None:
        drafts, restated = without_repeats(run, drafts, vectors, threshold)
        verdicts += restated
    decisions = await decide(run, drafts, vectors, resolver)
    changes = apply(run, drafts, decisions)
    for uuid, fact in list(changes.new.items()):
        if fact.text_embedding is None and uuid in vectors:
            changes.new[uuid] = fact.model_copy(update={"text_embedding": vectors[uuid]})
    run.report.stage("resolve_facts", started)
    verdicts += [v for d in decisions.values() for v in d.verdicts]
    return SettledFacts(changes, decisions, verdicts, list(drafts))


async def _embed(run: EpisodeRun, drafts: Sequence[DraftFact]) -> dict[str, list[float]]:
    if not drafts:
        return {}
    vectors = await run.embedder.embed([d.fact.text for d in drafts])
    return {d.fact.uuid: [float(x) for x in v] for d, v in zip(drafts, vectors, strict=True)}
