"""resolve_episode (lines): ONE call per episode for every ambiguous entity and every new fact with
candidates, answered one short line per item.

Entities first: each ambiguous new entity (no exact name/alias match, but plausible candidates) with its
own candidate block; then facts: each new fact with its own candidate block, ids unique across the call
so an id can never be read against the wrong item. A fact that touches an ambiguous entity is shown the
candidates it would have under every answer for that entity; the pipeline keeps only the picks that
still share an endpoint with the fact once the entities are decided.

The reply is one line per item, in the order asked::

    E1 E1.2          the new name is candidate E1.2 (or: E1 new)
    1 ends 1.1       new fact 1 ends candidate 1.1 (or: 1 same 1.2 / 1 same 1.2 ends 1.3 / 1 new)

A grammar (for endpoints that take one) allows exactly these lines, each naming only the ids offered
for its item, so a reply is a handful of tokens and never names an id that was not shown (a JSON
decision with a reasoning took ten times as many: docs/decisions/2026-11-25-bounded-model-output.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, Field, computed_field, model_validator

from .base import OutputShape, Prompt
from .grammar import literal
from .parsing import ReplyError


class EntityCandidate(BaseModel):
    id: str
    name: str
    entity_type: str | None = None
    summary: str = ""


class EntityQuestion(BaseModel):
    id: str
    name: str
    entity_type: str | None = None
    candidates: list[EntityCandidate] = Field(min_length=1, max_length=12)


class FactCandidate(BaseModel):
    id: str
    fact: str
    valid_at: str | None = None
    invalid_at: str | None = None


class FactToResolve(BaseModel):
    id: str
    fact: str
    valid_at: str | None = None
    candidates: list[FactCandidate] = Field(min_length=1, max_length=12)


def _day(value: str | None) -> str | None:
    return value[:10] if value else None


def _when(valid_at: str | None, invalid_at: str | None = None) -> str:
    start, end = _day(valid_at), _day(invalid_at)
    if start and end:
        return f" (from {start} to {end})"
    if end:
        return f" (until {end})"
    return f" (from {start})" if start else ""


class ResolveEpisodeInput(BaseModel):
    episode: str = Field(description="The episode that mentions the entities (clipped).")
    entities: list[EntityQuestion] = Field(default_factory=list, exclude=True)
    facts: list[FactToResolve] = Field(default_factory=list, exclude=True)

    @model_validator(mode="after")
    def _something_to_resolve(self) -> ResolveEpisodeInput:
        if not self.entities and not self.facts:
            raise ValueError("resolve_episode needs at least one entity or fact to resolve")
        return self

    @computed_field  # type: ignore[prop-decorator]
    @property
    def questions(self) -> str:
        """The items as the prompt shows them: one line each, its candidates after the colon."""
        lines = []
        if self.entities:
            lines.append("Names:")
            for q in self.entities:
                shown = " | ".join(f"{c.id} {_entity(c)}" for c in q.candidates)
                lines.append(f"{q.id} {q.name}: {shown}")
        if self.facts:
            lines.append("Facts:")
            for f in self.facts:
                shown = " | ".join(
                    f"{c.id} {_said(c.fact)}{_when(c.valid_at, c.invalid_at)}" for c in f.candidates
                )
                lines.append(f"{f.id} {_said(f.fact)}{_when(f.valid_at)}: {shown}")
        return "\n".join(lines)


def _said(sentence: str) -> str:
    return sentence.rstrip(" .!")


def _entity(candidate: EntityCandidate) -> str:
    about = f" ({candidate.summary})" if candidate.summary else ""
    return f"{candidate.name}{about}"


@dataclass(frozen=True)
class EntityVerdict:
    id: str
    same_as: str | None = None
    """The candidate id the new name is, or None (a new entity)."""


@dataclass(frozen=True)
class FactVerdict:
    id: str
    duplicate_of: list[str] = field(default_factory=list)
    contradicts: list[str] = field(default_factory=list)


NEW = "new"


def _ids(text: str) -> list[str]:
    return [i for i in (part.strip() for part in text.replace(" ", ",").split(",")) if i]


def verdict_line(fact_id: str, duplicate_of: Sequence[str] = (), contradicts: Sequence[str] = ()) -> str:
    """A fact's decision line as a reply writes it: ``1 same 1.2 ends 1.3`` or ``1 new``."""
    parts = [fact_id]
    if duplicate_of:
        parts.append("same " + ",".join(duplicate_of))
    if contradicts:
        parts.append("ends " + ",".join(contradicts))
    return " ".join(parts) if len(parts) > 1 else f"{fact_id} {NEW}"


