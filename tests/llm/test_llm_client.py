"""OpenAIChat.complete through the real openai SDK against the local server, over real HTTP."""

from __future__ import annotations

import asyncio
import time
from dataclasses import replace
from typing import Any

import httpx
import pytest
from pydantic import SecretStr

from epigraph.config import Settings
from epigraph.errors import ConfigError, LLMError, LLMRequestRejected, LLMTimeout, LLMUnavailable, RateLimited
from epigraph.llm import EndpointProfile, OpenAIChat, RetryPolicy
from epigraph.prompts.protocol import LLM, Completion
from epigraph.testing.server import FakeOpenAIServer, Reply, reject_response_format, script
from epigraph.tokens import count_message_tokens, count_text_tokens
from tests.support.llm_client import API_KEY, HANG, ask, make_client

SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


def _all_text(error: BaseException) -> str:
    """The error's message, repr and whole cause/context chain, as one string."""
    parts: list[str] = []
    seen: BaseException | None = error
    while seen is not None:
        parts += [str(seen), repr(seen)]
        seen = seen.__cause__ or seen.__context__
    return " ".join(parts)


async def test_plain_completion_with_server_usage() -> None:
    reply = Reply(text="Hi there.", prompt_tokens=11, completion_tokens=3)
    async with FakeOpenAIServer(lambda body: reply, api_key=API_KEY) as srv, make_client(srv) as llm:
        assert isinstance(llm, LLM)
        result = await llm.complete(ask("hello"))
    assert result.text == "Hi there."
    assert (result.usage.input_tokens, result.usage.output_tokens, result.usage.estimated) == (11, 3, False)
    assert result.finish_reason == "stop" and not result.truncated
    assert result.model == "fake-model" and result.attempts == 1 and result.latency_s > 0
    (sent,) = srv.chat_requests
    assert sent.body["model"] == "fake-model"
    assert sent.body["messages"][-1] == {"role": "user", "content": "hello"}
    assert sent.body["temperature"] == 0.0 and sent.body["max_tokens"] == 4096
    assert "response_format" not in sent.body and "stream" not in sent.body
    assert "authorization" not in sent.headers


async def test_small_model_and_request_max_tokens() -> None:
    async with FakeOpenAIServer() as srv, make_client(srv, small_model="tiny") as llm:
        await llm.complete(ask(small=True, max_tokens=50))
        await llm.complete(ask())
    first, second = (r.body for r in srv.chat_requests)
    assert (first["model"], first["max_tokens"]) == ("tiny", 50)
    assert second["model"] == "fake-model"


async def test_missing_usage_is_counted_locally() -> None:
    text = "The quick brown fox jumps over the lazy dog."
    async with FakeOpenAIServer(lambda body: Reply(text=text, usage=False)) as srv, make_client(srv) as llm:
        result = await llm.complete(ask("count me"))
    assert result.usage.estimated
    assert result.usage.output_tokens == count_text_tokens(text) > 0
    assert result.usage.input_tokens == count_message_tokens(ask("count me").messages) > 0


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ('<think>Let me think about "x".</think>\n\n{"name": "x"}', '{"name": "x"}'),
        ("  <think>a</think>answer <think>b</think>end", "  answer end"),
        ("<think>ran out of tokens while thinking", ""),
        ("no think here", "no think here"),
    ],
)
async def test_think_blocks_are_stripped(raw: str, expected: str) -> None:
    async with FakeOpenAIServer(lambda body: raw) as srv, make_client(srv) as llm:
        assert (await llm.complete(ask())).text == expected


async def test_think_kept_when_profile_says_so() -> None:
    raw = "<think>x</think>y"
    async with FakeOpenAIServer(lambda body: raw) as srv:
        async with make_client(srv, profile=EndpointProfile(strip_think=False)) as llm:
            assert (await llm.complete(ask())).text == raw


