"""OpenAIChat.stream over real SSE: order, the single final chunk, errors as the last message."""

from __future__ import annotations

import asyncio
import time
from contextlib import aclosing

from hypothesis import given, settings
from hypothesis import strategies as st

from epigraph.errors import LLMError, LLMTimeout, LLMUnavailable, RateLimited
from epigraph.llm import EndpointProfile, Limiter, OpenAIChat, RetryPolicy
from epigraph.llm.profiles import ThinkStripper, strip_think
from epigraph.prompts.protocol import ChatRequest, StreamChunk
from epigraph.testing.server import FakeOpenAIServer, Reply, script
from epigraph.tokens import count_text_tokens
from tests.support.llm_client import HANG, SUCCESS_S, ask, make_client


async def collect(llm: OpenAIChat, request: ChatRequest | None = None) -> list[StreamChunk]:
    return [chunk async for chunk in llm.stream(request or ask())]


def check_shape(chunks: list[StreamChunk]) -> StreamChunk:
    """Exactly one done chunk, and it is the last one; returns it."""
    assert chunks, "a stream always ends with a done chunk"
    assert [c.done for c in chunks].count(True) == 1
    assert chunks[-1].done
    assert all(c.error is None for c in chunks[:-1])
    return chunks[-1]


async def test_chunks_arrive_in_order_and_end_with_usage() -> None:
    reply = Reply(text="one two three four", prompt_tokens=9, completion_tokens=4)
    async with FakeOpenAIServer(lambda body: reply) as srv, make_client(srv) as llm:
        chunks = await collect(llm)
        assert llm.stats.in_flight == 0
    last = check_shape(chunks)
    assert [c.text for c in chunks[:-1]] == ["one ", "two ", "three ", "four"]
    assert last.text == "" and last.error is None and last.finish_reason == "stop"
    assert last.usage is not None and (last.usage.input_tokens, last.usage.output_tokens) == (9, 4)
    assert not last.usage.estimated and last.attempts == 1 and last.latency_s > 0
    body = srv.chat_requests[0].body
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}


async def test_missing_stream_usage_is_counted_locally() -> None:
    text = "counted on this side of the wire"
    async with FakeOpenAIServer(lambda body: Reply(text=text, usage=False)) as srv, make_client(srv) as llm:
        last = check_shape(await collect(llm))
    assert last.usage is not None and last.usage.estimated
    assert last.usage.output_tokens == count_text_tokens(text) > 0 and last.usage.input_tokens > 0


async def test_profile_without_stream_usage_sends_no_stream_options() -> None:
    async with FakeOpenAIServer(lambda body: "hi there") as srv:
        async with make_client(srv, profile=EndpointProfile(stream_usage=False)) as llm:
            last = check_shape(await collect(llm))
    assert "stream_options" not in srv.chat_requests[0].body
    assert last.usage is not None and last.usage.estimated


async def test_stream_options_400_falls_back_and_is_remembered() -> None:
    def handler(body: dict) -> Reply:
        if "stream_options" in body:
            return Reply.bad_request("Unrecognized request argument: stream_options", "stream_options")
        return Reply(text="fine")

    async with FakeOpenAIServer(handler) as srv, make_client(srv) as llm:
        first = check_shape(await collect(llm))
        second = check_shape(await collect(llm))
        assert not llm.profile.stream_usage
    assert first.error is None and (first.attempts, second.attempts) == (2, 1)
    assert ["stream_options" in r.body for r in srv.chat_requests] == [True, False, False]


async def test_disconnect_mid_stream_is_the_final_error_chunk() -> None:
    reply = Reply.disconnect("alpha beta gamma delta", after=2)
    async with FakeOpenAIServer(lambda body: reply) as srv, make_client(srv) as llm:
        chunks = await collect(llm)
        assert llm.stats.in_flight == 0
    last = check_shape(chunks)
    assert "".join(c.text for c in chunks[:-1]) == "alpha beta "
    assert isinstance(last.error, LLMUnavailable) and last.usage is None
    assert last.attempts == 1 and "1 attempt" in str(last.error) and "mid-stream" in str(last.error)
    assert len(srv.chat_requests) == 1, "no retry once text was delivered"


async def test_failure_before_the_first_chunk_is_retried() -> None:
    handler = script(Reply.disconnect("lost", after=0), Reply.server_error(502), Reply(text="second wind"))
    async with FakeOpenAIServer(handler) as srv, make_client(srv) as llm:
        chunks = await collect(llm)
    last = check_shape(chunks)
    assert last.error is None and "".join(c.text for c in chunks) == "second wind"
    assert last.attempts == 3 and len(srv.chat_requests) == 3


async def test_429_before_streaming_waits_and_succeeds() -> None:
    handler = script(Reply.rate_limited(retry_after=None, retry_after_ms=200), Reply(text="ok then"))
    async with FakeOpenAIServer(handler) as srv, make_client(srv) as llm:
        last = check_shape(await collect(llm))
    first, second = srv.chat_requests
    assert first.finished_at is not None and second.received_at - first.finished_at >= 0.2
    assert last.error is None and last.attempts == 2


async def test_persistent_429_is_a_final_rate_limited_chunk() -> None:
    retry = RetryPolicy(max_attempts=2, base_delay=0.01)
    async with FakeOpenAIServer(lambda body: Reply.rate_limited(retry_after=0.05)) as srv:
        async with make_client(srv, retry=retry) as llm:
            chunks = await collect(llm)
    (last,) = chunks
    assert last.done and isinstance(last.error, RateLimited) and last.attempts == 2


