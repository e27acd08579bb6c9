"""The shared limiter: concurrency, RPM, TPM, 429 pauses for everyone, and the retry policy's bounds."""

from __future__ import annotations

import asyncio
import random
import time
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest

from epigraph.errors import LLMError
from epigraph.llm import Limiter, OpenAIChat, RetryPolicy
from epigraph.llm.failures import Failure, parse_retry_after
from epigraph.llm.limiter import TokenBucket
from epigraph.prompts.protocol import Completion
from epigraph.testing.server import FakeOpenAIServer, Reply
from tests.support.llm_client import HANG, SUCCESS_S, ask, make_client

# -- pure policy ----------------------------------------------------------------------------------


def test_parse_retry_after_forms() -> None:
    now = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)
    assert parse_retry_after({"Retry-After": "3"}) == 3.0
    assert parse_retry_after({"retry-after": "0.5"}) == 0.5
    assert parse_retry_after({"Retry-After": "7", "retry-after-ms": "250"}) == 0.25
    assert parse_retry_after({"Retry-After": format_datetime(now + timedelta(seconds=42))}, now) == 42.0
    assert parse_retry_after({"Retry-After": format_datetime(now - timedelta(seconds=5))}, now) == 0.0
    assert parse_retry_after({"Retry-After": "-4"}) == 0.0
    assert parse_retry_after({"Retry-After": "soon"}) is None
    assert parse_retry_after({}) is None


def test_backoff_is_exponential_jittered_and_capped() -> None:
    policy = RetryPolicy(base_delay=0.1, max_delay=1.0)
    for retry, ceiling in [(1, 0.1), (2, 0.2), (3, 0.4), (4, 0.8), (5, 1.0), (9, 1.0)]:
        delays = [policy.backoff(retry) for _ in range(50)]
        assert all(ceiling / 2 <= d <= ceiling for d in delays)
        assert len(set(delays)) > 1, "jittered"


def test_next_delay_respects_attempts_and_budget() -> None:
    policy = RetryPolicy(max_attempts=3, max_retry_seconds=10.0, base_delay=1.0, max_delay=4.0)
    boom = Failure("unavailable", "HTTP 500")
    assert policy.next_delay(boom, attempts=1, elapsed=0.0) is not None
    assert policy.next_delay(boom, attempts=3, elapsed=0.0) is None
    assert policy.next_delay(boom, attempts=1, elapsed=10.0) is None
    assert policy.next_delay(boom, attempts=2, elapsed=9.9) == pytest.approx(0.1)
    assert policy.next_delay(Failure("rejected", "HTTP 401"), attempts=1, elapsed=0.0) is None
    wait = Failure("rate_limited", "HTTP 429", retry_after=2.0)
    delay = policy.next_delay(wait, attempts=1, elapsed=0.0)
    assert delay is not None and 2.0 <= delay <= 2.25
    assert policy.next_delay(Failure("rate_limited", "429", retry_after=11.0), 1, 0.0) is None


async def test_token_bucket_reserves_waits_and_settles() -> None:
    bucket = TokenBucket(100, window_s=0.5)  # refills 200 tokens/s
    started = time.monotonic()  # before the first reserve: a stall after it refills the bucket early
    assert await bucket.reserve(80) == 80
    await bucket.reserve(80)  # 160 from a full 100 refilled at 200/s: 60 more take 0.3 s at least
    assert time.monotonic() - started >= 0.3 - 0.005  # (the clock's rounding)
    level = bucket.level
    bucket.settle(80, 10)  # used far less than reserved: 70 back at once, no waiting for a refill
    assert bucket.level >= level + 70
    assert await bucket.reserve(60) == 60
    assert await bucket.reserve(10_000) == 100, "a request larger than the window still goes, alone"


async def test_limiter_pause_holds_new_slots() -> None:
    limiter = Limiter(max_in_flight=2)
    started = time.monotonic()  # before the pause: a stall after it would shorten the wait
    limiter.pause(0.2)
    async with limiter.slot():
        pass
    assert time.monotonic() - started >= 0.2
    assert limiter.stats.pauses == 1 and limiter.stats.requests == 1


