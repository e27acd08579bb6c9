"""resolve_fact (json): new facts against their structurally scoped candidates.

Each new fact comes with its OWN candidate block (facts on the same endpoint pair, or sharing one
endpoint in the same role with a compatible relation; never group-wide) and candidate ids that are
unique across the call, so an id can never be read against the wrong fact. The pipeline sends a small,
bounded number of facts per call (``IngestOptions.fact_batch``; 1 gives one fact per call). Each
decision states its reasoning first, then ``duplicate_of`` and ``contradicts`` (candidate ids).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from .base import OutputShape, Prompt


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


class ResolveFactInput(BaseModel):
    facts: list[FactToResolve] = Field(min_length=1)


class FactDecision(BaseModel):
    model_config = ConfigDict(extra="ignore")

    id: str
    reasoning: str = Field(default="", max_length=600)
    duplicate_of: list[str] = Field(default_factory=list)
    contradicts: list[str] = Field(default_factory=list)


class ResolveFactOutput(BaseModel):
    model_config = ConfigDict(extra="ignore")

    decisions: list[FactDecision] = Field(default_factory=list)


EXAMPLE = ResolveFactInput(
    facts=[
        FactToResolve(
            id="1",
            fact="Alice lives in Berlin.",
            valid_at="2024-04-01T00:00:00Z",
            candidates=[
                FactCandidate(id="1.1", fact="Alice lives in Paris.", valid_at="2020-01-01T00:00:00Z")
            ],
        )
    ]
)

PROMPT: Prompt[ResolveFactInput, ResolveFactOutput] = Prompt(
    name="resolve_fact",
    version="1",
    input_model=ResolveFactInput,
    output_model=ResolveFactOutput,
    response_type="json",
    example=EXAMPLE,
    small=True,
    # One decision per new fact: an id, a reasoning of at most 600 characters, two short id lists.
    shape=OutputShape(per_item=200, items=lambda d: len(d.facts), base=24),
)
