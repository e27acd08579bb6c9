"""What the model client's calls came to, counted as they end: calls, failures, tokens, retries and
latencies per prompt (``OpenAIChat.calls``), read by ``epigraph serve``'s metrics. Plain numbers: no
dependency, no lock (one event loop)."""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field, replace

from ..usage import Usage

BUCKETS: tuple[float, ...] = (0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0)
"""Upper bounds (seconds) of the latency histogram's buckets; a last one, +Inf, holds every call."""


@dataclass
class PromptCalls:
    """The calls of one prompt: how many, how they ended, their tokens, retries and latencies."""

    calls: int = 0
    outcomes: dict[str, int] = field(default_factory=dict)
    """``ok``, ``closed`` (the reader stopped the stream early), or the error's type name."""
    input_tokens: int = 0
    output_tokens: int = 0
    retries: int = 0
    """HTTP attempts beyond the first (a 429, a timeout, a 5xx, a capability fallback)."""
    seconds: float = 0.0
    buckets: list[int] = field(default_factory=lambda: [0] * (len(BUCKETS) + 1))
    """Calls per latency bucket (:data:`BUCKETS`, then +Inf), not cumulative."""


class CallStats:
    """The calls of one client, per prompt name (``""``: a call that named none)."""

    def __init__(self) -> None:
        self._prompts: dict[str, PromptCalls] = {}

    def record(
        self, prompt: str, *, seconds: float, attempts: int, outcome: str, usage: Usage | None
    ) -> None:
        calls = self._prompts.setdefault(prompt, PromptCalls())
        calls.calls += 1
        calls.outcomes[outcome] = calls.outcomes.get(outcome, 0) + 1
        calls.retries += max(0, attempts - 1)
        calls.seconds += seconds
        calls.buckets[bisect.bisect_left(BUCKETS, seconds)] += 1
        if usage is not None:
            calls.input_tokens += usage.input_tokens
            calls.output_tokens += usage.output_tokens

    def snapshot(self) -> dict[str, PromptCalls]:
        """A copy of the counts, per prompt."""
        return {
            name: replace(c, outcomes=dict(c.outcomes), buckets=list(c.buckets))
            for name, c in self._prompts.items()
        }
