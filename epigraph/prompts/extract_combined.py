"""extract_combined (lines): the facts of an episode and its entities, in one call.

Each line is a fact in the bracket format of :mod:`fact_lines` (``[Caroline] went to [LGBTQ support
group] yesterday``); its two names are the episode's entities (typed in parentheses when custom types
are declared). The reply ends with the names line, everything the message talks about, in a fact or
not, as separate mode's names call lists it (``Names: LGBTQ support group; transgender stories``); a
bare ``[name]`` line is an entity too. A greeting or a reaction is answered ``none``. The speaker of a
message is added by the pipeline, not asked for.
"""

from __future__ import annotations

from typing import Any

from .base import OutputShape, Prompt, words
from .extract_entities import max_names
from .extraction import EntityLine, ExtractionInput, FactLine, decode_fact, entity_of
from .fact_lines import fact_line_rules, read_names
from .grammar import NONE, literal

NAMES = "Names:"


class ExtractCombinedInput(ExtractionInput):
    pass


class FactLines:
    """Fact lines with free names, then the names line (all grounded in the episode afterwards by the
    pipeline)."""

    def decode(self, line: str, data: Any) -> list[EntityLine | FactLine]:
        text = line.strip()
        if text.startswith(NAMES):
            names = text[len(NAMES) :].strip()
            if not names or names.rstrip(".").casefold() == NONE:
                return []
            return [entity_of(part) for part in read_names(names, data.type_names)]
        return decode_fact(line, data)

    def grammar(self, data: Any, max_lines: int) -> str:
        """``none``, or up to ``max_lines`` fact lines (a fact line is one of the lines the reply may
        hold) and then the names line, which every other reply ends with."""
        rules = fact_line_rules(
            (), data.type_names, data.entity_attributes, data.relation_attributes, alone=True,
            barred=data.barred(),
        )  # fmt: skip
        facts = f'( line "\\n" ){{0,{max(1, int(max_lines) - 1)}}}'
        names = f'{literal(NAMES + " ")} name ( "; " name ){{0,{max_names(data.message) - 1}}} "\\n"'
        return f"root ::= {literal(NONE + chr(10))} | {facts} {names}\n" + rules.strip() + "\n"


def max_facts(text: str) -> int:
    """The most facts an honest reply finds in ``text``: one per six words, plus one (every turn of the
    LoCoMo 26 and 30 gold sets fits: 177 turns, at most 6 facts in 32 words)."""
    return 1 + words(text) // 6


EXAMPLE = ExtractCombinedInput(
    **ExtractionInput.of("Alice: I moved to Berlin last month and started at Globex.", "Alice")
)

PROMPT: Prompt[ExtractCombinedInput, EntityLine | FactLine] = Prompt(
    name="extract_combined",
    version="9",
    input_model=ExtractCombinedInput,
    output_model=None,
    response_type="lines",
    lines=FactLines(),
    example=EXAMPLE,
    # A fact line is 12-25 tokens (two names, a few words between and after them); the names line is
    # one more item of about as many.
    shape=OutputShape(per_item=30, items=lambda d: max_facts(d.message) + 1, base=4, floor=24),
)
