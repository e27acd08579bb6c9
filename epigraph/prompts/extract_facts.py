"""extract_facts (lines): facts between the given entities of the current episode, one per line.

The separate mode's second call: the bracket lines of :mod:`fact_lines`, whose names a grammar holds
to the entities extracted first (a model that takes no grammar is matched case-insensitively and
through aliases by the pipeline).
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from .base import OutputShape, Prompt
from .extract_combined import max_facts
from .extraction import ExtractedFact, ExtractionInput, FactLine, fact_of
from .fact_lines import fact_line_rules, read_fact
from .grammar import lines_grammar


class ExtractFactsInput(ExtractionInput):
    entities: list[str] = Field(exclude=True, description="Names of the entities of this episode.")
    names: str = Field(default="", description="The same names, comma-separated, as the prompt shows them.")

    def model_post_init(self, context: Any) -> None:
        if not self.names:
            self.names = ", ".join(self.entities)


class GivenNameFactLines:
    def decode(self, line: str, data: Any) -> list[FactLine]:
        message = data.message if data.sentences_from_message else ""
        return [fact_of(read_fact(line), data.speaker(), message)]

    def grammar(self, data: Any, max_lines: int) -> str:
        rules = fact_line_rules(data.entities, (), (), data.relation_attributes, barred=data.barred())
        return lines_grammar(rules, max_lines)


EXAMPLE = ExtractFactsInput(
    **ExtractionInput.of("Alice: I moved to Berlin last month and started at Globex.", "Alice"),
    entities=["Alice", "Berlin", "Globex"],
)

PROMPT: Prompt[ExtractFactsInput, ExtractedFact] = Prompt(
    name="extract_facts",
    version="2",
    input_model=ExtractFactsInput,
    output_model=None,
    response_type="lines",
    lines=GivenNameFactLines(),
    example=EXAMPLE,
    # A line is 12-25 tokens; one fact per six words, and never more than two per entity it names (a
    # short list, "hobbies: chess, golf, judo", holds a fact per pair it names).
    shape=OutputShape(
        per_item=40,
        items=lambda d: max(max_facts(d.message), 2 * max(1, len(d.entities) - 1)),
        base=4,
        floor=24,
    ),
)
