"""From extracted fact lines to dated draft facts between resolved entities.

- Endpoint names are matched to the resolved entities case-insensitively and through every surface
  form and alias (never dropping a fact for a case difference); a name the episode did not extract is
  looked up in the group by exact name/alias; only a name found nowhere drops its fact (reported).
- Relations are normalized to SCREAMING_SNAKE_CASE; custom relation types are enforced: a fact whose
  endpoints' types are not an allowed pair is dropped and reported, never stored untyped.
- Dates: the time words of a fact line's own sentence ("yesterday", "since 2019", "from 2018 to 2020",
  an ISO date), read deterministically against the episode's reference time (``dating.sentence_dates``);
  a fact whose words state no time has an unknown start (``graph.temporal``). No model call dates. With
  ``IngestOptions.dates_stated_only`` (the local model's), a date the episode's own words do not state
  (time words copied from the prompt, a year made up) is left unknown and reported.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from ..episodes.events import FactExtracted
from ..graph.model import Entity, Fact, normalize_name
from ..prompts.extraction import ExtractedFact
from .dating import among, sentence_dates, stated_dates, without_iso_dates
from .entities import EntityResolver
from .grounding import grounded_facts
from .name_matching import normalize_relation, normalize_text
from .ontology import clean_attributes
from .state import EpisodeRun

_ARTICLES = ("the ", "a ", "an ")


@dataclass
class DraftFact:
    key: str
    fact: Fact


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


async def build_drafts(
    run: EpisodeRun, resolver: EntityResolver, lines: Sequence[ExtractedFact]
) -> list[DraftFact]:
    """Map, check and date the extracted lines; drops are reported as warnings."""
    index = EndpointIndex(resolver)
    lines = grounded_facts(run, resolver.grounding, lambda name: index.find(name) is not None, lines)
    await _lookup_unknown_names(run, index, lines)
    drafts: list[DraftFact] = []
    seen: set[tuple[str, str, str, str]] = set()
    for line in lines:
        draft = _draft(run, resolver, index, line, key=str(len(drafts) + 1))
        if draft is None:
            continue
        f = draft.fact
        identity = (f.source_uuid, f.target_uuid, f.relation, normalize_text(f.text))
        if identity in seen:
            continue
        seen.add(identity)
        drafts.append(draft)
        run.event(FactExtracted, text=f.text)
    return drafts


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
    run: EpisodeRun, resolver: EntityResolver, index: EndpointIndex, line: ExtractedFact, key: str
) -> DraftFact | None:
    source, target = index.find(line.source), index.find(line.target)
    where = f"fact {line.fact!r}"
    if source is None or target is None:
        missing = line.source if source is None else line.target
        run.report.dropped_lines += 1
        run.report.warn(f"{where} dropped: {missing!r} is no entity of the episode")
        return None
    if source == target:
        run.report.warn(f"{where} dropped: both ends are the same entity")
        return None
    relation = normalize_relation(line.relation)
    if relation is None:
        run.report.warn(f"{where} dropped: relation {line.relation!r} is not usable")
        return None
    ontology = run.options.ontology
    refused = ontology.check_fact(
        relation, resolver.entities[source].labels, resolver.entities[target].labels
    )
    if refused is not None:
        run.report.warn(f"{where} dropped: {refused}")
        return None
    attributes, problems = clean_attributes(ontology.relation_model(relation), line.attributes)
    for problem in problems:
        run.report.warn(f"{where}: {problem}")
    valid_at, invalid_at = _stated(
        run, where, *sentence_dates(outside_names(line), run.episode.reference_time)
    )
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


def _stated(run: EpisodeRun, where: str, *days: datetime | None) -> list[datetime | None]:
    """The line's dates that the episode's own words state too (``dating.among``); a date they do not
    (time words the model copied from the prompt's examples, a year it made up) is left unknown, and
    said in the report. Only with ``IngestOptions.dates_stated_only``."""
    if not run.options.dates_stated_only or all(day is None for day in days):
        return list(days)
    stated = stated_dates(run.episode.content, run.episode.reference_time)
    kept: list[datetime | None] = []
    for day in days:
        if day is not None and not among(day, stated):
            run.report.warn(f"{where}: the message states no {day.date().isoformat()}; left undated")
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
