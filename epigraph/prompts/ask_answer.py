"""ask_answer (text, streamed): the answer of :meth:`KnowledgeGraph.ask`, citing facts as [F1], episodes
as [E1], and writing [none] when nothing shown answers the question.

Beside the facts and episodes it may show summaries, never cited: "About" (the entities the question
names, from the one-call context or an entity lookup) and, last, the running summaries of the
conversations the facts and episodes come from (a block only when there are some).

The episodes (what was said, in the speakers' words) come before the facts (short dated notes drawn from
them): with the facts first, the small local model answered "what did X say / do" from a lossy fact
line where the episode beside it had the words (v7; docs/decisions/2026-11-25-ask.md).

The facts block lists each fact with its validity window and whether it still holds "now" (the
dialog's ``as_of``), so the model answers a question about the past from what held then and never
presents an ended fact as current. The QA bench's baselines use the same prompt with other context
(the whole conversation, or the top episodes), so the three are compared on equal terms.
"""

from __future__ import annotations

from pydantic import BaseModel

from .base import Prompt


class AskAnswerInput(BaseModel):
    question: str
    now: str
    facts: str
    """One line per fact: ``F1: text (from DATE until DATE; ended)``, dates as ``7 May 2023``; "(none)"
    when empty."""
    episodes: str
    """One line per episode: ``E1 [DATE]: content``; "(none)" when empty."""
    summaries: str = "(none)"
    """One line per summary: ``Alice: ...``; "(none)" when empty."""
    conversations: str = ""
    """The summaries of the conversations the facts and episodes come from, as a block starting with a
    new line (``Observations.conversations_block``); "" when none, and then the prompt is exactly the
    one without conversations."""


EXAMPLE = AskAnswerInput(
    question="Where did Alice live in 2022?",
    now="2 May 2024",
    facts="F1: Alice lives in Berlin. (from 1 August 2023)\n"
    "F2: Alice lives in Paris. (from 10 March 2021 until 1 August 2023; ended)",
    episodes="(none)",
)

PROMPT: Prompt[AskAnswerInput, str] = Prompt(
    name="ask_answer",
    version="7",
    input_model=AskAnswerInput,
    output_model=None,
    response_type="text",
    example=EXAMPLE,
    max_tokens=400,
)
