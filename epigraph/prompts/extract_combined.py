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
from .extract_entities import NameLines, max_names
from .extraction import EntityLine, ExtractionInput, FactLine, decode_fact
from .fact_lines import fact_line_rules, name_list
from .grammar import NONE, literal

NAMES = "Names:"


class ExtractCombinedInput(ExtractionInput):
    pass


class FactLines:
    """Fact lines with free names, then the names line (all grounded in the episode afterwards by the
    pipeline)."""

    def decode(self, line: str, data: Any) -> list[EntityLine | FactLine]:
        names = names_part(line)
        if names is None:
            return decode_fact(line, data)
        if not names or names.rstrip(".").casefold() == NONE:
            return []
        return list(NameLines().decode(names, data))

    def grammar(self, data: Any, max_lines: int) -> str:
        """``none``, or up to ``max_lines - 1`` fact lines and then the names line, which ends every
        other reply (``max_lines`` counts it: :data:`PROMPT`'s shape)."""
        rules = fact_line_rules(
            (), data.type_names, data.entity_attributes, data.relation_attributes, alone=True,
            barred=data.barred(),
        )  # fmt: skip
        facts = f'( line "\\n" ){{0,{max(1, int(max_lines) - 1)}}}'
        names = f'{literal(NAMES + " ")} {name_list(max_names(data.message))} "\\n"'
        return f"root ::= {literal(NONE + chr(10))} | {facts} {names}\n" + rules.strip() + "\n"


def names_part(line: str) -> str | None:
    """What a ``Names: a; b`` line lists (``a; b``), or None for any other line."""
    text = line.strip()
    return text[len(NAMES) :].strip() if text.startswith(NAMES) else None


def max_facts(text: str) -> int:
    """The most facts an honest reply finds in ``text``: one per six words, plus one (every turn of the
    ingest bench's gold sets fits: docs/decisions/2026-11-25-bounded-model-output.md)."""
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