# -- through the client and the server ------------------------------------------------------------


async def test_in_flight_bound_under_50_concurrent_callers() -> None:
    limiter = Limiter(max_in_flight=5)
    async with FakeOpenAIServer(lambda body: Reply(text="ok", delay_s=0.03)) as srv:
        async with make_client(srv, limiter=limiter) as llm:
            results = await asyncio.gather(*(llm.complete(ask(f"q{i}")) for i in range(50)))
    assert all(r.text == "ok" for r in results)
    assert limiter.stats.max_in_flight == 5 and srv.max_in_flight <= 5
    assert srv.max_in_flight >= 4, "the bound is reached, not just respected"
    assert limiter.stats.requests == 50 and limiter.stats.in_flight == 0


async def test_streams_count_against_the_same_bound() -> None:
    limiter = Limiter(max_in_flight=3)
    reply = Reply(text="a b c", chunk_delay_s=0.01)

    async def drain(llm: OpenAIChat) -> str:
        return "".join([c.text async for c in llm.stream(ask())])

    async with FakeOpenAIServer(lambda body: reply) as srv, make_client(srv, limiter=limiter) as llm:
        texts = await asyncio.gather(
            *(drain(llm) for _ in range(12)), *(llm.complete(ask()) for _ in range(12))
        )
    assert texts[:12] == ["a b c"] * 12
    assert limiter.stats.max_in_flight == 3 and srv.max_in_flight <= 3


async def test_one_limiter_shared_by_two_clients() -> None:
    limiter = Limiter(max_in_flight=3)
    async with FakeOpenAIServer(lambda body: Reply(delay_s=0.02)) as srv:
        async with make_client(srv, limiter=limiter) as a, make_client(srv, limiter=limiter) as b:
            await asyncio.gather(*(client.complete(ask()) for client in [a, b] * 15))
    assert srv.max_in_flight <= 3 and limiter.stats.requests == 30


async def test_requests_per_minute_with_a_short_window() -> None:
    rpm, window = 8, 0.4
    rate = rpm / window  # the bucket refills 20 requests a second
    limiter = Limiter(max_in_flight=50, rpm=rpm, window_s=window)
    async with FakeOpenAIServer() as srv, make_client(srv, limiter=limiter) as llm:
        await llm.complete(ask())  # warm up (the SDK's first call does one-off work), then let it refill
        await asyncio.sleep(window)
        started = time.monotonic()
        await asyncio.gather(*(llm.complete(ask()) for _ in range(20)))
        elapsed = time.monotonic() - started
    arrivals = sorted(r.received_at for r in srv.chat_requests[1:])
    # 20 requests from a full bucket of 8: a burst of 8, then 12 more at 20 a second.
    assert elapsed >= (20 - rpm) / rate * 0.9
    # Server-side arrival times carry the SDK's per-request CPU time (a few ms each, serialized on one
    # loop): allow 150 ms of it. In any stretch of time t, at most a window's allowance plus t's refill.
    for i, early in enumerate(arrivals):
        for j in range(i + rpm + 1, len(arrivals)):
            allowed = rpm + (arrivals[j] - early + 0.15) * rate
            assert j - i + 1 <= allowed, "never more than the allowance plus the refill (server clock)"


async def test_tokens_per_minute_settles_with_actual_usage() -> None:
    stopped = 100.0  # a clock that does not move: no refill, however slow the machine
    limiter = Limiter(max_in_flight=4, tpm=10_000, clock=lambda: stopped)
    reply = Reply(text="ok", prompt_tokens=30, completion_tokens=20)
    async with FakeOpenAIServer(lambda body: reply) as srv, make_client(srv, limiter=limiter) as llm:
        await llm.complete(ask(max_tokens=500))
    assert limiter.tokens is not None
    # 500+ reserved up front, settled to the 50 actually used.
    assert limiter.tokens.level == 9_950


