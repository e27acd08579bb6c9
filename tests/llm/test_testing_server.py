"""The shipped fake server on its own, through the raw openai SDK (no epigraph client in between)."""

from __future__ import annotations

import asyncio
import math

import httpx
import openai
import pytest

from epigraph.testing.server import FakeOpenAIServer, Reply, ToolCall, script, unit_vector
from tests.support.llm_client import HANG


def sdk(srv: FakeOpenAIServer, key: str = "sk-raw") -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=srv.base_url, api_key=key, max_retries=0, timeout=2.0)


async def test_embeddings_are_deterministic_unit_vectors() -> None:
    async with FakeOpenAIServer(embed_dim=16) as srv:
        client = sdk(srv)
        first = await client.embeddings.create(model="emb", input=["alpha", "beta"])
        again = await client.embeddings.create(model="emb", input="alpha", encoding_format="float")
        sized = await client.embeddings.create(model="emb", input=["alpha"], dimensions=4)
        await client.close()
    a, b = (d.embedding for d in first.data)
    assert len(a) == 16 and math.isclose(sum(x * x for x in a), 1.0, rel_tol=1e-5)
    assert a != b and again.data[0].embedding == pytest.approx(a, abs=1e-6)
    assert a == pytest.approx(unit_vector("alpha", 16), abs=1e-6)
    assert len(sized.data[0].embedding) == 4
    assert first.usage.prompt_tokens > 0


async def test_embedding_faults_are_scriptable() -> None:
    async with FakeOpenAIServer(embed_handler=lambda body: Reply.rate_limited(retry_after=2)) as srv:
        client = sdk(srv)
        with pytest.raises(openai.RateLimitError) as caught:
            await client.embeddings.create(model="emb", input=["x"])
        await client.close()
    assert caught.value.response.headers["retry-after"] == "2"


async def test_models_listing_and_unknown_routes() -> None:
    async with FakeOpenAIServer(models=("big", "small")) as srv:
        client = sdk(srv)
        models = [m.id async for m in client.models.list()]
        await client.close()
        async with httpx.AsyncClient() as http:
            missing = await http.get(srv.base_url + "/nothing")
    assert models == ["big", "small"]
    assert missing.status_code == 404 and "error" in missing.json()


async def test_records_requests_without_the_authorization_header() -> None:
    async with FakeOpenAIServer(script("one", "two")) as srv:
        client = sdk(srv, key="sk-hidden-123456")
        texts = [
            (await client.chat.completions.create(model="m", messages=[{"role": "user", "content": q}]))
            .choices[0]
            .message.content
            for q in ("a", "b", "c")
        ]
        await client.close()
    assert texts == ["one", "two", "two"]
    assert len(srv.requests) == 3
    for record in srv.requests:
        assert "authorization" not in record.headers and "sk-hidden" not in str(record.headers)
        assert record.status == 200 and record.finished_at is not None
    assert srv.requests[0].body["messages"] == [{"role": "user", "content": "a"}]


async def test_wrong_key_gets_401_echoing_it_like_real_servers() -> None:
    async with FakeOpenAIServer(api_key="sk-right") as srv:
        client = sdk(srv, key="sk-wrong-key-here")
        with pytest.raises(openai.AuthenticationError, match="sk-wrong-key-here"):
            await client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
        await client.close()


async def test_stream_wire_format() -> None:
    async with FakeOpenAIServer(lambda body: Reply(text="a b", finish_reason="length")) as srv:
        async with httpx.AsyncClient() as http:
            body = {"model": "m", "messages": [], "stream": True, "stream_options": {"include_usage": True}}
            response = await http.post(srv.base_url + "/chat/completions", json=body)
    events = [line.removeprefix("data: ") for line in response.text.split("\n\n") if line]
    assert response.headers["content-type"] == "text/event-stream"
    assert events[-1] == "[DONE]"
    assert '"chat.completion.chunk"' in events[0] and '"finish_reason": "length"' in events[-3]
    assert '"usage": {' in events[-2] and '"choices": []' in events[-2]


async def test_shutdown_is_prompt_with_a_hanging_request_open() -> None:
    arrived = asyncio.Event()

    def hang(body: dict[str, object]) -> Reply:
        arrived.set()
        return Reply.hanging()

    srv = FakeOpenAIServer(hang)
    await srv.__aenter__()
    client = openai.AsyncOpenAI(base_url=srv.base_url, api_key="sk-raw", max_retries=0, timeout=3 * HANG)
    pending = asyncio.create_task(
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
    )
    async with asyncio.timeout(HANG):
        await arrived.wait()
        assert srv.in_flight == 1
        # the reply hangs and the client waits longer than the bound: a shutdown that waited for the
        # request would not end within it
        await srv.__aexit__(None, None, None)
    with pytest.raises(openai.APIConnectionError) as caught:
        await pending
    assert not isinstance(caught.value, openai.APITimeoutError)  # the server closed it
    await client.close()


async def test_tool_calls_as_a_whole_and_streamed() -> None:
    """A scripted reply that asks for tools reads, through the SDK, as the real API's tool calls."""
    call = ToolCall("search", '{"query": "Alice"}')
    replies = [Reply.calling(call, ToolCall("ask", "{}", id="c-7")), Reply.calling(call, text="Looking.")]
    async with FakeOpenAIServer(script(*replies, "done")) as srv:
        client = sdk(srv)
        whole = await client.chat.completions.create(model="m", messages=[{"role": "user", "content": "q"}])
        stream = await client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "q"}], stream=True
        )
        chunks = [chunk async for chunk in stream]
        await client.close()
    choice = whole.choices[0]
    assert choice.finish_reason == "tool_calls" and choice.message.content is None
    calls = choice.message.tool_calls or []
    assert [(c.function.name, c.function.arguments) for c in calls] == [
        ("search", '{"query": "Alice"}'),
        ("ask", "{}"),
    ]
    assert calls[0].id and calls[1].id == "c-7"
    deltas = [c.choices[0].delta for c in chunks if c.choices]
    assert "".join(d.content or "" for d in deltas) == "Looking."
    streamed = [t for d in deltas for t in d.tool_calls or []]
    assert [(t.index, t.function.name, t.function.arguments) for t in streamed] == [
        (0, "search", '{"query": "Alice"}')
    ]
    assert chunks[-1].choices[0].finish_reason == "tool_calls"
