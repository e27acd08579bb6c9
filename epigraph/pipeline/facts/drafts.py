"""From extracted fact lines to dated draft facts between resolved entities: the first step of the facts
room (``pipeline/facts/__init__.py``). Each line passes these gates, in this order, each a named step
whose verdict :func:`build_drafts` returns (``Drafts.verdicts``) and the report says in words:

1. ``grounded``: each end is an entity of the episode or grounded in its words (``names.grounding``;
   the check off with ``NameOptions.grounding`` None) -> dropped, a hallucination; a free sentence (the
   separate mode's numbered lines, ``FactOptions.line_format``) must be grounded there too, as a name
   of its length is (most of its content words the episode's) -> dropped, a hallucination;
2. ``endpoints``: each end is an entity of the episode, else of the group by exact name -> dropped;
3. ``two_ends``: not the same entity at both ends -> dropped;
4. ``relation``: a relation that can be made SCREAMING_SNAKE_CASE -> dropped;
5. ``types``: the declared types allow the pair (``Ontology.check_fact``) -> dropped;
6. ``stated_dates`` (``FactOptions.dates_stated_only``): a date its message does not state -> left
   unknown;
7. ``repeat``: the same ends, relation and words as an earlier line of the reply -> dropped silently.

- Endpoint names are matched to the resolved entities case-insensitively and through every surface
  form and alias (never dropping a fact for a case difference); a name the episode did not extract is
  looked up in the group by exact name/alias; only a name found nowhere drops its fact (reported).
- Relations are normalized to SCREAMING_SNAKE_CASE; custom relation types are enforced: a fact whose
  endpoints' types are not an allowed pair is dropped and reported, never stored untyped.
- Dates: the time words of a fact line's own sentence ("yesterday", "since 2019", "from 2018 to 2020",
  an ISO date), read deterministically against the episode's reference time (``dating.sentence_dates``);
  a fact whose words state no time has an unknown start (``graph.temporal``). No model call dates. With
  ``FactOptions.dates_stated_only`` (the local model's), a date the episode's own words do not state
  (time words copied from the prompt, a year made up) is left unknown and reported.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from ...episodes.events import FactExtracted
from ...episodes.verdicts import Verdict
from ...graph.model import Entity, Fact, normalize_name
from ...prompts.extraction import ExtractedFact
from ..dating import among, sentence_dates, stated_dates, without_iso_dates
from ..names.grounding import Grounding, hallucinated
from ..names.resolver import EntityResolver
from ..ontology import clean_attributes
from ..state import EpisodeRun
from .wording import normalize_relation, normalize_text

GROUNDED, ENDPOINTS, TWO_ENDS, RELATION, TYPES = "grounded", "endpoints", "two_ends", "relation", "types"
STATED_DATES, REPEAT = "stated_dates", "repeat"
GATES = (GROUNDED, ENDPOINTS, TWO_ENDS, RELATION, TYPES, STATED_DATES, REPEAT)
"""The gates' names, in the order they run."""
DROPPED_LINES = frozenset({GROUNDED, ENDPOINTS})
"""The refusals counted as dropped lines of the model's reply: a name that is not there."""

_ARTICLES = ("the ", "a ", "an ")


@dataclass
class DraftFact:
    key: str
    fact: Fact
    line: int = 0
    """Its fact line's place in the reply (from 1)."""


class EndpointIndex:
    """Every normalized surface form of the episode's entities -> entity uuid."""

    def __init__(self, resolver: EntityResolver) -> None:
        self.resolver = resolver
        self._index: dict[str, str] = {}
        for uuid, entity in resolver.entities.items():
            for name in entity.normalized_names:
                self._index.setdefault(name, uuid)
        self._index.update(resolver.by_surface)

    def find(self, name: str) -> str | None:
        norm = normalize_name(name)
        if norm in self._index:
            return self._index[norm]
        for article in _ARTICLES:
            if norm.startswith(article) and norm[len(article) :] in self._index:
                return self._index[norm[len(article) :]]
        return None

    def add(self, name: str, entity: Entity) -> None:
        self._index[normalize_name(name)] = entity.uuid
        self.resolver.entities.setdefault(entity.uuid, entity)


@dataclass
class Drafts:
    """The draft facts of an episode's fact lines, and the verdict of each gate that refused a line or
    changed its fact (module docstring), in order."""

    drafts: list[DraftFact] = field(default_factory=list)
    verdicts: list[Verdict] = field(default_factory=list)

    def refuse(self, run: EpisodeRun, verdict: Verdict) -> None:
        """A line ``verdict`` refused: the verdict kept and said in the episode's report (counted a
        dropped line of the reply for the gates of ``DROPPED_LINES``); a repeat's is only kept."""
        self.verdicts.append(verdict)
        if verdict.gate in DROPPED_LINES:
            run.report.dropped_lines += 1
        if verdict.gate != REPEAT:
            run.report.warn(f"fact {verdict.subject!r} dropped: {verdict.why}")


