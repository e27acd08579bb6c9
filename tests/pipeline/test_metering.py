"""Per-episode accounting wraps the client without changing what it returns."""

from __future__ import annotations

import pytest

from epigraph.errors import LLMUnavailable
from epigraph.pipeline.metering import MeteredEmbedder, MeteredLLM, ReportBuilder
from epigraph.prompts.protocol import ChatRequest
from epigraph.testing import HashEmbedder, ScriptedLLM, ScriptedReply


def _request(name: str) -> ChatRequest:
    return ChatRequest(messages=[{"role": "user", "content": "hello there"}], prompt_name=name)


async def test_every_call_is_recorded_and_the_report_sums_them() -> None:
    inner = ScriptedLLM(
        {"a": "one reply", "b": "line 1\nline 2\nline 3", "c": ScriptedReply(error=LLMUnavailable("down"))}
    )
    llm, embedder = MeteredLLM(inner), MeteredEmbedder(HashEmbedder(dim=8))
    await llm.complete(_request("a"))
    chunks = [c async for c in llm.stream(_request("b"))]
    assert chunks[-1].done
    early = llm.stream(_request("b"))
    await anext(early)
    await early.aclose()  # the consumer stopped early (a runaway): one recorded call, cost estimated
    with pytest.raises(LLMUnavailable):
        await llm.complete(_request("c"))
    await embedder.embed(["x", "y"])
    await embedder.embed([])

    report = ReportBuilder(llm, embedder).build()
    assert report.llm_calls == len(inner.calls) == 4
    closed = llm.records[2]
    assert closed.input_tokens > 0 and closed.output_tokens > 0, "what the closed stream cost is counted"
    assert report.input_tokens == inner.usage.input_tokens + closed.input_tokens
    assert report.output_tokens == inner.usage.output_tokens + closed.output_tokens
    assert report.per_prompt["b"].calls == 2 and report.per_prompt["c"].input_tokens == 0
    assert (report.embedding_requests, report.embedded_texts) == (1, 2)
    assert report.round_trips == 4, "four calls one after the other"
