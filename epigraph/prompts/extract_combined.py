"""extract_combined (jsonl): entities AND facts of an episode in one call.

Lines are ``{"type": "entity", ...}`` (the speaker first) and ``{"type": "fact", ...}``; the fields are
those of :mod:`extract_entities` and :mod:`extract_facts`. Selected per call (``mode="combined"``) so its
cost and output can be compared with the separate prompts.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field

from .base import OutputShape, Prompt, attributes_unless_declared, words
from .extract_entities import ExtractedEntity
from .extract_facts import ExtractedFact


class ExtractCombinedInput(BaseModel):
    episode: str
    kind: str = "message"
    reference_time: str
    previous: str = ""
    entity_types: str = ""
    relation_types: str = ""


class EntityLine(ExtractedEntity):
    type: Literal["entity"] = "entity"


class FactLine(ExtractedFact):
    type: Literal["fact"] = "fact"


CombinedLine = Annotated[EntityLine | FactLine, Field(discriminator="type")]

EXAMPLE = ExtractCombinedInput(
    episode="Alice: I moved to Berlin last month and started at Globex.",
    reference_time="2024-05-02T10:00:00Z",
)

PROMPT: Prompt[ExtractCombinedInput, EntityLine | FactLine] = Prompt(
    name="extract_combined",
    version="1",
    input_model=ExtractCombinedInput,
    output_model=CombinedLine,
    response_type="jsonl",
    example=EXAMPLE,
    # The entity bound of extract_entities plus the fact bound of extract_facts, at a mean line size.
    grammar_omit=lambda d: attributes_unless_declared(d.entity_types + d.relation_types),
    shape=OutputShape(per_item=70, items=lambda d: 2 + words(d.episode) // 4 + words(d.episode) // 6),
)
