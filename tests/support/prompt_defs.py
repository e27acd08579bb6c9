"""Test-only prompt declarations (templates in tests/support/prompt_templates)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, Field

from epigraph.prompts import Prompt

TEMPLATES = Path(__file__).parent / "prompt_templates"


class EpisodeIn(BaseModel):
    episode: str
    speakers: list[str] = Field(default_factory=list)


class EntityOut(BaseModel):
    name: str
    kind: str


class EntityLine(BaseModel):
    type: Literal["entity"]
    name: str


class FactLine(BaseModel):
    type: Literal["fact"]
    source: str
    target: str
    relation: str


MixedLine = Annotated[EntityLine | FactLine, Field(discriminator="type")]


class Decision(BaseModel):
    reasoning: str
    duplicate: bool


EXAMPLE = EpisodeIn(episode="Alice: I moved to Paris.", speakers=["Alice"])


def make_prompt(name: str, response_type: str, output: object, **kw: object) -> Prompt:
    return Prompt(
        name=name,
        version="1",
        input_model=EpisodeIn,
        output_model=output,  # type: ignore[arg-type]
        response_type=response_type,  # type: ignore[arg-type]
        example=EXAMPLE,
        template_dir=TEMPLATES,
        **kw,  # type: ignore[arg-type]
    )
