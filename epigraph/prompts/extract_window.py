"""extract_window (lines): the facts of several consecutive turns of one conversation in one call.

Bulk ingestion of a history (``IngestOptions(mode="bulk")``): the turns are numbered, and each reply
line is the number of the turn that states the fact, then its bracket line (:mod:`fact_lines`)::

    2 [Caroline] went to [LGBTQ support group] yesterday

The reply goes through the turns in order (a grammar holds a model that takes one to it): each turn's
lines, or ``<n> none`` for a turn that states nothing. The pipeline hands each turn its own lines and
then runs it as one episode, in order (its speaker, its time for the time words, its resolution, its
write), so a fact stays tied to the turn that states it.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field, computed_field

from .base import OutputShape, Prompt
from .extract_combined import max_facts
from .extraction import EntityLine, FactLine, decode_fact
from .fact_lines import fact_line_rules, unseen_scripts
from .grammar import NONE, literal
from .parsing import ReplyError


class WindowTurn(BaseModel):
    speaker: str = Field(description="Who says it; '' for a text that no one says.")
    message: str


class ExtractWindowInput(BaseModel):
    turns: list[WindowTurn] = Field(min_length=1, exclude=True)
    types: str = Field(
        default="", description="The declared entity and relation types as instructions, or ''."
    )
    type_names: list[str] = Field(default_factory=list, exclude=True)
    entity_attributes: list[str] = Field(default_factory=list, exclude=True)
    relation_attributes: list[str] = Field(default_factory=list, exclude=True)
    sentences_from_message: bool = Field(
        default=False,
        exclude=True,
        description="A fact's sentence is the message's clause naming both its ends, when one does.",
    )

    @computed_field  # type: ignore[prop-decorator]
    @property
    def numbered(self) -> str:
        """The turns as the prompt shows them: ``1. Caroline: I went to ...``."""
        return "\n".join(
            f"{n}. {t.speaker}: {t.message}" if t.speaker else f"{n}. {t.message}"
            for n, t in enumerate(self.turns, start=1)
        )

    def barred(self) -> str:
        """What a grammar keeps out of the reply's free text, as for one episode
        (:meth:`.extraction.ExtractionInput.barred`): the wide scripts no turn uses."""
        return unseen_scripts(self.numbered)


class TurnLine(BaseModel):
    """The items of one reply line and the turn (1-based) they belong to."""

    turn: int
    items: list[EntityLine | FactLine]


class WindowLines:
    """``<turn> <fact line>``: the turn numbers and the names a grammar allows."""

    def decode(self, line: str, data: Any) -> list[TurnLine]:
        number, _, rest = line.strip().partition(" ")
        if not number.rstrip(".").isdigit() or not 1 <= int(number.rstrip(".")) <= len(data.turns):
            raise ReplyError(f"a window line starts with a turn number from 1 to {len(data.turns)}")
        turn = data.turns[int(number.rstrip(".")) - 1]
        speaker = turn.speaker
        if speaker and rest.startswith(f"{speaker}:"):
            rest = rest[len(speaker) + 1 :]
        if rest.strip().rstrip(".").casefold() == NONE:  # kept: it says the reply reached that turn
            return [TurnLine(turn=int(number.rstrip(".")), items=[])]
        items = decode_fact(rest.strip(), data, speaker or None, turn.message)
        return [TurnLine(turn=int(number.rstrip(".")), items=items)]

    def grammar(self, data: Any, max_lines: int) -> str:
        """Every turn in order, each ``<n> none`` or 1 to ``max_facts`` of its lines: the model goes
        through the turns one by one and cannot hand a fact to a turn it already passed."""
        rules = fact_line_rules(
            (), data.type_names, data.entity_attributes, data.relation_attributes, alone=True,
            barred=data.barred(),
        ).replace("line ::= ", "fact ::= ", 1)  # fmt: skip
        turns = []
        for n, turn in enumerate(data.turns, start=1):
            lead = literal(f"{n} {turn.speaker}: " if turn.speaker else f"{n} ")
            turns.append(
                f't{n} ::= {lead} "{NONE}\\n" | ( {lead} fact "\\n" ){{1,{max_facts(turn.message)}}}'
            )
        root = "root ::= " + " ".join(f"t{n}" for n in range(1, len(data.turns) + 1))
        return "\n".join([root, *turns, rules]) + "\n"


EXAMPLE = ExtractWindowInput(
    turns=[
        WindowTurn(speaker="Alice", message="I moved to Berlin last month and started at Globex."),
        WindowTurn(speaker="Bob", message="Congrats! How is it?"),
    ]
)

PROMPT: Prompt[ExtractWindowInput, TurnLine] = Prompt(
    name="extract_window",
    version="2",
    input_model=ExtractWindowInput,
    output_model=None,
    response_type="lines",
    lines=WindowLines(),
    example=EXAMPLE,
    # A line is a turn number and a fact line (12-25 tokens); each turn at most as many as alone.
    shape=OutputShape(
        per_item=32, items=lambda d: sum(max_facts(t.message) for t in d.turns), base=4, floor=32
    ),
)
