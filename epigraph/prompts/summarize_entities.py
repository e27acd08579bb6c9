"""summarize_entities (json): short summaries of several entities from their currently valid facts.

All the touched entities of an episode (or of a batch) that need a model go in ONE call; an entity with
only a handful of facts gets a summary composed from them without a model.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from .base import OutputShape, Prompt


class EntityFacts(BaseModel):
    id: str
    name: str
    facts: list[str]


class SummarizeEntitiesInput(BaseModel):
    entities: list[EntityFacts] = Field(min_length=1)


class EntitySummary(BaseModel):
    model_config = ConfigDict(extra="ignore")

    id: str
    summary: str = Field(max_length=1200)


class SummarizeEntitiesOutput(BaseModel):
    model_config = ConfigDict(extra="ignore")

    summaries: list[EntitySummary] = Field(default_factory=list)


EXAMPLE = SummarizeEntitiesInput(
    entities=[EntityFacts(id="1", name="Alice", facts=["Alice lives in Berlin.", "Alice works at Globex."])]
)

PROMPT: Prompt[SummarizeEntitiesInput, SummarizeEntitiesOutput] = Prompt(
    name="summarize_entities",
    version="1",
    input_model=SummarizeEntitiesInput,
    output_model=SummarizeEntitiesOutput,
    response_type="json",
    example=EXAMPLE,
    small=True,
    # At most two sentences (under 60 words) and an id per entity.
    shape=OutputShape(per_item=130, items=lambda d: len(d.entities), base=24),
)
