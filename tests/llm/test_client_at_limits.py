"""The real client against a provider's limits: the limiter set by the provider's ``x-ratelimit-*``
headers (``Limiter.observe``), and the fake server enforcing them as OpenAI does (``testing.terms``)."""

from __future__ import annotations

import asyncio

import pytest

from epigraph.llm import Limiter, RetryPolicy
from epigraph.llm.limiter import TokenBucket
from epigraph.llm.rate_headers import Window, parse_duration, parse_rate_headers
from epigraph.testing.server import FakeOpenAIServer, RateLimits, Reply, Terms
from epigraph.tokens import count_message_tokens
from tests.support.llm_client import ask, make_client

MODEL = "gpt-sim"
PATIENT = RetryPolicy(max_attempts=20, max_retry_seconds=60.0, base_delay=0.01, max_delay=0.05)
"""Retries enough for a storm to pass (a bound for this test's worst case, not a measure of speed)."""


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_durations_and_windows_read_from_headers() -> None:
    assert [parse_duration(t) for t in ("12ms", "1s", "6m0s", "4m12.172s", "1h2m3.5s", "20", "soon")] == [
        0.012, 1.0, 360.0, 252.172, 3723.5, 20.0, None,
    ]  # fmt: skip
    reported = parse_rate_headers(
        {
            "X-RateLimit-Limit-Tokens": "200000",
            "x-ratelimit-remaining-tokens": "150000",
            "x-ratelimit-reset-tokens": "15s",
            "x-ratelimit-limit-requests": "-1",  # "not enforced here"
            "x-ratelimit-remaining-requests": "-1",
        }
    )
    assert reported is not None and reported.requests is None
    assert reported.tokens == Window(200_000, 150_000, 15.0)
    assert parse_rate_headers({"content-type": "application/json"}) is None


async def test_an_answer_sets_the_bucket_to_the_providers_count() -> None:
    clock = Clock()
    bucket = TokenBucket(6000, window_s=60.0, clock=clock)  # 100 a second
    await bucket.reserve(1000)  # the request the provider answers about, at t=100
    clock.now += 1.0
    await bucket.reserve(500)  # one reserved after it: the provider charged it after
    clock.now += 1.0
    bucket.observe(Window(6000, remaining=4000), reserved_at=100.0)
    # 4000 left when it charged the first, +200 refilled in 2 s, -500 charged since.
    assert bucket.level == pytest.approx(3700.0)
    bucket.settle(reserved=1000, actual=120)
    assert bucket.level == pytest.approx(3700.0), "a provider that counts keeps the unused cap"
    bucket.settle(reserved=100, actual=300)
    assert bucket.level == pytest.approx(3500.0), "usage above the reservation is still taken"


async def test_without_headers_the_unused_cap_is_given_back() -> None:
    clock = Clock()
    bucket = TokenBucket(6000, window_s=60.0, clock=clock)
    reserved = await bucket.reserve(1000)
    bucket.settle(reserved, actual=120)
    assert bucket.level == pytest.approx(6000 - 120)


async def test_limits_not_configured_are_learned_from_the_headers() -> None:
    terms = {MODEL: Terms(limits=RateLimits(rpm=50, tpm=9000, model=MODEL))}
    limiter = Limiter(max_in_flight=4)
    async with FakeOpenAIServer(terms=terms) as srv, make_client(srv, model=MODEL, limiter=limiter) as llm:
        await llm.complete(ask(max_tokens=100))
    assert limiter.requests is not None and limiter.requests.capacity == 50
    assert limiter.tokens is not None and limiter.tokens.capacity == 9000
    assert limiter.tokens.provider_counts and limiter.tokens.level < 9000, "the provider's count"
    assert limiter.stats.observed == 1


async def test_many_callers_at_the_tokens_limit_get_no_429() -> None:
    # 600 tokens a second; each call is charged ~305 (20 characters / 4 + its 300-token cap) and uses
    # ~10: a client giving back unused caps would run ahead of the provider and be refused.
    limits = RateLimits(tpm=600, window_s=1.0, model=MODEL)
    terms = {MODEL: Terms(limits=limits)}
    limiter = Limiter(max_in_flight=40, tpm=600, window_s=1.0)
    reply = Reply(text="ok", prompt_tokens=8, completion_tokens=2)
    async with (
        FakeOpenAIServer(lambda body: reply, terms=terms) as srv,
        make_client(srv, model=MODEL, limiter=limiter) as llm,
    ):
        done = await asyncio.gather(
            *(llm.complete(ask("1 2 3 4 5 6 7 8 9 10", max_tokens=300)) for _ in range(12))
        )
    assert len(done) == 12
    assert limits.refused == {"requests": 0, "tokens": 0}
    assert limiter.stats.rate_limited == 0 and limiter.stats.observed == 12
    charged = sum(a.tokens for a in limits.admissions)
    first, last = limits.admissions[0].at, limits.admissions[-1].at
    assert charged <= 600 + (last - first) * 600, "never more than the allowance plus its refill"


async def test_a_provider_that_does_not_report_is_paced_by_its_429s() -> None:
    """Without headers the client gives back the unused caps it cannot know the provider kept: it runs
    ahead, is refused, waits as told and retries; every call still succeeds."""
    limits = RateLimits(tpm=600, window_s=1.0, model=MODEL, report=False)
    terms = {MODEL: Terms(limits=limits)}
    limiter = Limiter(max_in_flight=40, tpm=600, window_s=1.0)
    reply = Reply(text="ok", prompt_tokens=8, completion_tokens=2)
    async with (
        FakeOpenAIServer(lambda body: reply, terms=terms) as srv,
        make_client(srv, model=MODEL, limiter=limiter, retry=PATIENT) as llm,
    ):
        done = await asyncio.gather(
            *(llm.complete(ask("1 2 3 4 5 6 7 8 9 10", max_tokens=300)) for _ in range(12))
        )
    assert len(done) == 12
    assert limiter.stats.observed == 0
    assert limiter.stats.rate_limited == limits.refused["tokens"]
    assert limiter.stats.retries >= limiter.stats.rate_limited


async def test_a_request_reserves_its_characters_over_four_when_they_are_more_than_its_bpe_count() -> None:
    stopped = 100.0  # a clock that does not move: what is reserved stays visible while the call runs
    limiter = Limiter(max_in_flight=1, tpm=1000, clock=lambda: stopped)
    seen: list[float] = []

    def reply(body: dict[str, object]) -> Reply:
        assert limiter.tokens is not None
        seen.append(limiter.tokens.level)
        return Reply(text="ok", prompt_tokens=1, completion_tokens=1)

    request = ask("hello " * 100, max_tokens=10)  # 609 characters, about 112 BPE tokens
    async with FakeOpenAIServer(reply) as srv, make_client(srv, limiter=limiter) as llm:
        await llm.complete(request)
    characters = sum(len(m["content"]) for m in request.messages)
    assert count_message_tokens(request.messages) < characters / 4
    assert seen == [1000 - (-(-characters // 4) + 10)]
