"""Helpers for the LLM client tests: a real server, the real SDK, fast retry settings."""

from __future__ import annotations

from typing import Any

from epigraph.llm import Limiter, OpenAIChat, RetryPolicy
from epigraph.prompts.protocol import ChatRequest
from epigraph.testing.server import FakeOpenAIServer

API_KEY = "sk-test-SECRET-0123456789abcdef"

HANG = 20.0
"""Seconds a test gives a call that must end by itself: a bound for hangs only (under 30, the longest
Retry-After the tests send), never a measure of speed, so a loaded machine passes."""

SUCCESS_S = 2.0
"""The client timeout of a fault test whose other replies must arrive in time: a loaded machine's share
(0.3 s failed them under load). Its fault is a hang or a stall of :data:`HANG`, never a near miss."""

FAST_RETRY = RetryPolicy(max_attempts=4, max_retry_seconds=5.0, base_delay=0.01, max_delay=0.05)


def make_client(srv: FakeOpenAIServer, **overrides: Any) -> OpenAIChat:
    options: dict[str, Any] = {
        "model": "fake-model",
        "base_url": srv.base_url,
        "api_key": API_KEY,
        "timeout": 2.0,
        "retry": FAST_RETRY,
        "limiter": Limiter(max_in_flight=8),
    }
    options.update(overrides)
    return OpenAIChat(**options)


def ask(text: str = "hello", **fields: Any) -> ChatRequest:
    return ChatRequest(
        messages=[{"role": "system", "content": "Be brief."}, {"role": "user", "content": text}], **fields
    )
