"""A provider's terms for the fake server (:mod:`epigraph.testing.server`): rate limits per model,
enforced the way OpenAI enforces them and reported in its ``x-ratelimit-*`` headers, a latency model,
and a rate of 5xx replies.

- **Windows.** Each limit (requests per minute, tokens per minute) is a bucket holding one minute's
  allowance that refills continuously at ``limit / 60`` per second. That is what OpenAI's headers show:
  ``x-ratelimit-reset-requests: 12ms`` after one request at 5,000 RPM is 60 s / 5,000, and
  ``x-ratelimit-reset-tokens`` is the time the tokens bucket takes to be full again.
- **What a request costs.** On arrival, one request and its *estimated* tokens: the characters of its
  messages (or embedding inputs) / 4, plus the output it asks room for (``max_tokens`` or
  ``max_completion_tokens``). OpenAI's rate-limit guide: "your rate limit is calculated as the maximum of
  max_tokens and the estimated number of tokens based on the character count of your request"; observed
  headers show both counted, which is what this charges (``Accounting.SUM``; ``Accounting.MAX`` is the
  guide's wording). Nothing is refunded when the reply is shorter.
- **Refusals.** A request a bucket cannot pay is answered 429 with ``retry-after-ms`` and ``Retry-After``
  (when the buckets will hold it) and OpenAI's message ("Rate limit reached for <model> ... on tokens per
  min (TPM): Limit ..., Used ..., Requested ...."); it still costs one request ("unsuccessful requests
  contribute to your per-minute limit"), down to at most one minute's debt.

Every answer carries ``x-ratelimit-limit-requests``, ``-tokens``, ``x-ratelimit-remaining-requests``,
``-tokens`` and ``x-ratelimit-reset-requests``, ``-tokens`` (durations as OpenAI writes them: ``12ms``,
``1s``, ``6m0s``). ``RateLimits.admissions`` keeps what was charged when, for measuring the share of a
limit a client used.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

Clock = Callable[[], float]

__all__ = [
    "Accounting",
    "Admission",
    "Latency",
    "RateLimits",
    "Terms",
    "charged_tokens",
    "duration_text",
]


class Accounting(Enum):
    """How a request's tokens are estimated against the tokens-per-minute limit."""

    SUM = "sum"
    """Prompt characters / 4 plus the requested output cap (observed in OpenAI's headers)."""
    MAX = "max"
    """The larger of the two (the wording of OpenAI's rate-limit guide)."""


def charged_tokens(body: Mapping[str, Any], accounting: Accounting = Accounting.SUM) -> int:
    """The tokens a request body is charged: its text's characters / 4 (rounded up), and its output cap."""
    if "messages" in body:
        chars = sum(len(_text(m.get("content"))) for m in body.get("messages") or [])
    else:
        raw = body.get("input", "")
        chars = len(raw) if isinstance(raw, str) else sum(len(str(item)) for item in raw)
    prompt = math.ceil(chars / 4)
    cap = int(body.get("max_completion_tokens") or body.get("max_tokens") or 0)
    return prompt + cap if accounting is Accounting.SUM else max(prompt, cap)


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts
        return " ".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return "" if content is None else str(content)


def duration_text(seconds: float) -> str:
    """A duration as OpenAI's reset headers write it: ``12ms``, ``1s``, ``6m0s``, ``1h2m3.5s``."""
    millis = max(0, round(seconds * 1000))
    if millis < 1000:
        return f"{millis}ms"
    hours, rest = divmod(millis, 3_600_000)
    minutes, rest = divmod(rest, 60_000)
    secs = f"{rest / 1000:.3f}".rstrip("0").rstrip(".")
    if hours:
        return f"{hours}h{minutes}m{secs}s"
    return f"{minutes}m{secs}s" if minutes else f"{secs}s"


class _Bucket:
    """One window's allowance, refilled continuously; may go below zero by at most one allowance."""

    def __init__(self, per_window: int, window_s: float, clock: Clock) -> None:
        self.capacity = float(per_window)
        self.rate = per_window / window_s
        self.level = float(per_window)
        self._clock = clock
        self._stamp = clock()

    def refill(self) -> None:
        now = self._clock()
        self.level = min(self.capacity, self.level + (now - self._stamp) * self.rate)
        self._stamp = now

    def wait_for(self, amount: float) -> float:
        """Seconds until ``amount`` is available (0 now); ``inf`` if it never fits."""
        if amount > self.capacity:
            return math.inf
        return max(0.0, (amount - self.level) / self.rate)

    def take(self, amount: float) -> None:
        self.level = max(-self.capacity, self.level - amount)

    def reset_s(self) -> float:
        return max(0.0, (self.capacity - self.level) / self.rate)


@dataclass(frozen=True)
class Admission:
    """The limiter's answer to one request: admitted or not, the headers to send, and for a refusal the
    wait the server suggests and its message."""

    admitted: bool
    headers: dict[str, str]
    retry_after_s: float = 0.0
    message: str = ""
    limit: str = ""
    """``requests`` or ``tokens``: the limit that refused it."""


@dataclass(frozen=True)
class Charged:
    """One admitted request: when (the clock's time), the tokens it was charged and the buckets' levels
    after it."""

    at: float
    tokens: int
    requests_left: float
    tokens_left: float