async def test_slow_chunk_past_the_timeout_ends_with_timeout() -> None:
    reply = Reply(text="first second third")
    slow = Reply(chunks=["late ", "later"], chunk_delay_s=HANG)
    # the timeout is the time the reply that streams fine gets for each chunk (a loaded machine too)
    async with FakeOpenAIServer(script(slow, reply)) as srv, make_client(srv, timeout=SUCCESS_S) as llm:
        async with asyncio.timeout(HANG):
            chunks = await collect(llm)
    last = check_shape(chunks)
    # The first chunk itself came late, so the first attempt timed out before anything was yielded,
    # was retried, and the second reply streamed fine.
    assert last.error is None and "".join(c.text for c in chunks) == "first second third"
    assert last.attempts == 2 and len(srv.chat_requests) == 2


async def test_stall_between_chunks_after_text_is_a_timeout_chunk() -> None:
    reply = Reply(chunks=["quick ", "stalled"], chunk_delays=[0.0, HANG])
    async with FakeOpenAIServer(lambda body: reply) as srv, make_client(srv, timeout=SUCCESS_S) as llm:
        async with asyncio.timeout(HANG):
            chunks = await collect(llm)
        assert llm.stats.in_flight == 0
    last = check_shape(chunks)
    assert [c.text for c in chunks[:-1]] == ["quick "]
    assert isinstance(last.error, LLMTimeout) and "mid-stream" in str(last.error)
    assert len(srv.chat_requests) == 1  # text was streamed: not retried


async def test_hang_before_any_chunk_is_one_timeout_error() -> None:
    retry = RetryPolicy(max_attempts=2, base_delay=0.01, max_delay=0.02)
    async with FakeOpenAIServer(lambda body: Reply.hanging()) as srv:
        async with make_client(srv, timeout=0.25, retry=retry) as llm:
            started = time.monotonic()
            async with asyncio.timeout(HANG):  # the hanging replies never end by themselves
                chunks = await collect(llm)
            elapsed = time.monotonic() - started
    (last,) = chunks
    assert last.done and isinstance(last.error, LLMTimeout) and last.attempts == 2
    assert elapsed >= 0.5 and len(srv.chat_requests) == 2  # two timeouts of 0.25 s


async def test_truncated_stream_reports_length() -> None:
    async with (
        FakeOpenAIServer(lambda body: Reply.truncated('[{"a": 1}, {"b"')) as srv,
        make_client(srv) as llm,
    ):
        chunks = await collect(llm)
    last = check_shape(chunks)
    assert last.finish_reason == "length" and last.error is None
    assert "".join(c.text for c in chunks) == '[{"a": 1}, {"b"'


async def test_think_blocks_are_stripped_across_chunk_boundaries() -> None:
    pieces = ["<thi", "nk>I should ", "answer briefly</th", "ink>", "\n\n", "Hel", "lo <", "b>!"]
    async with FakeOpenAIServer(lambda body: Reply(text="".join(pieces), chunks=pieces)) as srv:
        async with make_client(srv) as llm:
            chunks = await collect(llm)
    last = check_shape(chunks)
    assert "".join(c.text for c in chunks) == "Hello <b>!"
    assert all(c.text for c in chunks[:-1]), "no empty text chunks"
    assert last.usage is not None and last.usage.output_tokens > 0


async def test_unterminated_think_streams_nothing() -> None:
    pieces = ["<think>", "still thinking when ", "the tokens ran out"]
    reply = Reply(text="".join(pieces), chunks=pieces, finish_reason="length")
    async with FakeOpenAIServer(lambda body: reply) as srv, make_client(srv) as llm:
        chunks = await collect(llm)
    (last,) = chunks
    assert last.done and last.finish_reason == "length" and last.text == ""


async def test_consumer_that_stops_early_frees_the_slot() -> None:
    limiter = Limiter(max_in_flight=1)
    reply = Reply(text="a b c d e f g h", chunk_delay_s=0.01)
    async with FakeOpenAIServer(lambda body: reply) as srv, make_client(srv, limiter=limiter) as llm:
        async with aclosing(llm.stream(ask())) as stream:
            async for chunk in stream:
                assert chunk.text == "a "
                break
        assert limiter.stats.in_flight == 0
        # The one slot is free again: a second call goes through at once.
        result = await asyncio.wait_for(llm.complete(ask()), HANG)
    assert result.text == "a b c d e f g h"


async def test_errors_never_escape_the_iterator() -> None:
    llm = OpenAIChat(
        model="m",
        base_url="http://127.0.0.1:9/v1",
        api_key="k",
        timeout=0.5,
        retry=RetryPolicy(max_attempts=2, base_delay=0.01),
    )
    async with llm:
        (last,) = await collect(llm)
    assert isinstance(last.error, LLMError) and last.done and last.attempts == 2


@settings(max_examples=200, deadline=None)
@given(
    text=st.sampled_from(
        [
            '<think>plan</think>\n{"a": 1}',
            "pre <think>x</think> mid <think>y</think>post",
            "<think>never closed",
            "a < b and c <th d",
            "</think> stray close",
            "<<think>>x</think>>",
        ]
    ),
    cuts=st.lists(st.integers(min_value=0, max_value=60), max_size=8),
)
def test_think_stripper_is_split_invariant(text: str, cuts: list[int]) -> None:
    points = sorted({c for c in cuts if c < len(text)})
    pieces = [text[a:b] for a, b in zip([0, *points], [*points, len(text)], strict=True)]
    stripper = ThinkStripper()
    streamed = "".join(stripper.feed(p) for p in pieces) + stripper.finish()
    assert streamed == strip_think(text)
    assert "<think>" not in streamed
