"""A provider's terms on the fake server (``epigraph.testing.terms``): rate limits as OpenAI enforces and
reports them, the latency model, 5xx rates, embeddings of one's own, extra routes. Through the raw SDK."""

from __future__ import annotations

import time

import httpx
import openai
import pytest

from epigraph.testing.http import approx_tokens
from epigraph.testing.server import FakeOpenAIServer, Latency, RateLimits, Reply, Terms, pieces_of
from epigraph.testing.terms import Accounting, charged_tokens, duration_text

MODEL = "gpt-sim"


def sdk(srv: FakeOpenAIServer) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=srv.base_url, api_key="sk-raw", max_retries=0, timeout=5.0)


def chat(text: str = "hello", **fields: object) -> dict[str, object]:
    return {"model": MODEL, "messages": [{"role": "user", "content": text}], **fields}


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_reset_durations_are_written_as_openai_writes_them() -> None:
    assert [duration_text(s) for s in (0.012, 0.0, 1.0, 360.0, 252.172, 3723.5)] == [
        "12ms", "0ms", "1s", "6m0s", "4m12.172s", "1h2m3.5s",
    ]  # fmt: skip


def test_a_request_is_charged_its_characters_over_four_plus_its_output_cap() -> None:
    body = chat("x" * 401, max_tokens=100)
    assert charged_tokens(body) == 101 + 100
    assert charged_tokens(body, Accounting.MAX) == 101
    assert charged_tokens({"input": ["abcd", "abcdefgh"]}) == 3
    assert charged_tokens(chat("abcd", max_completion_tokens=7)) == 8


def test_buckets_refill_continuously_and_refusals_say_when() -> None:
    clock = Clock()
    limits = RateLimits(rpm=60, tpm=1000, model=MODEL, clock=clock)
    first = limits.admit(chat("a" * 40, max_tokens=890))  # 10 + 890 tokens
    assert first.admitted
    assert first.headers["x-ratelimit-remaining-tokens"] == "100"
    assert first.headers["x-ratelimit-remaining-requests"] == "59"
    assert first.headers["x-ratelimit-reset-requests"] == "1s"  # one request at 1 a second
    assert first.headers["x-ratelimit-reset-tokens"] == "54s"  # 900 tokens at 1000 a minute
    refused = limits.admit(chat("a" * 40, max_tokens=190))  # 200 tokens, 100 left
    assert not refused.admitted and refused.limit == "tokens"
    assert refused.retry_after_s == pytest.approx(6.0)  # 100 more tokens at 1000/60 a second
    assert "on tokens per min (TPM): Limit 1000, Used 900, Requested 200" in refused.message
    assert refused.headers["x-ratelimit-remaining-requests"] == "58", "a refusal still costs a request"
    clock.now += 6.0
    assert limits.admit(chat("a" * 40, max_tokens=190)).admitted
    assert [round(a.tokens) for a in limits.admissions] == [900, 200]
    assert limits.refused == {"requests": 0, "tokens": 1}


def test_requests_per_minute_refuse_the_request_past_the_allowance() -> None:
    clock = Clock()
    limits = RateLimits(rpm=2, model=MODEL, clock=clock)
    assert limits.admit(chat()).admitted and limits.admit(chat()).admitted
    refused = limits.admit(chat())
    assert not refused.admitted and refused.limit == "requests"
    assert "requests per min (RPM): Limit 2, Used 2, Requested 1" in refused.message
    assert refused.retry_after_s > 0


async def test_limits_enforced_over_http_with_headers_on_every_answer() -> None:
    terms = {MODEL: Terms(limits=RateLimits(rpm=3, tpm=100_000, model=MODEL))}
    async with FakeOpenAIServer(terms=terms) as srv:
        client = sdk(srv)
        answers = [await client.chat.completions.with_raw_response.create(**chat()) for _ in range(3)]
        with pytest.raises(openai.RateLimitError) as caught:
            await client.chat.completions.create(**chat())
        other = await client.chat.completions.create(**{**chat(), "model": "unlimited"})
        await client.close()
    remaining = [a.headers["x-ratelimit-remaining-requests"] for a in answers]
    assert remaining == ["2", "1", "0"]
    assert all(a.headers["x-ratelimit-limit-tokens"] == "100000" for a in answers)
    assert all("x-ratelimit-reset-tokens" in a.headers for a in answers)
    headers = caught.value.response.headers
    assert int(headers["retry-after-ms"]) > 0 and int(headers["retry-after"]) >= 1
    assert headers["x-ratelimit-remaining-requests"] == "0"
    assert caught.value.code == "rate_limit_exceeded"
    assert other.choices[0].message.content == "hello", "a model without terms is served unlimited"


