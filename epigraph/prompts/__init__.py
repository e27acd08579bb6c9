"""Prompts as data, and the runtime that renders, calls and parses them.

A prompt is a :class:`Prompt` value (typed input, typed output, response type, template file); the
runtime's :func:`run` returns a :class:`PromptResult` and :func:`stream` yields ``jsonl`` items as each
line completes. The LLM meets the runtime through the :class:`LLM` protocol.
"""

from .base import Prompt
from .parsing import DroppedLine
from .protocol import LLM, ChatRequest, Completion, ResponseType, StreamChunk, Usage
from .render import TemplateError, render
from .runtime import PromptResult, PromptStream, build_request, run, stream

__all__ = [
    "LLM",
    "ChatRequest",
    "Completion",
    "DroppedLine",
    "Prompt",
    "PromptResult",
    "PromptStream",
    "ResponseType",
    "StreamChunk",
    "TemplateError",
    "Usage",
    "build_request",
    "render",
    "run",
    "stream",
]
