"""qa_judge (json): the generous CORRECT/WRONG grading ("J") used by the Mem0 and Zep papers on LoCoMo.

The QA bench's judge (``qa_rows.Judge``) grades the answers of ``KnowledgeGraph.ask`` and of its
baselines with it. A prompt like the package's (a :class:`Prompt` and its template), run by the same
runtime (``epigraph.prompts.runtime.run``), but the bench's own: its template is ``qa_judge.txt`` beside
this file (``template_dir``), and the package ships neither.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from epigraph.prompts.base import Prompt


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
    template_dir=Path(__file__).resolve().parent,
)
