"""From extracted fact lines to dated draft facts between resolved entities.

- Endpoint names are matched to the resolved entities case-insensitively and through every surface
  form and alias (never dropping a fact for a case difference); a name the episode did not extract is
  looked up in the group by exact name/alias; only a name found nowhere drops its fact (reported).
- Relations are normalized to SCREAMING_SNAKE_CASE; custom relation types are enforced: a fact whose
  endpoints' types are not an allowed pair is dropped and reported, never stored untyped.
- Dates: ISO values as given; otherwise the temporal expression is normalized deterministically; what
  stays unresolved is dated by ONE date_fact call for the whole episode.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from ..errors import StructuredOutputError
from ..graph.model import Entity, Fact, normalize_name, to_utc
from ..prompts import date_fact as dp
from ..prompts.extract_facts import ExtractedFact
from ..prompts.runtime import run as run_prompt
from .dating import parse_iso, relative_date, resolve_expression
from .entities import EntityResolver
from .events import FactExtracted
from .grounding import grounded_facts
from .names import normalize_relation, normalize_text
from .ontology import clean_attributes
from .state import EpisodeRun

_ARTICLES = ("the ", "a ", "an ")
_NULLS = frozenset({"", "null", "none", "n/a", "unknown", "not specified", "nil"})


@dataclass
class DraftFact:
    key: str
    fact: Fact
    expression: str | None = None
    """A temporal expression neither the model nor the deterministic rules could date."""


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
        run.report.warn(f"{where} dropped: entity {missing!r} was not extracted")
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
    valid_at, invalid_at, unresolved = initial_dates(line, run.episode.reference_time)
    fact = Fact(
        uuid=run.child_uuid("fact", key),
        group_id=run.group_id,
        source_uuid=source,
        target_uuid=target,
        relation=relation,
        text=" ".join(line.fact.split()),
        episodes=[run.episode.uuid],
        valid_at=valid_at,
        invalid_at=invalid_at,
        stated_at=run.episode.reference_time,
        created_at=run.now,
        attributes=attributes,
    )
    return DraftFact(key, fact, unresolved)


def initial_dates(
    line: ExtractedFact, reference: datetime
) -> tuple[datetime | None, datetime | None, str | None]:
    """(valid_at, invalid_at, unresolved expression) from what extraction said."""
    given = [None if _blank(s) else s for s in (line.valid_at, line.invalid_at)]
    valid, invalid = parse_iso(given[0]), parse_iso(given[1])
    unreadable = [s for s in given if s and parse_iso(s) is None]
    if valid is not None and invalid is not None and invalid < valid:
        invalid = None
    if valid is not None and invalid is None and valid.date() == to_utc(reference).date():
        # A small model copies the episode's time into valid_at even for "yesterday" or "last year",
        # which the sentence (or its expression) still says: that day, not the episode's, is the start.
        said = relative_date(line.fact, reference) or relative_date(line.temporal_expression, reference)
        valid = said or valid
    if valid is not None or invalid is not None:
        return valid, invalid, None
    expression = None if _blank(line.temporal_expression) else (line.temporal_expression or "").strip()
    expression = expression or (unreadable[0] if unreadable else None)
    if not expression:
        return None, None, None
    resolved = resolve_expression(expression, reference)
    return resolved, None, (None if resolved is not None else expression)


def _blank(value: str | None) -> bool:
    """Models write "null", "none" or "unknown" as text where they mean no value."""
    return value is None or value.strip().casefold() in _NULLS


async def date_unresolved(run: EpisodeRun, drafts: list[DraftFact]) -> None:
    """ONE date_fact call for every draft whose expression is still undated (none when all are)."""
    pending = {d.key: d for d in drafts if d.expression}
    if not pending:
        return
    data = dp.DateFactInput(
        reference_time=run.episode.reference_time.isoformat(),
        facts=[
            dp.FactToDate(id=k, fact=d.fact.text, expression=d.expression or "") for k, d in pending.items()
        ],
    )
    try:
        result = await run_prompt(run.llm, dp.PROMPT, data)
    except StructuredOutputError as exc:
        run.report.warn(f"date_fact gave no usable reply ({exc}); {len(pending)} fact(s) left undated")
        return
    answer: dp.DateFactOutput = result.value
    for item in answer.dates:
        draft = pending.get(item.id)
        if draft is None:
            run.report.warn(f"date_fact answered for unknown fact id {item.id!r}; ignored")
            continue
        valid, invalid = parse_iso(item.valid_at), parse_iso(item.invalid_at)
        if valid is not None and invalid is not None and invalid < valid:
            invalid = None
        draft.fact = draft.fact.model_copy(update={"valid_at": valid, "invalid_at": invalid})
        draft.expression = None
