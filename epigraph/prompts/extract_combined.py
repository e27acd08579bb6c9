"""extract_combined (lines): the facts of an episode, and through them its entities, in one call.

Each line is a fact in the bracket format of :mod:`fact_lines` (``[Caroline] went to [LGBTQ support
group] yesterday``); its two names are the episode's entities (typed in parentheses when custom types
are declared); a bare ``[name]`` line is an entity named without a fact. A greeting or a reaction is
answered ``none``. The speaker of a message is added by the pipeline, not asked for.
"""

from __future__ import annotations

from typing import Any

from .base import OutputShape, Prompt, words
from .extraction import EntityLine, ExtractionInput, FactLine, decode_fact
from .fact_lines import fact_line_rules
from .grammar import lines_grammar


class ExtractCombinedInput(ExtractionInput):
    pass


class FactLines:
    """Fact lines with free names (grounded in the episode afterwards by the pipeline)."""

    def decode(self, line: str, data: Any) -> list[EntityLine | FactLine]:
        return decode_fact(line, data)

    def grammar(self, data: Any, max_lines: int) -> str:
        rules = fact_line_rules(
            (), data.type_names, data.entity_attributes, data.relation_attributes, alone=True,
            barred=data.barred(),
        )  # fmt: skip
        return lines_grammar(rules, max_lines)


def max_facts(text: str) -> int:
    """The most facts an honest reply finds in ``text``: one per six words, plus one (every turn of the
    LoCoMo 26 and 30 gold sets fits: 177 turns, at most 6 facts in 32 words)."""
    return 1 + words(text) // 6


EXAMPLE = ExtractCombinedInput(
    **ExtractionInput.of("Alice: I moved to Berlin last month and started at Globex.", "Alice")
)

PROMPT: Prompt[ExtractCombinedInput, EntityLine | FactLine] = Prompt(
    name="extract_combined",
    version="6",
    input_model=ExtractCombinedInput,
    output_model=None,
    response_type="lines",
    lines=FactLines(),
    example=EXAMPLE,
    # A line is 12-25 tokens (two names, a few words between and after them).
    shape=OutputShape(per_item=30, items=lambda d: max_facts(d.message), base=4, floor=24),
)
