"""extract_entities (lines): the entities of the current episode, on one line: ``a; b; c``.

The separate mode's first call (the combined mode finds entities through its facts). A name may carry
its declared type in parentheses (``Ann (Person)``) when custom types are declared. A short window of
earlier episodes (``context``) is given only to resolve pronouns and references. The speaker of a
message is added by the pipeline, not asked for.
"""

from __future__ import annotations

from typing import Any

from .base import OutputShape, Prompt, words
from .extraction import EntityLine, ExtractedEntity, ExtractionInput, entity_of
from .fact_lines import name_list_grammar, read_names


class ExtractEntitiesInput(ExtractionInput):
    pass


class NameLines:
    def decode(self, line: str, data: Any) -> list[EntityLine]:
        return [entity_of(part) for part in read_names(line, data.type_names)]

    def grammar(self, data: Any, max_lines: int) -> str:
        return name_list_grammar(max_lines, data.type_names, data.entity_attributes, data.barred())


def max_names(text: str) -> int:
    """The most names an honest list finds in ``text``: one per four words, plus one (the speaker; every
    turn of the ingest bench's gold sets fits: docs/decisions/2026-11-25-bounded-model-output.md)."""
    return 1 + words(text) // 4


EXAMPLE = ExtractEntitiesInput(
    **ExtractionInput.of("Alice: I moved to Berlin last month and started at Globex.", "Alice")
)

PROMPT: Prompt[ExtractEntitiesInput, ExtractedEntity] = Prompt(
    name="extract_entities",
    version="4",
    input_model=ExtractEntitiesInput,
    output_model=None,
    response_type="lines",
    lines=NameLines(),
    example=EXAMPLE,
    # A name is 2-8 tokens with its separator.
    shape=OutputShape(per_item=12, items=lambda d: max_names(d.message), base=4, floor=24),
)
