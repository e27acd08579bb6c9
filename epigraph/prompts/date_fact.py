"""date_fact (json): dates for the facts whose temporal expression extraction left unresolved.

Deterministic normalization handles the common expressions first ("yesterday", "last week", "in 2019",
ISO dates); only what it cannot read reaches this prompt, all of one episode in one call.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from .base import OutputShape, Prompt


class FactToDate(BaseModel):
    id: str
    fact: str
    expression: str


class DateFactInput(BaseModel):
    reference_time: str
    facts: list[FactToDate] = Field(min_length=1)


class FactDates(BaseModel):
    model_config = ConfigDict(extra="ignore")

    id: str
    valid_at: str | None = None
    invalid_at: str | None = None


class DateFactOutput(BaseModel):
    model_config = ConfigDict(extra="ignore")

    dates: list[FactDates] = Field(default_factory=list)


EXAMPLE = DateFactInput(
    reference_time="2024-05-02T10:00:00Z",
    facts=[FactToDate(id="1", fact="Alice moved to Berlin.", expression="the spring before her wedding")],
)

PROMPT: Prompt[DateFactInput, DateFactOutput] = Prompt(
    name="date_fact",
    version="1",
    input_model=DateFactInput,
    output_model=DateFactOutput,
    response_type="json",
    example=EXAMPLE,
    small=True,
    # One id and two ISO datetimes per fact.
    shape=OutputShape(per_item=60, items=lambda d: len(d.facts), base=24),
)
