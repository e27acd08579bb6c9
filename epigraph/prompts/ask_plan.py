"""ask_plan (json): one step of :meth:`KnowledgeGraph.ask`'s bounded agent.

Small models follow it: one flat JSON object per call, a short thought and one lookup (or ``answer``)
with its arguments as plain optional strings. The agent validates the arguments and falls back to a
search of the question when the reply stays unusable.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from .base import Prompt

Action = Literal["search_facts", "entity", "episodes", "answer"]


class AskPlanInput(BaseModel):
    question: str
    now: str
    observations: str
    """What the earlier lookups found, one numbered line per fact/episode ("(nothing yet)" at first)."""
    steps_left: int = Field(ge=0)


class AskPlanOutput(BaseModel):
    model_config = ConfigDict(extra="ignore")

    thought: str = ""
    action: Action
    query: str | None = None
    entity: str | None = None
    as_of: str | None = None
    since: str | None = None
    until: str | None = None

    @field_validator("action", mode="before")
    @classmethod
    def _known_action(cls, value: Any) -> Any:
        """Small models write ``search``, ``search_facts(...)`` or ``final_answer``: read them as meant."""
        if not isinstance(value, str):
            return value
        name = value.strip().lower().split("(", 1)[0].strip().replace(" ", "_").replace("-", "_")
        return _ACTION_ALIASES.get(name, name)

    @field_validator("query", "entity", "as_of", "since", "until", mode="before")
    @classmethod
    def _no_null_words(cls, value: Any) -> Any:
        """``"null"``, ``"none"`` or ``""`` written as a string mean no value."""
        if isinstance(value, str) and value.strip().lower() in ("", "null", "none", "n/a"):
            return None
        return value


_ACTION_ALIASES = {
    "search": "search_facts",
    "facts": "search_facts",
    "search_fact": "search_facts",
    "fact_search": "search_facts",
    "lookup_entity": "entity",
    "get_entity": "entity",
    "entity_view": "entity",
    "search_episodes": "episodes",
    "episode": "episodes",
    "final_answer": "answer",
    "respond": "answer",
    "finish": "answer",
}


EXAMPLE = AskPlanInput(
    question="Where did Alice live in 2022?",
    now="2024-05-02",
    observations="(nothing yet)",
    steps_left=3,
)

PROMPT: Prompt[AskPlanInput, AskPlanOutput] = Prompt(
    name="ask_plan",
    version="2",
    input_model=AskPlanInput,
    output_model=AskPlanOutput,
    response_type="json",
    example=EXAMPLE,
    max_tokens=300,
)
