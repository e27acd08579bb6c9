"""extract_facts (lines): facts between the given entities of the current episode, one per line.

The separate mode's second call: the bracket lines of :mod:`fact_lines`, whose names a grammar holds
to the entities extracted first (a model that takes no grammar is matched case-insensitively and
through aliases by the pipeline). With ``FactOptions.line_format`` "numbered", :data:`NUMBERED_PROMPT`
instead (the same call, its own template and version): the names shown numbered, each line the two
ends' numbers and a free sentence (:mod:`numbered_lines`); :func:`prompt_for` picks one.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from .base import OutputShape, Prompt
from .extract_combined import max_facts
from .extraction import ExtractedFact, ExtractionInput, FactLine, fact_of
from .fact_lines import fact_line_rules, read_fact
from .grammar import lines_grammar
from .numbered_lines import numbered, numbered_line_rules, read_numbered


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


class NumberedFactsInput(ExtractFactsInput):
    """The numbered variant's input: the names shown numbered (``1 Ann, 2 pottery class``)."""

    def model_post_init(self, context: Any) -> None:
        if not self.names:
            self.names = numbered(self.entities)


class NumberedFactLines:
    """``<n> <m> | sentence`` lines over the input's numbered names (:mod:`numbered_lines`), decoded to
    the same facts as bracket lines (:func:`~.extraction.fact_of`)."""

    def decode(self, line: str, data: Any) -> list[FactLine]:
        message = data.message if data.sentences_from_message else ""
        return [fact_of(read_numbered(line, data.entities), data.speaker(), message)]

    def grammar(self, data: Any, max_lines: int) -> str:
        rules = numbered_line_rules(len(data.entities), data.relation_attributes, barred=data.barred())
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

NUMBERED_PROMPT: Prompt[NumberedFactsInput, ExtractedFact] = Prompt(
    name=PROMPT.name,  # the same call: scripted models, the runs ahead and the benches know it by name
    version="3-numbered",
    input_model=NumberedFactsInput,
    output_model=None,
    response_type="lines",
    template="extract_facts_numbered.txt",
    lines=NumberedFactLines(),
    example=NumberedFactsInput(
        **ExtractionInput.of("Alice: I moved to Berlin last month and started at Globex.", "Alice"),
        entities=["Alice", "Berlin", "Globex"],
    ),
    shape=PROMPT.shape,
)


def prompt_for(line_format: str) -> Prompt[Any, ExtractedFact]:
    """The fact call of a ``FactOptions.line_format``: :data:`NUMBERED_PROMPT` for "numbered", else
    :data:`PROMPT` (brackets)."""
    return NUMBERED_PROMPT if line_format == "numbered" else PROMPT