@pytest.mark.parametrize(
    ("mode", "response_type", "schema", "expected"),
    [
        ("json_schema", "json", SCHEMA, "json_schema"),
        ("json_schema", "json", None, "json_object"),
        ("json_object", "json", SCHEMA, "json_object"),
        ("none", "json", SCHEMA, None),
        ("json_schema", "jsonl", SCHEMA, None),
        ("json_schema", "text", None, None),
    ],
)
async def test_response_format_follows_profile(
    mode: Any, response_type: Any, schema: Any, expected: str | None
) -> None:
    async with FakeOpenAIServer(lambda body: '{"name": "x"}') as srv:
        async with make_client(srv, profile=EndpointProfile(structured=mode)) as llm:
            await llm.complete(
                ask(response_type=response_type, json_schema=schema, prompt_name="extract nodes")
            )
    sent = srv.chat_requests[0].body.get("response_format")
    assert (sent or {}).get("type") == expected
    if expected == "json_schema":
        assert sent["json_schema"] == {"name": "extract_nodes", "schema": SCHEMA, "strict": False}


async def test_response_format_400_falls_back_and_is_remembered() -> None:
    handler = reject_response_format(lambda body: '{"name": "x"}', types=("json_schema",))
    async with FakeOpenAIServer(handler) as srv, make_client(srv) as llm:
        first = await llm.complete(ask(response_type="json", json_schema=SCHEMA))
        second = await llm.complete(ask(response_type="json", json_schema=SCHEMA))
        assert llm.profile.structured == "json_object"
        assert llm.stats.fallbacks == 1
    assert first.text == second.text == '{"name": "x"}'
    assert (first.attempts, second.attempts) == (2, 1)
    types = [r.body["response_format"]["type"] for r in srv.chat_requests]
    assert types == ["json_schema", "json_object", "json_object"]


async def test_response_format_fallback_steps_down_to_none() -> None:
    handler = reject_response_format(lambda body: "{}", types=("json_schema", "json_object"))
    async with FakeOpenAIServer(handler) as srv, make_client(srv) as llm:
        result = await llm.complete(ask(response_type="json", json_schema=SCHEMA))
        assert llm.profile.structured == "none"
    assert result.attempts == 3
    assert [r.body.get("response_format", {}).get("type") for r in srv.chat_requests] == [
        "json_schema",
        "json_object",
        None,
    ]


async def test_unrelated_400_is_rejected_without_fallback() -> None:
    reply = Reply.bad_request("This model's maximum context length is 8192 tokens.", "messages")
    async with FakeOpenAIServer(lambda body: reply) as srv, make_client(srv) as llm:
        with pytest.raises(LLMRequestRejected, match="1 attempt") as caught:
            await llm.complete(ask(response_type="json", json_schema=SCHEMA))
        assert llm.profile.structured == "json_schema"
    assert "maximum context length" in str(caught.value)
    assert len(srv.chat_requests) == 1


async def test_401_is_rejected_and_never_shows_the_key() -> None:
    wrong_key = "sk-wrong-KEY-must-not-leak-42"
    async with (
        FakeOpenAIServer(api_key=API_KEY) as srv,
        make_client(srv, api_key=SecretStr(wrong_key)) as llm,
    ):
        with pytest.raises(LLMRequestRejected) as caught:
            await llm.complete(ask())
        assert wrong_key not in repr(llm)
    text = _all_text(caught.value)
    assert wrong_key not in text and "must-not-leak" not in text
    assert "HTTP 401" in text and "1 attempt" in text and "API key" in text
    assert caught.value.attempts == 1 and len(srv.requests) == 1


async def test_500_then_success() -> None:
    handler = script(Reply.server_error(500), Reply(text="recovered"))
    async with FakeOpenAIServer(handler) as srv, make_client(srv) as llm:
        result = await llm.complete(ask())
        assert llm.stats.retries == 1 and llm.stats.unavailable == 1
    assert (result.text, result.attempts) == ("recovered", 2)


