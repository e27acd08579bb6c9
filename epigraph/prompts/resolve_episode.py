"""resolve_episode (json): ONE call per episode for every ambiguous entity and every new fact with
candidates.

Entities first: each ambiguous new entity (no exact name/alias match, but plausible candidates) with its
own candidate block. Then facts: each new fact with its own candidate block (``resolve_fact``'s models:
ids unique across the call, so an id can never be read against the wrong item). A fact that touches an
ambiguous entity is shown the candidates it would have under every answer for that entity; the pipeline
keeps only the picks that still share an endpoint with the fact once the entities are decided. One call
instead of one per entity plus one per fact batch: with one extraction call, an episode never costs more
than two calls (combined mode) or three (separate), whatever it holds.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator

from .base import OutputShape, Prompt
from .resolve_entity import EntityCandidate, EntityResolution
from .resolve_fact import FactCandidate, FactDecision, FactToResolve


class EntityQuestion(BaseModel):
    id: str
    name: str
    entity_type: str | None = None
    candidates: list[EntityCandidate] = Field(min_length=1, max_length=12)


class ResolveEpisodeInput(BaseModel):
    episode: str = Field(description="The episode that mentions the entities (clipped).")
    entities: list[EntityQuestion] = Field(default_factory=list)
    facts: list[FactToResolve] = Field(default_factory=list)

    @model_validator(mode="after")
    def _something_to_resolve(self) -> ResolveEpisodeInput:
        if not self.entities and not self.facts:
            raise ValueError("resolve_episode needs at least one entity or fact to resolve")
        return self


class EntityDecision(EntityResolution):
    id: str


class ResolveEpisodeOutput(BaseModel):
    model_config = ConfigDict(extra="ignore")

    entities: list[EntityDecision] = Field(default_factory=list)
    facts: list[FactDecision] = Field(default_factory=list)


EXAMPLE = ResolveEpisodeInput(
    episode="Alice: Mel and I moved to Berlin last month.",
    entities=[
        EntityQuestion(
            id="E1", name="Mel", entity_type="Person", candidates=[EntityCandidate(id="E1.1", name="Melanie")]
        )
    ],
    facts=[
        FactToResolve(
            id="1",
            fact="Alice lives in Berlin.",
            valid_at="2024-04-01T00:00:00Z",
            candidates=[
                FactCandidate(id="1.1", fact="Alice lives in Paris.", valid_at="2020-01-01T00:00:00Z")
            ],
        )
    ],
)

PROMPT: Prompt[ResolveEpisodeInput, ResolveEpisodeOutput] = Prompt(
    name="resolve_episode",
    version="2",
    input_model=ResolveEpisodeInput,
    output_model=ResolveEpisodeOutput,
    response_type="json",
    example=EXAMPLE,
    small=True,
    # One decision per entity or fact: an id, a reasoning of at most 200 characters (~50 tokens), an id
    # or two short id lists (a name of at most 80 characters).
    shape=OutputShape(per_item=128, items=lambda d: len(d.entities) + len(d.facts), base=32),
)