async def test_tokens_per_minute_spaces_requests() -> None:
    limiter = Limiter(max_in_flight=10, tpm=300, window_s=0.5)  # 600 tokens/s
    reply = Reply(text="ok", prompt_tokens=10, completion_tokens=140)
    async with FakeOpenAIServer(lambda body: reply) as srv, make_client(srv, limiter=limiter) as llm:
        started = time.monotonic()
        await asyncio.gather(*(llm.complete(ask(max_tokens=140)) for _ in range(6)))
        elapsed = time.monotonic() - started
    # ~150 tokens each, 900 in all against 300 up front + 600/s: at least ~1 s.
    assert elapsed >= 0.8


async def test_retry_after_pauses_every_concurrent_caller() -> None:
    state = {"sent_429": False}

    def handler(body: dict) -> Reply:
        if not state["sent_429"]:
            state["sent_429"] = True
            return Reply.rate_limited(retry_after=None, retry_after_ms=400)
        return Reply(text="ok", delay_s=0.01)

    limiter = Limiter(max_in_flight=4)
    async with FakeOpenAIServer(handler) as srv, make_client(srv, limiter=limiter) as llm:
        results = await asyncio.gather(*(llm.complete(ask()) for _ in range(20)))
    assert all(r.text == "ok" for r in results)
    assert limiter.stats.rate_limited == 1 and limiter.stats.pauses == 1
    rejected = next(r for r in srv.chat_requests if r.status == 429)
    assert rejected.finished_at is not None
    quiet_from, quiet_to = rejected.finished_at + 0.05, rejected.finished_at + 0.4
    during = [r for r in srv.chat_requests if quiet_from < r.received_at < quiet_to]
    assert during == [], "nobody sends while the server asked everyone to wait"
    assert len(srv.chat_requests) == 21


async def test_any_fault_gives_a_result_or_one_typed_error_in_bounded_time() -> None:
    rng = random.Random(7)
    faults = [
        lambda: Reply(text="fine"),
        lambda: Reply.server_error(500),
        lambda: Reply.server_error(503),
        lambda: Reply.rate_limited(retry_after=0.05),
        lambda: Reply.hanging(),
        lambda: Reply.disconnect(after=0),
        lambda: Reply(raw_body="{broken"),
        lambda: Reply.truncated("cut"),
        lambda: Reply.bad_request("nope"),
    ]

    def handler(body: dict) -> Reply:
        return rng.choice(faults)()

    retry = RetryPolicy(max_attempts=3, max_retry_seconds=1.0, base_delay=0.01, max_delay=0.05)
    limiter = Limiter(max_in_flight=10)
    async with FakeOpenAIServer(handler) as srv:
        async with make_client(srv, timeout=SUCCESS_S, retry=retry, limiter=limiter) as llm:
            calls = asyncio.gather(*(llm.complete(ask()) for _ in range(50)), return_exceptions=True)
            # Bounded: ~max_retry_seconds + one timeout per call, 10 at a time (a few seconds); a
            # hanging reply that escaped the timeout would fail this instead of hanging the suite.
            outcomes = await asyncio.wait_for(calls, timeout=120)
    assert all(isinstance(o, Completion | LLMError) for o in outcomes), outcomes
    assert any(isinstance(o, Completion) for o in outcomes) and any(isinstance(o, LLMError) for o in outcomes)
    assert all(o.attempts <= 3 for o in outcomes if isinstance(o, LLMError | Completion))
    assert limiter.stats.in_flight == 0 and limiter.stats.max_in_flight <= 10


async def test_cancelled_call_frees_its_slot() -> None:
    limiter = Limiter(max_in_flight=1)
    async with (
        FakeOpenAIServer(lambda body: Reply.hanging()) as srv,
        make_client(srv, limiter=limiter) as llm,
    ):
        task = asyncio.create_task(llm.complete(ask()))
        await asyncio.sleep(0.1)
        assert limiter.stats.in_flight == 1
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert limiter.stats.in_flight == 0
        async with asyncio.timeout(HANG):
            async with limiter.slot():
                pass