class RateLimits:
    """Requests and tokens per minute of one model (0: no such limit), as described in the module.
    ``window_s`` shortens the minute (for tests: the same arithmetic in a fraction of the time);
    ``report=False`` enforces the limits without the ``x-ratelimit-*`` headers (a 429 still says when to
    come back), as some gateways do."""

    def __init__(
        self,
        rpm: int = 0,
        tpm: int = 0,
        *,
        accounting: Accounting = Accounting.SUM,
        model: str = "the model",
        window_s: float = 60.0,
        report: bool = True,
        clock: Clock = time.monotonic,
    ) -> None:
        self.rpm, self.tpm, self.accounting, self.model = rpm, tpm, accounting, model
        self.report = report
        self._requests = _Bucket(rpm, window_s, clock) if rpm > 0 else None
        self._tokens = _Bucket(tpm, window_s, clock) if tpm > 0 else None
        self._clock = clock
        self.admissions: list[Charged] = []
        self.refused: dict[str, int] = {"requests": 0, "tokens": 0}

    def admit(self, body: Mapping[str, Any]) -> Admission:
        """Charge the request ``body`` or refuse it (see the module docstring)."""
        tokens = charged_tokens(body, self.accounting)
        for bucket in (self._requests, self._tokens):
            if bucket is not None:
                bucket.refill()
        short = self._short_of(tokens)
        if short is not None:
            limit, wait = short
            if self._requests is not None:
                self._requests.take(1)
            self.refused[limit] += 1
            return Admission(False, self.headers(), wait, self._message(limit, tokens, wait), limit)
        if self._requests is not None:
            self._requests.take(1)
        if self._tokens is not None:
            self._tokens.take(tokens)
        self.admissions.append(
            Charged(
                self._clock(),
                tokens,
                self._requests.level if self._requests else math.inf,
                self._tokens.level if self._tokens else math.inf,
            )
        )
        return Admission(True, self.headers())

    def _short_of(self, tokens: int) -> tuple[str, float] | None:
        """The limit that cannot pay now and how long until both can (None: both can)."""
        waits = {
            "requests": self._requests.wait_for(1) if self._requests else 0.0,
            "tokens": self._tokens.wait_for(tokens) if self._tokens else 0.0,
        }
        binding = max(waits, key=lambda k: waits[k])
        return (binding, waits[binding]) if waits[binding] > 0 else None

    def _message(self, limit: str, tokens: int, wait: float) -> str:
        bucket = self._requests if limit == "requests" else self._tokens
        assert bucket is not None
        name = "requests per min (RPM)" if limit == "requests" else "tokens per min (TPM)"
        used = round(bucket.capacity - max(bucket.level, 0.0))
        asked = 1 if limit == "requests" else tokens
        when = "never: the request is larger than the limit" if math.isinf(wait) else duration_text(wait)
        return (
            f"Rate limit reached for {self.model} on {name}: Limit {round(bucket.capacity)}, "
            f"Used {used}, Requested {asked}. Please try again in {when}."
        )

    def headers(self) -> dict[str, str]:
        out: dict[str, str] = {}
        if not self.report:
            return out
        for name, bucket in (("requests", self._requests), ("tokens", self._tokens)):
            if bucket is None:
                continue
            out[f"x-ratelimit-limit-{name}"] = str(round(bucket.capacity))
            out[f"x-ratelimit-remaining-{name}"] = str(max(0, math.floor(bucket.level)))
            out[f"x-ratelimit-reset-{name}"] = duration_text(bucket.reset_s())
        return out


@dataclass(frozen=True)
class Latency:
    """How long a reply takes: ``first_token_s`` plus the prompt read at ``input_tokens_per_s`` before
    the first token, then each token at ``output_tokens_per_s`` (0: instant). Each request draws one
    factor for both from a log-normal of ``jitter`` (its sigma), never below ``floor``; a share
    ``slow_rate`` of requests is ``slow_factor`` times slower."""

    first_token_s: float = 0.0
    input_tokens_per_s: float = 0.0
    output_tokens_per_s: float = 0.0
    jitter: float = 0.0
    floor: float = 0.5
    """The smallest jitter factor: no reply is faster than this share of its nominal time."""
    slow_rate: float = 0.0
    slow_factor: float = 1.0

    def plan(
        self, prompt_tokens: int, piece_tokens: Sequence[int], rng: random.Random
    ) -> tuple[float, list[float]]:
        """(seconds before the first piece, seconds before each piece) for one reply."""
        factor = max(self.floor, rng.lognormvariate(0.0, self.jitter)) if self.jitter else 1.0
        if self.slow_rate and rng.random() < self.slow_rate:
            factor *= self.slow_factor
        read = prompt_tokens / self.input_tokens_per_s if self.input_tokens_per_s else 0.0
        first = (self.first_token_s + read) * factor
        per_token = factor / self.output_tokens_per_s if self.output_tokens_per_s else 0.0
        return first, [n * per_token for n in piece_tokens]

    def nominal_s(self, prompt_tokens: int, output_tokens: int) -> float:
        """The reply's time with a jitter factor of 1 and no slow draw."""
        read = prompt_tokens / self.input_tokens_per_s if self.input_tokens_per_s else 0.0
        write = output_tokens / self.output_tokens_per_s if self.output_tokens_per_s else 0.0
        return self.first_token_s + read + write


@dataclass(frozen=True)
class Terms:
    """How the fake server serves one model: its rate limits, its latency, and the share of requests
    answered with a 500 (after they were charged, as a provider's failure would be)."""

    limits: RateLimits | None = None
    latency: Latency | None = None
    error_rate: float = 0.0
    seed: int = 0
    rng: random.Random = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "rng", random.Random(self.seed))

    def fails(self) -> bool:
        return bool(self.error_rate) and self.rng.random() < self.error_rate
