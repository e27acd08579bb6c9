"""extract_facts (jsonl): facts between the given entities of the current episode, one per line.

Each fact names its two endpoints by the given entity names, a SCREAMING_SNAKE_CASE relation, one
sentence, and dates resolved against the episode's reference time, with the temporal expression they
came from (so a fact whose expression was left unresolved can be dated afterwards).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from .base import OutputShape, Prompt, attributes_unless_declared, words


class ExtractFactsInput(BaseModel):
    episode: str
    reference_time: str
    previous: str = ""
    entities: list[str] = Field(description="Names of the entities of this episode.")
    relation_types: str = Field(default="", description="Allowed relation types, or ''.")


class ExtractedFact(BaseModel):
    """One fact between two entities of the episode."""

    model_config = ConfigDict(extra="ignore")

    source: str = Field(min_length=1)
    target: str = Field(min_length=1)
    relation: str = Field(min_length=1, description="SCREAMING_SNAKE_CASE, e.g. WORKS_AT")
    fact: str = Field(min_length=1, description="One sentence naming both entities.")
    valid_at: str | None = Field(default=None, description="ISO 8601 when it started to hold, or null.")
    invalid_at: str | None = Field(default=None, description="ISO 8601 when it stopped holding, or null.")
    temporal_expression: str | None = Field(
        default=None, description="The words the dates came from ('last week'), or null."
    )
    attributes: dict[str, Any] = Field(default_factory=dict)


EXAMPLE = ExtractFactsInput(
    episode="Alice: I moved to Berlin last month and started at Globex.",
    reference_time="2024-05-02T10:00:00Z",
    entities=["Alice", "Berlin", "Globex"],
)

PROMPT: Prompt[ExtractFactsInput, ExtractedFact] = Prompt(
    name="extract_facts",
    version="1",
    input_model=ExtractFactsInput,
    output_model=ExtractedFact,
    response_type="jsonl",
    example=EXAMPLE,
    # A line is 60-100 tokens (two names, a relation, one sentence, two dates); a text states at most
    # one fact per six words, and never more than two per entity it names (every turn of the LoCoMo 26
    # and 30 gold sets fits: 177 turns).
    grammar_omit=lambda d: attributes_unless_declared(d.relation_types),
    shape=OutputShape(
        # a short list ("hobbies: chess, golf, judo") holds a fact per entity pair it names: the
        # entities bound it as much as the words do
        per_item=100,
        items=lambda d: max(1 + words(d.episode) // 6, 2 * max(1, len(d.entities))),
    ),
)
