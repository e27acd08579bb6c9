"""resolve_entity (json): is ONE new entity a duplicate of one of at most ~10 candidates?

Only ambiguous entities reach this prompt: exact name/alias matches are merged without a model, and an
entity without plausible candidates is new without a model. The reply gives a short reasoning first
(small models decide better after stating why), then the candidate id or null, and a better merged name.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from .base import Prompt


class EntityCandidate(BaseModel):
    id: str
    name: str
    entity_type: str | None = None
    summary: str = ""


class NewEntity(BaseModel):
    name: str
    entity_type: str | None = None


class ResolveEntityInput(BaseModel):
    entity: NewEntity
    episode: str = Field(description="The episode that mentions it (clipped).")
    candidates: list[EntityCandidate] = Field(max_length=12)


class EntityResolution(BaseModel):
    model_config = ConfigDict(extra="ignore")

    reasoning: str = Field(default="", max_length=600, description="One short sentence, first.")
    duplicate_of: str | None = Field(default=None, description="The id of the same entity, or null.")
    name: str | None = Field(default=None, description="A better full name for the merged entity, or null.")


EXAMPLE = ResolveEntityInput(
    entity=NewEntity(name="support group", entity_type="Person"),
    episode="Caroline: The support group has made me feel accepted.",
    candidates=[EntityCandidate(id="1", name="LGBTQ support group", entity_type="Person")],
)

PROMPT: Prompt[ResolveEntityInput, EntityResolution] = Prompt(
    name="resolve_entity",
    version="1",
    input_model=ResolveEntityInput,
    output_model=EntityResolution,
    response_type="json",
    example=EXAMPLE,
    small=True,
    max_tokens=300,
)
