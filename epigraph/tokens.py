"""Local token counting with a real BPE tokenizer (``bpe-openai``'s ``cl100k_base``).

Used when a server sends no usage (``Usage.estimated=True``) and to reserve tokens-per-minute budget
before a request is sent. The counts are exact for OpenAI's cl100k models and a close estimate for
others; they are never presented as exact (``estimated`` says so).

The encoding is loaded lazily on first use (about 0.7 s once per process, from data shipped in the
wheel); :func:`aload_encoding` does that load off the event loop.
"""

from __future__ import annotations

import asyncio
import functools
import warnings
from collections.abc import Iterable, Mapping
from typing import Any

from .usage import Usage

ENCODING_NAME = "cl100k_base"
# OpenAI's accounting for chat messages: every message is wrapped in a few special tokens and the
# reply is primed with ``<|start|>assistant<|message|>``.
_TOKENS_PER_MESSAGE = 3
_TOKENS_REPLY_PRIMING = 3


@functools.cache
def load_encoding() -> Any:
    """The cl100k_base encoding (tiktoken-compatible API); loaded once, then shared (it is immutable)."""
    with warnings.catch_warnings():  # bpe-openai 0.1.4 uses a deprecated importlib.resources call
        warnings.simplefilter("ignore", DeprecationWarning)
        import bpe_openai  # deferred: its import loads the BPE tables (~0.7 s)

        return bpe_openai.get_encoding(ENCODING_NAME)


async def aload_encoding() -> Any:
    """:func:`load_encoding` without blocking the event loop on the first (slow) load."""
    if load_encoding.cache_info().currsize:
        return load_encoding()
    return await asyncio.to_thread(load_encoding)


def count_text_tokens(text: str) -> int:
    """BPE tokens of ``text``; special-token look-alikes such as ``<|endoftext|>`` count as plain text."""
    if not text:
        return 0
    return len(load_encoding().encode_ordinary(text))


def count_message_tokens(messages: Iterable[Mapping[str, Any]]) -> int:
    """Prompt tokens of a chat request, counted the way OpenAI bills chat messages."""
    total = _TOKENS_REPLY_PRIMING
    for message in messages:
        total += _TOKENS_PER_MESSAGE
        for key, value in message.items():
            if isinstance(value, str):
                total += count_text_tokens(value)
            if key == "name":
                total += 1
    return total


def estimate_usage(messages: Iterable[Mapping[str, Any]], output_text: str) -> Usage:
    """Usage computed locally, flagged ``estimated=True``."""
    return Usage(
        input_tokens=count_message_tokens(messages),
        output_tokens=count_text_tokens(output_text),
        estimated=True,
    )
