"""ask over real HTTP: the real OpenAIChat client against the local OpenAI-compatible test server.
The answer streams as the server writes it, and a consumer that stops (or is cancelled) closes the
model's HTTP stream: the server sees the connection closed before it sent everything."""

from __future__ import annotations

import asyncio
import json
from contextlib import aclosing
from typing import Any

from epigraph import AskChunk, KnowledgeGraph
from epigraph.ask import NOTHING, check_dialog
from epigraph.graph.embedded import EmbeddedStore
from epigraph.llm import OpenAIChat
from epigraph.testing import HashEmbedder
from epigraph.testing.server import FakeOpenAIServer, RecordedRequest, Reply

PIECES = [f"word{i} " for i in range(30)] + ["[F1]."]


def handler(delay: float) -> Any:
    """Plan: one fact search, then answer. Answer: PIECES, ``delay`` seconds apart."""

    def answer(body: dict[str, Any]) -> Reply:
        system, user = body["messages"][0]["content"], body["messages"][-1]["content"]
        if system.startswith("You plan lookups"):
            if "(nothing yet)" in user:
                return Reply(json.dumps({"thought": "Search.", "action": "search_facts", "query": "Alice"}))
            return Reply(json.dumps({"thought": "Enough.", "action": "answer"}))
        return Reply(chunks=PIECES, chunk_delay_s=delay)

    return answer


def answer_request(srv: FakeOpenAIServer) -> RecordedRequest:
    (request,) = [r for r in srv.chat_requests if r.body.get("stream")]
    return request


async def settled(request: RecordedRequest) -> None:
    """Until the server has finished with the request (bounded: the test fails, never hangs)."""
    for _ in range(400):
        if request.finished_at is not None:
            return
        await asyncio.sleep(0.025)
    raise AssertionError("the server never finished the streamed request")


def client(srv: FakeOpenAIServer) -> OpenAIChat:
    return OpenAIChat(model="fake-model", base_url=srv.base_url, api_key="k", timeout=20.0)


async def test_the_first_answer_chunk_arrives_while_the_server_is_still_writing(
    store: EmbeddedStore, embedder: HashEmbedder
) -> None:
    arrivals: list[tuple[str, int, bool]] = []
    chunks: list[AskChunk] = []
    async with FakeOpenAIServer(handler(0.05)) as srv, client(srv) as llm:
        async with KnowledgeGraph(store=store, llm=llm, embedder=embedder, group_id="g") as kg:
            async for chunk in kg.ask("Where does Alice live?", mode="agent"):
                chunks.append(chunk)
                if chunk.chunk_type == "answer" and chunk.content:
                    request = answer_request(srv)
                    arrivals.append((chunk.content, request.chunks_sent, request.finished_at is None))
    check_dialog(chunks)
    _, sent, still_open = arrivals[0]
    assert still_open and sent < len(PIECES), "the first piece was read while the rest was still coming"
    assert len(arrivals) > 5 and [s for _, s, _ in arrivals] == sorted(s for _, s, _ in arrivals)
    assert "".join(c.content for c in chunks if c.chunk_type == "answer") == "".join(PIECES)
    assert chunks[-1].citations and chunks[-1].usage is not None and chunks[-1].usage.calls == 3


async def test_a_consumer_that_stops_mid_answer_closes_the_http_stream(
    store: EmbeddedStore, embedder: HashEmbedder
) -> None:
    async with FakeOpenAIServer(handler(0.05)) as srv, client(srv) as llm:
        async with KnowledgeGraph(store=store, llm=llm, embedder=embedder, group_id="g") as kg:
            async with aclosing(kg.ask("Where does Alice live?", mode="agent")) as chunks:
                async for chunk in chunks:
                    if chunk.chunk_type == "answer" and chunk.content:
                        break
            request = answer_request(srv)
            await settled(request)
            assert llm.limiter.stats.in_flight == 0
    assert request.client_closed and request.chunks_sent < len(PIECES)


async def test_cancelling_the_consuming_task_closes_the_http_stream(
    store: EmbeddedStore, embedder: HashEmbedder
) -> None:
    first = asyncio.Event()

    async def consume(kg: KnowledgeGraph) -> None:
        async for chunk in kg.ask("Where does Alice live?", mode="agent"):
            if chunk.chunk_type == "answer" and chunk.content:
                first.set()

    async with FakeOpenAIServer(handler(0.05)) as srv, client(srv) as llm:
        async with KnowledgeGraph(store=store, llm=llm, embedder=embedder, group_id="g") as kg:
            task = asyncio.create_task(consume(kg))
            await asyncio.wait_for(first.wait(), 20)
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            request = answer_request(srv)
            await settled(request)
    assert task.cancelled() and request.client_closed and request.chunks_sent < len(PIECES)


async def test_auto_closes_a_declined_answer_stream_at_its_none_mark(
    store: EmbeddedStore, embedder: HashEmbedder
) -> None:
    """``auto``: the context's answer begins with [none] (declines); its HTTP stream is closed there (the
    model stops writing), none of it is shown, and the agent looks further."""
    declined = [" ", "[no", "ne]", " "] + [f"filler{i} " for i in range(30)]

    def answer(body: dict[str, Any]) -> Reply:
        system = body["messages"][0]["content"]
        if system.startswith("You plan lookups"):
            return Reply(json.dumps({"thought": "Nothing more to look up.", "action": "answer"}))
        return Reply(chunks=declined, chunk_delay_s=0.05)

    async with FakeOpenAIServer(answer) as srv, client(srv) as llm:
        async with KnowledgeGraph(store=store, llm=llm, embedder=embedder, group_id="g") as kg:
            chunks = [c async for c in kg.ask("What is Alice's favourite food?")]
            request = answer_request(srv)
            await settled(request)
    check_dialog(chunks)
    assert request.client_closed and request.chunks_sent < len(declined)
    text = "".join(c.content for c in chunks if c.chunk_type == "answer")
    assert text == NOTHING and "filler" not in text
    assert chunks[-1].usage is not None and chunks[-1].usage.calls == 2, "the declined answer and one plan"