async def test_persistent_500_gives_unavailable_after_max_attempts() -> None:
    async with FakeOpenAIServer(lambda body: Reply.server_error(503)) as srv, make_client(srv) as llm:
        with pytest.raises(LLMUnavailable, match="after 4 attempts") as caught:
            await llm.complete(ask())
    assert caught.value.attempts == 4 and len(srv.requests) == 4
    assert "HTTP 503" in str(caught.value) and "max attempts 4" in str(caught.value)


async def test_hang_gives_timeout_within_the_bound() -> None:
    retry = RetryPolicy(max_attempts=2, max_retry_seconds=5.0, base_delay=0.01, max_delay=0.02)
    async with FakeOpenAIServer(lambda body: Reply.hanging()) as srv:
        async with make_client(srv, timeout=0.3, retry=retry) as llm:
            started = time.monotonic()
            with pytest.raises(LLMTimeout, match="after 2 attempts") as caught:
                async with asyncio.timeout(HANG):  # the hanging replies never end by themselves
                    await llm.complete(ask())
            elapsed = time.monotonic() - started
            assert llm.stats.in_flight == 0
    assert elapsed >= 0.6  # two timeouts of 0.3 s each
    assert caught.value.attempts == 2 and len(srv.chat_requests) == 2


async def test_retry_budget_bounds_total_time() -> None:
    retry = RetryPolicy(max_attempts=100, max_retry_seconds=0.5, base_delay=0.05, max_delay=0.1)
    async with (
        FakeOpenAIServer(lambda body: Reply.server_error(500)) as srv,
        make_client(srv, retry=retry) as llm,
    ):
        with pytest.raises(LLMUnavailable, match="retry budget") as caught:
            async with asyncio.timeout(HANG):
                await llm.complete(ask())
    # the 0.5 s budget ended it, long before 100 attempts (retries 0.05-0.1 s apart: about 8 fit)
    assert caught.value.attempts == len(srv.chat_requests) < 100


async def test_429_honours_retry_after_seconds() -> None:
    handler = script(Reply.rate_limited(retry_after=1), Reply(text="ok"))
    async with FakeOpenAIServer(handler) as srv, make_client(srv) as llm:
        async with asyncio.timeout(HANG):
            result = await llm.complete(ask())
        assert llm.stats.rate_limited == 1 and llm.stats.pauses == 1
    first, second = srv.chat_requests
    assert first.status == 429 and first.finished_at is not None
    waited = second.received_at - first.finished_at
    assert waited >= 1.0  # not the policy's own backoff (0.01-0.05 s)
    assert result.attempts == 2


async def test_429_honours_retry_after_ms() -> None:
    handler = script(Reply.rate_limited(retry_after=None, retry_after_ms=300), Reply(text="ok"))
    async with FakeOpenAIServer(handler) as srv, make_client(srv) as llm:
        async with asyncio.timeout(HANG):  # 300 read as seconds would fail here
            await llm.complete(ask())
    first, second = srv.chat_requests
    assert first.finished_at is not None
    assert second.received_at - first.finished_at >= 0.3  # not the policy's own backoff


async def test_429_past_the_budget_fails_at_once() -> None:
    retry = RetryPolicy(max_attempts=5, max_retry_seconds=2.0, base_delay=0.01)
    async with FakeOpenAIServer(lambda body: Reply.rate_limited(retry_after=30)) as srv:
        async with make_client(srv, retry=retry) as llm:
            with pytest.raises(RateLimited, match="30 s") as caught:
                async with asyncio.timeout(HANG):  # shorter than the 30 s the server asked for
                    await llm.complete(ask())
    assert caught.value.attempts == 1 and "1 attempt" in str(caught.value)
    assert len(srv.chat_requests) == 1


async def test_truncated_reply_reports_length() -> None:
    async with (
        FakeOpenAIServer(lambda body: Reply.truncated('{"name": "cut')) as srv,
        make_client(srv) as llm,
    ):
        result = await llm.complete(ask(response_type="json"))
    assert result.truncated and result.finish_reason == "length"
    assert result.text == '{"name": "cut'


