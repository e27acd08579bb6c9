"""The tokens of one model call (or of many, added up): a leaf, so that token counting
(:mod:`epigraph.tokens`) and the LLM protocol (:mod:`epigraph.prompts.protocol`, which re-exports it)
both use it without importing each other's packages."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    estimated: bool = False
    """True when the server sent no usage and the counts were computed locally with a BPE tokenizer."""
    cached_input_tokens: int = 0
    """Input tokens the server reused from its prompt cache instead of evaluating (when it says so:
    ``usage.prompt_tokens_details.cached_tokens``, or llama.cpp's ``timings.cache_n``)."""

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.estimated or other.estimated,
            self.cached_input_tokens + other.cached_input_tokens,
        )
