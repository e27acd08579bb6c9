"""extract_entities (jsonl): the entities of the current episode, one per line, the speaker first.

A token-capped window of the previous episodes (``previous``) is given only to resolve pronouns and
references ("she", "my sister", "the agency"); entities that appear only there are not extracted.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from .base import OutputShape, Prompt, attributes_unless_declared, words


class ExtractEntitiesInput(BaseModel):
    episode: str = Field(description="The current episode; a message reads 'Speaker: text'.")
    kind: str = Field(default="message", description="message | text | json")
    reference_time: str = Field(description="ISO time the episode happened.")
    previous: str = Field(default="", description="Earlier episodes, oldest first; context only.")
    entity_types: str = Field(default="", description="Allowed entity types with their attributes, or ''.")


class ExtractedEntity(BaseModel):
    """One entity named or referred to in the current episode."""

    model_config = ConfigDict(extra="ignore")

    name: str = Field(min_length=1, max_length=200, description="The most specific name the text supports.")
    entity_type: str | None = Field(default=None, description="One of the given types, else null.")
    attributes: dict[str, Any] = Field(default_factory=dict, description="Attributes of its type, if any.")


EXAMPLE = ExtractEntitiesInput(
    episode="Alice: I moved to Berlin last month and started at Globex.",
    reference_time="2024-05-02T10:00:00Z",
    previous="Bob: Hi Alice, how is the new job hunt going?",
)

PROMPT: Prompt[ExtractEntitiesInput, ExtractedEntity] = Prompt(
    name="extract_entities",
    version="1",
    input_model=ExtractEntitiesInput,
    output_model=ExtractedEntity,
    response_type="jsonl",
    example=EXAMPLE,
    # A line is ~20 tokens ({"name": "Melanie's kids", "entity_type": null, "attributes": {}}); a text
    # names at most one entity per four words, plus the speaker (every turn of the LoCoMo 26 and 30
    # gold sets fits: 177 turns).
    grammar_omit=lambda d: attributes_unless_declared(d.entity_types),
    shape=OutputShape(per_item=40, items=lambda d: 1 + words(d.episode) // 4),
)
