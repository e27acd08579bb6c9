"""Talking to chat models: :class:`OpenAIChat` over the openai SDK, one shared limiter, capability profiles.

- ``client``: :class:`OpenAIChat` (``complete``, ``stream``);
- ``failures``: what a failed call means (its retry kind, its typed error, Retry-After), secret redaction;
- ``limiter``: the shared :class:`Limiter` (concurrency, RPM, TPM, 429 pauses) and bounded retries;
- ``profiles``: per-endpoint capabilities (:class:`EndpointProfile`), think-tag stripping;
- ``stream``: one open stream, its slot and its usage.

Importing this package imports the openai SDK; the rest of epigraph imports it only when a client is built.
"""

from .client import DEFAULT_BASE_URL, OpenAIChat
from .failures import classify_openai_error, redact
from .limiter import Limiter, LimiterStats, RetryPolicy
from .profiles import EndpointProfile

__all__ = [
    "DEFAULT_BASE_URL",
    "EndpointProfile",
    "Limiter",
    "LimiterStats",
    "OpenAIChat",
    "RetryPolicy",
    "classify_openai_error",
    "redact",
]
