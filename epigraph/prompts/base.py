"""How a prompt is declared: data, not code.

A prompt is a template file in ``prompts/templates/<name>.txt`` plus a small module that builds one
:class:`Prompt` value naming its typed ``Input``, typed ``Output`` (a pydantic model whose JSON schema is
the prompt's schema; for ``jsonl`` it describes ONE line, a discriminated union by ``type`` for mixed
lines), its response type and an example input. The runtime (``prompts.runtime``) renders, calls and
parses; nothing here does I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

from .protocol import ResponseType

InT = TypeVar("InT", bound=BaseModel)
OutT = TypeVar("OutT")


@dataclass(frozen=True)
class Prompt(Generic[InT, OutT]):
    name: str
    version: str
    input_model: type[InT]
    output_model: Any
    """Pydantic model (or a TypeAdapter-able type, e.g. an Annotated union) for json/jsonl; None for text."""
    response_type: ResponseType
    example: InT
    template: str = ""
    """Template file name under ``prompts/templates/``; defaults to ``<name>.txt``."""
    small: bool = False
    """Route to the configured small model (short, cheap prompts)."""
    max_tokens: int | None = None
    template_dir: Path | None = None
    """Folder holding the template; None means the packaged ``epigraph/prompts/templates``."""

    @property
    def template_file(self) -> str:
        return self.template or f"{self.name}.txt"
