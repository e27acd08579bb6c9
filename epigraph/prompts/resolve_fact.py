"""The fact part of ``resolve_episode``: new facts against their structurally scoped candidates.

Each new fact comes with its OWN candidate block (believed facts sharing an endpoint, ranked by meaning:
``pipeline.fact_candidates``; never group-wide) and candidate ids that are unique across the call, so an
id can never be read against the wrong fact. The pipeline sends a small, bounded number of facts per
call (``IngestOptions.fact_batch``). Each decision states its reasoning first, then ``duplicate_of`` and
``contradicts`` (candidate ids).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from .base import Reasoning, every_field_required


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


class FactDecision(BaseModel):
    model_config = ConfigDict(extra="ignore", json_schema_extra=every_field_required)

    id: str
    reasoning: Reasoning = ""
    duplicate_of: list[str] = Field(default_factory=list)
    contradicts: list[str] = Field(default_factory=list)
