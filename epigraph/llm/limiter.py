"""One shared limiter per model endpoint, and the bounded retry loop that goes with it.

Every request of every concurrent caller (extraction fan-out, resolution, summaries, embeddings if they
share the endpoint) passes through the same :class:`Limiter`:

- at most ``max_in_flight`` requests on the wire (an ``asyncio.Semaphore``),
- at most ``rpm`` requests and ``tpm`` tokens per window, each a bucket holding one window's allowance
  and refilled continuously (how OpenAI counts: its ``x-ratelimit-reset-*`` headers are the time the
  bucket takes to be full again), queued FIFO. A request reserves its estimated input plus its output
  cap, and settles with the actual usage when the reply arrives;
- the provider's ``x-ratelimit-*`` headers, on every answer, set both buckets to what the provider has
  left (:meth:`Limiter.observe`: what it reported when it charged the request, plus its refill since,
  minus what was reserved after that request): the client paces itself by the provider's own count,
  whatever its estimate of a prompt's tokens and whether or not the provider gives back an unused
  output cap (a provider that reports its windows is trusted to count them: no refunds). A limit not
  configured (``rpm`` or ``tpm`` 0) is learned from the headers the first time they report it;
- a 429 pauses the whole limiter until its ``Retry-After``: no caller sends while the server asked
  everyone to wait.

:func:`run_with_retries` retries 429s, 5xx, timeouts and connection errors with jittered exponential
backoff, bounded by ``RetryPolicy.max_attempts`` AND ``RetryPolicy.max_retry_seconds`` (no retry starts
once the budget is spent, and no wait is started that would end past it), then raises ONE typed error:
``RateLimited``, ``LLMTimeout``, ``LLMUnavailable``; non-retryable 4xx give ``LLMRequestRejected`` at once.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, replace
from types import TracebackType
from typing import TypeVar

from ..config import Settings
from .failures import Failure, FailureKind, typed_error
from .rate_headers import Window, parse_rate_headers

T = TypeVar("T")
_MAX_FALLBACKS = 4  # capabilities only get weaker, so a handful is plenty; this is the hard stop
Clock = Callable[[], float]


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    max_attempts: int = 5
    max_retry_seconds: float = 120.0
    """No retry starts after this many seconds since the first attempt, nor any wait that would end later."""
    base_delay: float = 0.5
    max_delay: float = 20.0

    @classmethod
    def from_settings(cls, settings: Settings) -> RetryPolicy:
        return cls(max_attempts=settings.llm_max_attempts, max_retry_seconds=settings.llm_max_retry_seconds)

    def backoff(self, retry_number: int) -> float:
        """Exponential backoff with "equal jitter": half fixed, half random, so callers spread out."""
        ceiling = min(self.max_delay, self.base_delay * 2.0 ** max(0, retry_number - 1))
        return ceiling / 2 + random.random() * ceiling / 2

    def next_delay(self, failure: Failure, attempts: int, elapsed: float) -> float | None:
        """Seconds to wait before the next attempt, or None to give up now."""
        if not failure.retryable or attempts >= self.max_attempts:
            return None
        remaining = self.max_retry_seconds - elapsed
        if failure.retry_after is not None:
            if failure.retry_after > remaining:
                return None
            spread = random.random() * min(0.25, failure.retry_after * 0.1)
            return min(failure.retry_after + spread, remaining)
        delay = min(self.backoff(attempts), remaining)
        return delay if delay > 0 else None

    def why_stopped(self, failure: Failure, attempts: int, elapsed: float) -> str:
        if not failure.retryable:
            return "not retryable"
        if attempts >= self.max_attempts:
            return f"max attempts {self.max_attempts} reached"
        if failure.retry_after is not None and failure.retry_after > self.max_retry_seconds - elapsed:
            return f"server asked to wait {failure.retry_after:g} s, past the retry budget"
        return f"retry budget of {self.max_retry_seconds:g} s spent"


@dataclass(slots=True)
class LimiterStats:
    """Counters for tests and reports. ``requests`` counts HTTP attempts, not calls."""

    requests: int = 0
    retries: int = 0
    rate_limited: int = 0
    timeouts: int = 0
    unavailable: int = 0
    rejected: int = 0
    unexpected: int = 0
    fallbacks: int = 0
    pauses: int = 0
    observed: int = 0
    """Answers whose rate-limit headers set the buckets."""
    in_flight: int = 0
    max_in_flight: int = 0

    def record(self, failure: Failure) -> None:
        attr = _STAT_FOR_KIND[failure.kind]
        setattr(self, attr, getattr(self, attr) + 1)


_STAT_FOR_KIND: dict[FailureKind, str] = {
    "rate_limited": "rate_limited",
    "timeout": "timeouts",
    "unavailable": "unavailable",
    "rejected": "rejected",
    "unexpected": "unexpected",
    "fallback": "fallbacks",
}


class TokenBucket:
    """Units (tokens, or requests) per window: reserve before sending, settle with actual usage after,
    or set to what the provider reports (:meth:`observe`). FIFO for waiters."""

    def __init__(self, per_window: int, window_s: float = 60.0, clock: Clock = time.monotonic) -> None:
        self.capacity = per_window
        self._rate = per_window / window_s
        self._window_s = window_s
        self._level = float(per_window)
        self._clock = clock
        self._stamp = clock()
        self._lock = asyncio.Lock()
        self._reserved: deque[tuple[float, int]] = deque()
        """(when, how much) of recent reservations: what was charged after a reported one."""
        self.provider_counts = False
        """The provider reported this window: its count is the truth, unused reservations stay spent."""

    @property
    def level(self) -> float:
        self._refill()
        return self._level

    def _refill(self) -> None:
        now = self._clock()
        self._level = min(self.capacity, self._level + (now - self._stamp) * self._rate)
        self._stamp = now

    async def reserve(self, tokens: int) -> int:
        """Wait until ``tokens`` (capped at the capacity, so a huge request still goes) are available."""
        want = max(0, min(tokens, self.capacity))
        async with self._lock:
            while True:
                self._refill()
                if self._level >= want:
                    self._level -= want
                    self._log(want)
                    return want
                await asyncio.sleep((want - self._level) / self._rate)

    def _log(self, amount: int) -> None:
        now = self._clock()
        self._reserved.append((now, amount))
        while self._reserved and self._reserved[0][0] < now - 2 * self._window_s:
            self._reserved.popleft()

    def settle(self, reserved: int, actual: int) -> None:
        """Take what was under-reserved (the level may go negative); give back what was over-reserved,
        unless the provider counts this window (it keeps the reservation: OpenAI's output cap)."""
        self._refill()
        if actual > reserved or not self.provider_counts:
            self._level = min(self.capacity, self._level + reserved - actual)

    def give_back(self, amount: int) -> None:
        """Return a reservation whose request was never sent (cancelled while it waited)."""
        self._refill()
        self._level = min(self.capacity, self._level + amount)

    def observe(self, window: Window, reserved_at: float) -> None:
        """Set the level to the provider's: ``window.remaining`` when it charged the request reserved at
        ``reserved_at``, plus the refill since, minus what this bucket reserved after it. A different
        ``window.limit`` becomes this bucket's (the provider knows its limits best)."""
        if window.limit != self.capacity:
            self.capacity = window.limit
            self._rate = window.limit / self._window_s
        self._refill()
        later = sum(amount for at, amount in self._reserved if at > reserved_at)
        refilled = (self._clock() - reserved_at) * self._rate
        self._level = max(
            -float(self.capacity), min(float(self.capacity), window.remaining + refilled - later)
        )
        self.provider_counts = True


class Limiter:
    """The one limiter of an endpoint, shared by every concurrent caller. 0 means unlimited."""

    def __init__(
        self,
        *,
        max_in_flight: int = 8,
        rpm: int = 0,
        tpm: int = 0,
        window_s: float = 60.0,
        max_pause_s: float = 120.0,
        clock: Clock = time.monotonic,
    ) -> None:
        self.max_in_flight, self.rpm, self.tpm, self.window_s = max_in_flight, rpm, tpm, window_s
        self._semaphore = asyncio.Semaphore(max_in_flight) if max_in_flight > 0 else None
        self.requests = TokenBucket(rpm, window_s, clock) if rpm > 0 else None
        self.tokens = TokenBucket(tpm, window_s, clock) if tpm > 0 else None
        self._max_pause_s = max_pause_s
        self._clock = clock
        self._paused_until = 0.0
        self._stats = LimiterStats()

    @classmethod
    def from_settings(cls, settings: Settings, *, window_s: float = 60.0) -> Limiter:
        return cls(
            max_in_flight=settings.llm_max_in_flight,
            rpm=settings.llm_rpm,
            tpm=settings.llm_tpm,
            window_s=window_s,
            max_pause_s=settings.llm_max_retry_seconds,
        )

    @property
    def stats(self) -> LimiterStats:
        """A snapshot of the counters."""
        return replace(self._stats)

    def slot(self, estimated_tokens: int = 0) -> Slot:
        """``async with limiter.slot(n) as slot:`` around one HTTP attempt; ``slot.settle(actual)`` after."""
        return Slot(self, estimated_tokens)

    def pause(self, seconds: float) -> None:
        """Hold every caller for ``seconds`` (capped at ``max_pause_s``), e.g. on a 429's Retry-After."""
        until = self._clock() + min(max(0.0, seconds), self._max_pause_s)
        if until > self._paused_until:
            self._paused_until = until
            self._stats.pauses += 1

    @property
    def paused_for(self) -> float:
        return max(0.0, self._paused_until - self._clock())

    def observe(self, headers: Mapping[str, str], reserved_at: float) -> None:
        """Align the buckets with the provider's ``x-ratelimit-*`` headers on an answer to the request
        whose slot was reserved at ``reserved_at`` (see the module docstring); a window the limiter was
        not told about is learned. Headers without those fields change nothing."""
        reported = parse_rate_headers(headers)
        if reported is None:
            return
        if reported.requests is not None:
            if self.requests is None:
                self.requests = TokenBucket(reported.requests.limit, self.window_s, self._clock)
            self.requests.observe(reported.requests, reserved_at)
        if reported.tokens is not None:
            if self.tokens is None:
                self.tokens = TokenBucket(reported.tokens.limit, self.window_s, self._clock)
            self.tokens.observe(reported.tokens, reserved_at)
        self._stats.observed += 1

    def record(self, failure: Failure, *, retrying: bool) -> None:
        self._stats.record(failure)
        if retrying and failure.kind != "fallback":
            self._stats.retries += 1

    async def _acquire(self, estimated_tokens: int) -> int:
        if self._semaphore is not None:
            await self._semaphore.acquire()
        tokens, reserved, request = self.tokens, 0, 0
        try:
            reserved = await tokens.reserve(estimated_tokens) if tokens else 0
            request = await self.requests.reserve(1) if self.requests else 0
            # A deadline, not a condition: sleep until it, re-check (a new 429 may have extended it).
            while (wait := self._paused_until - self._clock()) > 0:  # noqa: ASYNC110
                await asyncio.sleep(wait)
        except BaseException:  # cancelled while queued: give back what was taken
            if tokens is not None and reserved:
                tokens.give_back(reserved)
            if self.requests is not None and request:
                self.requests.give_back(request)
            if self._semaphore is not None:
                self._semaphore.release()
            raise
        stats = self._stats
        stats.requests += 1
        stats.in_flight += 1
        stats.max_in_flight = max(stats.max_in_flight, stats.in_flight)
        return reserved

    def _release(self) -> None:
        self._stats.in_flight -= 1
        if self._semaphore is not None:
            self._semaphore.release()


class Slot:
    """One admitted request. Unsettled reservations stay spent (the conservative choice)."""

    def __init__(self, limiter: Limiter, estimated_tokens: int) -> None:
        self._limiter = limiter
        self._estimated = estimated_tokens
        self._reserved = 0
        self._settled = False
        self.reserved_at = 0.0

    async def __aenter__(self) -> Slot:
        self._reserved = await self._limiter._acquire(self._estimated)
        self.reserved_at = self._limiter._clock()
        return self

    def observe(self, headers: Mapping[str, str]) -> None:
        """The provider's rate-limit headers on this request's answer (:meth:`Limiter.observe`)."""
        self._limiter.observe(headers, self.reserved_at)

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._limiter._release()

    def settle(self, actual_tokens: int) -> None:
        if not self._settled and self._limiter.tokens is not None:
            self._limiter.tokens.settle(self._reserved, actual_tokens)
        self._settled = True


async def run_with_retries(
    attempt_once: Callable[[int], Awaitable[T]],
    classify: Callable[[Exception], Failure],
    *,
    limiter: Limiter,
    policy: RetryPolicy,
    what: str,
    clock: Clock = time.monotonic,
) -> tuple[T, int]:
    """Run ``attempt_once(attempt_number)`` until it succeeds or the policy gives up.

    Returns the result and the number of attempts. A ``fallback`` failure (the attempt already switched
    to a weaker capability) is retried at once and does not count against ``max_attempts``; it is
    bounded because capabilities only ever get weaker. On giving up, raises the typed ``LLMError`` for
    the last failure; its message says what failed, after how many attempts and why it stopped.
    """
    started = clock()
    attempt, fallbacks = 0, 0
    while True:
        attempt += 1
        try:
            return await attempt_once(attempt), attempt
        except Exception as exc:  # every failure is classified; unknown ones become "unexpected"
            failure = classify(exc)
            cause = exc if failure.chain else None
        # Decided outside the except block: an API error (whose text may echo a credential) must not
        # ride along as the typed error's __context__.
        if failure.kind == "fallback" and fallbacks < _MAX_FALLBACKS:
            fallbacks += 1
            limiter.record(failure, retrying=True)
            continue
        if failure.kind == "fallback":
            failure = Failure("rejected", f"capability fallbacks exhausted: {failure.detail}")
        elapsed = clock() - started
        delay = policy.next_delay(failure, attempt - fallbacks, elapsed)
        limiter.record(failure, retrying=delay is not None)
        if delay is None:
            reason = policy.why_stopped(failure, attempt - fallbacks, elapsed)
            message = (
                f"{what} failed: {failure.detail} "
                f"(after {attempt} attempt{'s' if attempt != 1 else ''} in {elapsed:.1f} s; {reason})"
            )
            error = typed_error(failure, message, attempt)
            error.__cause__ = cause
            raise error
        if failure.kind == "rate_limited":
            limiter.pause(delay)
        await asyncio.sleep(delay)
