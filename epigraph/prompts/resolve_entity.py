"""The entity part of ``resolve_episode``: one ambiguous new entity's candidates, and the decision.

Only ambiguous entities are asked about: exact name/alias matches are merged without a model, and an
entity without plausible candidates is new without a model. The decision gives a short reasoning first
(small models decide better after stating why), then the candidate id or null, and a better merged name.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from .base import Reasoning, ShortName, every_field_required


class EntityCandidate(BaseModel):
    id: str
    name: str
    entity_type: str | None = None
    summary: str = ""


class EntityResolution(BaseModel):
    model_config = ConfigDict(extra="ignore", json_schema_extra=every_field_required)

    reasoning: Reasoning = Field(default="", description="One short sentence, first.")
    duplicate_of: str | None = Field(default=None, description="The id of the same entity, or null.")
    name: ShortName | None = Field(
        default=None, description="A better full name for the merged entity, or null."
    )
