"""propose_mapping (json): a field mapping for an unknown dataset, from a few sample records.

The reply is one JSON object in the mapping format of ``epigraph.importers.mapping`` (the seed
spec "LLM mapping output JSON schema" plus fan-out, speakers and per-message timestamps). The output
type is deliberately a plain JSON object: the prompts layer does not import the pipeline, and the
importer validates the mapping itself (structure, then every path against the samples) and re-asks
once with the problems in ``problems``. A reply that is not JSON is handled by the runtime's own
repair and re-ask.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from .base import Prompt


class ProposeMappingInput(BaseModel):
    file_name: str
    samples: str = Field(description="sample records, one JSON value per line, long values shortened")
    previous: str = Field(default="none", description="the previous proposal, on a re-ask")
    problems: str = Field(default="none", description="what was wrong with it, one per line")


ProposeMappingOutput = dict[str, Any]

EXAMPLE = ProposeMappingInput(
    file_name="support.jsonl",
    samples=(
        '{"ticket": 7, "thread": [{"who": "customer", "said": "My order is late", '
        '"at": "2024-03-01T10:00:00Z"}]}'
    ),
)

PROMPT: Prompt[ProposeMappingInput, ProposeMappingOutput] = Prompt(
    name="propose_mapping",
    version="1",
    input_model=ProposeMappingInput,
    output_model=ProposeMappingOutput,
    response_type="json",
    example=EXAMPLE,
    max_tokens=1500,
)