async def build_drafts(run: EpisodeRun, resolver: EntityResolver, lines: Sequence[ExtractedFact]) -> Drafts:
    """The extracted lines through the gates, in their order (module docstring): the drafts kept, and
    what each gate refused or changed (also said in the episode's report)."""
    index = EndpointIndex(resolver)
    out = Drafts()
    grounded = []
    free = run.options.mode == "separate" and run.options.facts.line_format == "numbered"
    for number, line in enumerate(lines, start=1):
        refused = _grounded(resolver.grounding, index, line, free)
        if refused is None:
            grounded.append((number, line))
        else:
            out.refuse(run, refused)
    await _lookup_unknown_names(run, index, [line for _, line in grounded])
    seen: set[tuple[str, str, str, str]] = set()
    for number, line in grounded:
        draft = _draft(run, resolver, index, line, str(len(out.drafts) + 1), out)
        if draft is None:
            continue
        draft.line = number
        f = draft.fact
        identity = (f.source_uuid, f.target_uuid, f.relation, normalize_text(f.text))
        if identity in seen:
            out.refuse(run, Verdict(REPEAT, line.fact, "said again in the reply"))
            continue
        seen.add(identity)
        out.drafts.append(draft)
        run.event(FactExtracted, text=f.text)
    return out


def _grounded(
    grounding: Grounding | None, index: EndpointIndex, line: ExtractedFact, free: bool = False
) -> Verdict | None:
    """Each end an entity of the episode (checked when it was extracted) or grounded in its words, and
    with ``free`` (the model wrote the sentence, not around the names) the sentence grounded too; no
    grounding (the check is off): every line."""
    if grounding is None:
        return None
    ends = (line.source, line.target)
    bad = next((n for n in ends if index.find(n) is None and not grounding.grounded(n)), None)
    if bad is None and free and not grounding.grounded(line.fact):
        return Verdict(GROUNDED, line.fact, "its sentence is not the episode's words (hallucinated)")
    return None if bad is None else Verdict(GROUNDED, line.fact, hallucinated(bad))


async def _lookup_unknown_names(
    run: EpisodeRun, index: EndpointIndex, lines: Sequence[ExtractedFact]
) -> None:
    unknown = sorted({n for line in lines for n in (line.source, line.target) if index.find(n) is None})
    if not unknown:
        return
    found = await run.store.entities_by_names(run.group_id, unknown)
    for name, matches in found.items():
        if matches:
            index.add(name, matches[0])


def _draft(
    run: EpisodeRun,
    resolver: EntityResolver,
    index: EndpointIndex,
    line: ExtractedFact,
    key: str,
    out: Drafts,
) -> DraftFact | None:
    """The line's draft fact, through the gates from ``endpoints`` to ``stated_dates``; None when one
    refused it (given to ``out``)."""
    source, target = index.find(line.source), index.find(line.target)
    if source is None or target is None:
        missing = line.source if source is None else line.target
        out.refuse(run, Verdict(ENDPOINTS, line.fact, f"{missing!r} is no entity of the episode"))
        return None
    if source == target:
        out.refuse(run, Verdict(TWO_ENDS, line.fact, "both ends are the same entity"))
        return None
    relation = normalize_relation(line.relation)
    if relation is None:
        out.refuse(run, Verdict(RELATION, line.fact, f"relation {line.relation!r} is not usable"))
        return None
    ontology = run.options.ontology
    refused = ontology.check_fact(
        relation, resolver.entities[source].labels, resolver.entities[target].labels
    )
    if refused is not None:
        out.refuse(run, Verdict(TYPES, line.fact, refused))
        return None
    attributes, problems = clean_attributes(ontology.relation_model(relation), line.attributes)
    for problem in problems:
        run.report.warn(f"fact {line.fact!r}: {problem}")
    dates = sentence_dates(outside_names(line), run.episode.reference_time)
    valid_at, invalid_at = _stated(run, line, out, *dates)
    fact = Fact(
        uuid=run.child_uuid("fact", key),
        group_id=run.group_id,
        source_uuid=source,
        target_uuid=target,
        relation=relation,
        text=without_iso_dates(line.fact),
        episodes=[run.episode.uuid],
        valid_at=valid_at,
        invalid_at=invalid_at,
        stated_at=run.episode.reference_time,
        created_at=run.now,
        attributes=attributes,
    )
    return DraftFact(key, fact)


def _stated(
    run: EpisodeRun, line: ExtractedFact, out: Drafts, *days: datetime | None
) -> list[datetime | None]:
    """The ``stated_dates`` gate: the line's dates that the episode's own words state too
    (``dating.among``); a date they do not (time words the model copied from the prompt's examples, a
    year it made up) is left unknown, and said in the report. Only with ``FactOptions.dates_stated_only``."""
    if not run.options.facts.dates_stated_only or all(day is None for day in days):
        return list(days)
    stated = stated_dates(run.episode.content, run.episode.reference_time)
    kept: list[datetime | None] = []
    for day in days:
        if day is not None and not among(day, stated):
            why = f"the message states no {day.date().isoformat()}; left undated"
            out.verdicts.append(Verdict(STATED_DATES, line.fact, why, refused=False))
            run.report.warn(f"fact {line.fact!r}: {why}")
            day = None
        kept.append(day)
    return kept


def outside_names(line: ExtractedFact) -> str:
    """The words of a fact's sentence around its two names (where its time words are)."""
    text = line.fact
    for name in (line.source, line.target):
        at = text.casefold().find(name.casefold())
        if at >= 0:
            text = text[:at] + " | " + text[at + len(name) :]
    return text
