"""How a prompt is declared: data, not code.

A prompt is a template file in ``prompts/templates/<name>.txt`` plus a small module that builds one
:class:`Prompt` value naming its typed ``Input``, typed ``Output`` (a pydantic model whose JSON schema is
the prompt's schema; for ``jsonl`` it describes ONE line, a discriminated union by ``type`` for mixed
lines), its response type and an example input. The runtime (``prompts.runtime``) renders, calls and
parses; nothing here does I/O.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Generic, Protocol, TypeVar

from pydantic import BaseModel, BeforeValidator, StringConstraints

from .protocol import ResponseType

InT = TypeVar("InT", bound=BaseModel)
OutT = TypeVar("OutT")


@dataclass(frozen=True)
class OutputShape:
    """How long an honest reply to a prompt can be, derived from its input.

    A reply is ``items`` items (JSONL lines, or the elements of the reply's one list) of at most
    ``per_item`` tokens each, plus ``base`` tokens around them; never fewer than ``floor`` tokens. The
    caller's configured maximum (``EPIGRAPH_LLM_MAX_TOKENS``) stays the ceiling. A prompt whose honest
    answer is a few lines must not be allowed 4,096 tokens: a small model that starts repeating itself
    runs to the cap, minutes per call (docs/decisions/2026-11-25-bounded-model-output.md).
    """

    per_item: int
    """Output tokens one item takes at most (a JSONL line, one decision, one summary)."""
    items: Callable[[Any], int]
    """The most items an honest reply holds, from the prompt's validated input."""
    base: int = 16
    floor: int = 96

    def max_items(self, data: Any) -> int:
        return max(1, self.items(data))

    def max_tokens(self, data: Any) -> int:
        return max(self.floor, self.base + self.per_item * self.max_items(data))


class LineFormat(Protocol):
    """How a ``lines`` prompt's reply reads: one line per item, in a compact text syntax whose every
    token carries information (no JSON keys, no field the pipeline derives itself). A grammar holds a
    model that accepts one (llama.cpp) to the syntax; the decoder reads any model's lines.

    A reply of the single word ``none`` (``prompts.grammar.NONE``) means "nothing to report"."""

    def decode(self, line: str, data: Any) -> list[Any]:
        """The items one reply line stands for (usually one); raises ``ValueError`` (the parser's
        ``ReplyError``) with a short reason when the line is not in the format."""
        ...

    def grammar(self, data: Any, max_lines: int) -> str:
        """The GBNF grammar of a whole reply for this input, of at most ``max_lines`` lines (most
        formats: ``prompts.grammar.lines_grammar`` of their line rule)."""
        ...


def _clip(limit: int) -> Callable[[Any], Any]:
    def clip(value: Any) -> Any:
        return value[:limit] if isinstance(value, str) else value

    return clip


Reasoning = Annotated[str, BeforeValidator(_clip(200)), StringConstraints(max_length=200)]
"""A decision's reasoning: one short sentence. The schema says ``maxLength`` 200, so a grammar-constrained
model must close it there; a longer one from an unconstrained model is clipped, not refused."""
ShortName = Annotated[str, BeforeValidator(_clip(80)), StringConstraints(max_length=80)]
"""A name a model proposes (clipped like ``Reasoning``): a small model fills a free name field with a
list of names until the token cap (docs/decisions/2026-11-25-bounded-model-output.md)."""


def words(text: str) -> int:
    """Whitespace-separated words of ``text``: the input size output bounds are derived from."""
    return len(text.split())


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
    """A fixed output cap; ``shape`` (derived from the input) takes precedence when given."""
    shape: OutputShape | None = None
    """The reply's shape, from which each call's output cap (and a JSONL grammar's line bound) comes."""
    grammar_omit: Callable[[Any], frozenset[str]] | None = None
    """Optional line fields a JSONL grammar leaves out for this input: without custom types a small
    model fills a free-form ``attributes`` object with inventions (age, occupation, home town)."""
    lines: LineFormat | None = None
    """``lines`` prompts: the syntax of a reply line (its decoder and grammar)."""
    template_dir: Path | None = None
    """Folder holding the template; None means the packaged ``epigraph/prompts/templates``."""

    @property
    def template_file(self) -> str:
        return self.template or f"{self.name}.txt"