async def test_invalid_json_text_is_returned_as_is() -> None:
    async with FakeOpenAIServer(lambda body: "{not json at all") as srv, make_client(srv) as llm:
        result = await llm.complete(ask(response_type="json", json_schema=SCHEMA))
    assert result.text == "{not json at all"


async def test_broken_server_body_is_a_typed_error() -> None:
    async with FakeOpenAIServer(lambda body: Reply(raw_body="<html>bad gateway</html>")) as srv:
        async with make_client(srv) as llm:
            with pytest.raises(LLMError):
                await llm.complete(ask())


async def test_connection_refused_is_unavailable() -> None:
    async with FakeOpenAIServer() as srv:
        base_url = srv.base_url
    llm = OpenAIChat(
        model="m",
        base_url=base_url,
        api_key="k",
        timeout=1.0,
        retry=RetryPolicy(max_attempts=2, base_delay=0.01),
    )
    async with llm:
        with pytest.raises(LLMUnavailable, match=r"connection failed.*after 2 attempts"):
            await llm.complete(ask())


async def test_from_settings_and_injected_http_client() -> None:
    async with FakeOpenAIServer(lambda body: "fine") as srv:
        settings = Settings(
            llm_base_url=srv.base_url,
            llm_api_key=SecretStr(API_KEY),
            llm_model="big",
            llm_small_model="small",
            llm_temperature=0.3,
            llm_max_tokens=77,
            llm_timeout=5,
            llm_structured="json_object",
            llm_max_in_flight=3,
            llm_rpm=100,
            llm_max_attempts=2,
        )
        http = httpx.AsyncClient(headers={"x-epigraph-test": "yes"})
        async with OpenAIChat.from_settings(settings, http_client=http) as llm:
            assert llm.limiter.max_in_flight == 3 and llm.limiter.rpm == 100
            assert llm.retry.max_attempts == 2 and llm.profile.structured == "json_object"
            result = await llm.complete(ask(response_type="json", small=True))
        assert not http.is_closed  # the caller owns it
        await http.aclose()
    assert result.text == "fine"
    sent = srv.chat_requests[0]
    assert sent.headers["x-epigraph-test"] == "yes"
    assert (sent.body["model"], sent.body["temperature"], sent.body["max_tokens"]) == ("small", 0.3, 77)
    assert sent.body["response_format"] == {"type": "json_object"}


async def test_a_request_may_set_its_own_temperature() -> None:
    async with FakeOpenAIServer(lambda body: "fine", api_key=API_KEY) as srv, make_client(srv) as llm:
        await llm.complete(replace(ask("hello"), temperature=0.7))
        await llm.complete(ask("hello"))
    assert [r.body["temperature"] for r in srv.chat_requests] == [0.7, 0.0], "None: the client's own"


def test_from_settings_needs_a_model() -> None:
    with pytest.raises(ConfigError, match="EPIGRAPH_LLM_MODEL"):
        OpenAIChat.from_settings(Settings())


async def test_injected_transport_without_a_server() -> None:
    """An httpx transport can stand in for the network entirely (no monkeypatching)."""
    seen: list[dict[str, Any]] = []

    def respond(request: httpx.Request) -> httpx.Response:
        import json

        seen.append(json.loads(request.content))
        return httpx.Response(
            200,
            json={
                "id": "x",
                "object": "chat.completion",
                "created": 0,
                "model": "m",
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": "from transport"},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7},
            },
        )

    async with httpx.AsyncClient(transport=httpx.MockTransport(respond)) as http:
        llm = OpenAIChat(model="m", base_url="http://llm.invalid/v1", api_key="k", http_client=http)
        result: Completion = await llm.complete(ask())
    assert result.text == "from transport" and result.usage.input_tokens == 5
    assert seen[0]["model"] == "m"