async def test_a_reply_takes_at_least_the_latency_models_floor() -> None:
    latency = Latency(first_token_s=0.15, output_tokens_per_s=200.0, jitter=0.5, floor=0.5)
    text = "one two three four five six seven eight nine ten " * 4  # 40 words, ~60 tokens
    async with FakeOpenAIServer(lambda body: text, terms={MODEL: Terms(latency=latency, seed=3)}) as srv:
        client = sdk(srv)
        timings = []
        for _ in range(4):
            started = time.monotonic()
            await client.chat.completions.create(**chat())
            timings.append(time.monotonic() - started)
        started = time.monotonic()
        stream = await client.chat.completions.create(**chat(), stream=True)
        arrivals = [time.monotonic() - started async for chunk in stream if chunk.choices]
        await client.close()
    tokens = [approx_tokens(p) for p in pieces_of(Reply(text=text))]
    nominal = latency.nominal_s(0, sum(tokens))
    assert min(timings) >= latency.floor * nominal
    spaced = latency.floor * sum(tokens[1:]) / latency.output_tokens_per_s
    assert arrivals[-1] - arrivals[1] >= spaced, "streamed tokens arrive at the output rate"


async def test_slow_replies_and_server_errors_at_their_rates() -> None:
    slow = Latency(first_token_s=0.01, slow_rate=1.0, slow_factor=30.0)
    terms = {MODEL: Terms(latency=slow), "broken": Terms(error_rate=1.0, limits=RateLimits(rpm=10))}
    async with FakeOpenAIServer(terms=terms) as srv:
        client = sdk(srv)
        started = time.monotonic()
        await client.chat.completions.create(**chat())
        took = time.monotonic() - started
        with pytest.raises(openai.InternalServerError) as caught:
            await client.chat.completions.create(**{**chat(), "model": "broken"})
        await client.close()
    assert took >= 0.3, "30 times the 10 ms first token"
    assert caught.value.response.headers["x-ratelimit-remaining-requests"] == "9", "a 500 was charged"


async def test_embeddings_from_a_function_with_limits_and_latency() -> None:
    def vectors(texts: list[str], dim: int) -> list[list[float]]:
        return [[float(len(t)), 0.0, 1.0] for t in texts]

    terms = {"emb": Terms(limits=RateLimits(rpm=1), latency=Latency(first_token_s=0.1))}
    async with FakeOpenAIServer(embed_vectors=vectors, terms=terms) as srv:
        client = sdk(srv)
        started = time.monotonic()
        raw = await client.embeddings.with_raw_response.create(model="emb", input=["ab", "abcd"])
        took = time.monotonic() - started
        with pytest.raises(openai.RateLimitError):
            await client.embeddings.create(model="emb", input=["x"])
        await client.close()
    assert [d.embedding for d in raw.parse().data] == [[2.0, 0.0, 1.0], [4.0, 0.0, 1.0]]
    assert raw.headers["x-ratelimit-remaining-requests"] == "0"
    assert took >= 0.1


async def test_routes_of_ones_own_answer_json() -> None:
    calls = {"n": 0}

    def stats() -> dict[str, int]:
        calls["n"] += 1
        return {"calls": calls["n"]}

    async with FakeOpenAIServer(routes={"/sim/stats": stats}) as srv, httpx.AsyncClient() as http:
        answer = await http.get(f"http://{srv.host}:{srv.port}/sim/stats")
    assert answer.json() == {"calls": 1}


async def test_a_scripted_delay_overrides_the_latency_model() -> None:
    terms = {MODEL: Terms(latency=Latency(first_token_s=30.0))}
    async with FakeOpenAIServer(lambda body: Reply(text="now", delay_s=0.01), terms=terms) as srv:
        client = sdk(srv)
        reply = await client.chat.completions.create(**chat())
        await client.close()
    assert reply.choices[0].message.content == "now"
