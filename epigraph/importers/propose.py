"""Ask the LLM for a mapping when no known shape fits: propose, validate, re-ask once, then fail clearly.

The runtime handles replies that are not JSON (repair, one re-ask). Here a JSON reply is checked as a
mapping (structure, then every path on the samples); if it fails, the model is asked once more with its
previous answer and the list of problems, and a second failure raises :class:`MappingError` listing them
(``unresolved`` holds the paths that reach nothing). An all-null answer means the model judged the data
irrelevant: :class:`IrrelevantDataset`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from epigraph.errors import InputError
from epigraph.prompts.propose_mapping import PROMPT, ProposeMappingInput
from epigraph.prompts.protocol import LLM
from epigraph.prompts.runtime import run

from .mapping import Mapping, parse_mapping
from .validate import IrrelevantDataset, MappingError, compile_mapping

PROMPT_SAMPLES = 3
MAX_STRING = 160
MAX_ITEMS = 3
MAX_KEYS = 40
MAX_DEPTH = 8


async def propose_mapping(llm: LLM, samples: Sequence[Any], *, file_name: str) -> Mapping:
    """A mapping for ``samples`` proposed by ``llm`` and validated on them (at most two prompt runs)."""
    if not samples:
        raise MappingError(["the file holds no records to propose a mapping from"], file=file_name)
    data = ProposeMappingInput(file_name=file_name, samples=shorten_samples(samples[:PROMPT_SAMPLES]))
    problems: list[str] = []
    unresolved: list[str] = []
    for _attempt in (1, 2):
        result = await run(llm, PROMPT, data)
        reply: Any = result.value
        try:
            mapping = _check(reply, samples, file_name)
        except MappingError as exc:
            problems, unresolved = exc.errors, exc.unresolved
        except IrrelevantDataset:
            raise
        except InputError as exc:
            problems, unresolved = [exc.reason], []
        else:
            return mapping.model_copy(update={"description": "proposed by the LLM"})
        data = data.model_copy(
            update={
                "previous": json.dumps(reply, ensure_ascii=False),
                "problems": "\n".join(f"- {p}" for p in problems),
            }
        )
    raise MappingError(
        ["the LLM's mapping was still invalid after one re-ask", *problems], unresolved, file=file_name
    )


def _check(reply: Any, samples: Sequence[Any], file_name: str) -> Mapping:
    if isinstance(reply, dict) and reply and all(v is None for v in reply.values()):
        raise IrrelevantDataset(file_name)
    mapping = parse_mapping(reply)
    return compile_mapping(mapping, samples, file=file_name).mapping


def shorten_samples(samples: Sequence[Any]) -> str:
    """Sample records as JSON lines, long strings / arrays / objects cut with "…(+N more)" markers."""
    return "\n".join(json.dumps(shorten(s), ensure_ascii=False) for s in samples)


def shorten(value: Any, depth: int = 0) -> Any:
    """A bounded copy of ``value`` that keeps its shape: what the model needs to write paths."""
    if isinstance(value, str):
        cut = len(value) - MAX_STRING
        return value if cut <= 0 else f"{value[:MAX_STRING]}…(+{cut} more chars)"
    if depth >= MAX_DEPTH and isinstance(value, dict | list):
        return "…(nested deeper)"
    if isinstance(value, list):
        head = [shorten(v, depth + 1) for v in value[:MAX_ITEMS]]
        extra = len(value) - MAX_ITEMS
        return [*head, f"…(+{extra} more)"] if extra > 0 else head
    if isinstance(value, dict):
        items = list(value.items())
        out = {str(k): shorten(v, depth + 1) for k, v in items[:MAX_KEYS]}
        if len(items) > MAX_KEYS:
            rest = [str(k) for k, _ in items[MAX_KEYS:]]
            out["…"] = f"(+{len(rest)} more keys: {', '.join(rest[:80])})"
        return out
    return value
