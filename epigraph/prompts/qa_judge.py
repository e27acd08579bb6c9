"""qa_judge (json): the generous CORRECT/WRONG grading ("J") used by the Mem0 and Zep papers on LoCoMo.

Used by ``bench/quality/locomo_qa.py`` to grade the answers of ``KnowledgeGraph.ask`` and of its baselines.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from .base import Prompt


class QaJudgeInput(BaseModel):
    question: str
    gold_answer: str
    generated_answer: str


class QaJudgeOutput(BaseModel):
    model_config = ConfigDict(extra="ignore")

    reasoning: str = ""
    label: Literal["CORRECT", "WRONG"]


EXAMPLE = QaJudgeInput(
    question="When did Caroline go to the support group?",
    gold_answer="7 May 2023",
    generated_answer="She went on May 7th, 2023 [E3].",
)

PROMPT: Prompt[QaJudgeInput, QaJudgeOutput] = Prompt(
    name="qa_judge",
    version="1",
    input_model=QaJudgeInput,
    output_model=QaJudgeOutput,
    response_type="json",
    example=EXAMPLE,
    small=True,
    max_tokens=200,
)
