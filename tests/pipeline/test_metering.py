"""Per-episode accounting wraps the client without changing what it returns."""

from __future__ import annotations

import json

import pytest

from epigraph.errors import LLMUnavailable
from epigraph.pipeline.metering import MeteredEmbedder, MeteredLLM, ReportBuilder
from epigraph.prompts import extract_entities, summarize_entities
from epigraph.prompts.extraction import ExtractionInput
from epigraph.prompts.protocol import ChatRequest
from epigraph.prompts.runtime import run
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


async def test_a_reask_is_a_followup_and_a_few_shot_prompt_is_not() -> None:
    """The extraction prompts carry example replies as assistant messages: only the runtime's second
    request, which quotes the model's unusable reply, counts as a re-ask."""
    good = json.dumps({"summaries": [{"id": "e1", "summary": "Ann paints."}]})
    llm = MeteredLLM(
        ScriptedLLM({"extract_entities": "Ann; pottery class", "summarize_entities": ["{", good]})
    )
    await run(llm, extract_entities.PROMPT, ExtractionInput.of("Ann: I started a pottery class.", "Ann"))
    summaries = summarize_entities.SummarizeEntitiesInput(
        entities=[summarize_entities.EntityFacts(id="e1", name="Ann", facts=["Ann paints."])]
    )
    await run(llm, summarize_entities.PROMPT, summaries)
    assert [(r.prompt, r.followup) for r in llm.records] == [
        ("extract_entities", False),
        ("summarize_entities", False),
        ("summarize_entities", True),
    ]