class VerdictLines:
    """``E1 E1.2`` / ``E1 new`` for names; ``1 same 1.2 ends 1.3`` / ``1 new`` for facts."""

    def decode(self, line: str, data: Any) -> list[EntityVerdict | FactVerdict]:
        item, _, rest = line.strip().partition(" ")
        rest = rest.strip()
        if not item or not rest:
            raise ReplyError("a decision line is '<id> <decision>'")
        if item.upper().startswith("E") and item[1:].isdigit():
            choice = rest.split()[0]
            return [EntityVerdict(item.upper(), None if choice.casefold() == NEW else choice.upper())]
        if rest.casefold() == NEW:
            return [FactVerdict(item)]
        lowered = rest.casefold()
        if not lowered.startswith(("same", "ends")):
            raise ReplyError(f"fact {item}: expected 'same', 'ends' or 'new', got {rest[:40]!r}")
        same, _, ends = lowered.partition("ends")
        return [FactVerdict(item, _ids(same.replace("same", "", 1)), _ids(ends))]

    def grammar(self, data: Any, max_lines: int) -> str:
        """Exactly one line per item, in the order asked, naming only that item's ids."""
        rules: list[str] = []
        order: list[str] = []
        for n, q in enumerate(data.entities, start=1):
            ids = " | ".join(literal(c.id) for c in q.candidates)
            rules.append(f"e{n} ::= {literal(q.id + ' ')} ({literal(NEW)} | {ids})")
            order.append(f"e{n}")
        for n, f in enumerate(data.facts, start=1):
            ids = " | ".join(literal(c.id) for c in f.candidates)
            rules.append(f"c{n} ::= {ids}")
            more = f' ( "," c{n} ){{0,{len(f.candidates) - 1}}}' if len(f.candidates) > 1 else ""
            rules.append(f"l{n} ::= c{n}{more}")
            decision = f'{literal(NEW)} | "same " l{n} ( " ends " l{n} )? | "ends " l{n}'
            rules.append(f"f{n} ::= {literal(f.id + ' ')} ( {decision} )")
            order.append(f"f{n}")
        root = " ".join(f'{name} "\\n"' for name in order)
        return "\n".join([f"root ::= {root}", *rules]) + "\n"


EXAMPLE = ResolveEpisodeInput(
    episode="Alice: Mel and I moved to Berlin last month.",
    entities=[
        EntityQuestion(
            id="E1", name="Mel", entity_type="Person", candidates=[EntityCandidate(id="E1.1", name="Melanie")]
        )
    ],
    facts=[
        FactToResolve(
            id="1",
            fact="Alice lives in Berlin.",
            valid_at="2024-04-01T00:00:00Z",
            candidates=[
                FactCandidate(id="1.1", fact="Alice lives in Paris.", valid_at="2020-01-01T00:00:00Z")
            ],
        )
    ],
)

PROMPT: Prompt[ResolveEpisodeInput, EntityVerdict | FactVerdict] = Prompt(
    name="resolve_episode",
    version="3",
    input_model=ResolveEpisodeInput,
    output_model=None,
    response_type="lines",
    lines=VerdictLines(),
    example=EXAMPLE,
    small=True,
    # One line per item: an id and a decision (a few candidate ids at most).
    shape=OutputShape(per_item=16, items=lambda d: len(d.entities) + len(d.facts), base=4, floor=16),
)
