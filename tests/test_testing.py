"""The shipped test doubles: ScriptedLLM and HashEmbedder."""

from __future__ import annotations

import asyncio
import time

import numpy as np
import pytest

from epigraph.embed import Embedder
from epigraph.errors import LLMTimeout, UsageError
from epigraph.prompts import LLM, ChatRequest, StreamChunk, Usage
from epigraph.testing import HashEmbedder, ScriptedLLM, ScriptedReply, ScriptError
from epigraph.tokens import count_message_tokens, count_text_tokens


def req(name: str = "p", text: str = "hello", **variables: object) -> ChatRequest:
    return ChatRequest(messages=[{"role": "user", "content": text}], prompt_name=name, variables=variables)


async def collect(llm: ScriptedLLM, request: ChatRequest) -> list[StreamChunk]:
    return [chunk async for chunk in llm.stream(request)]


# ------------------------------------------------------------------------------------- ScriptedLLM


async def test_implements_the_llm_protocol() -> None:
    assert isinstance(ScriptedLLM({}), LLM)


async def test_table_of_replies_lists_callables_and_fallback() -> None:
    llm = ScriptedLLM(
        {
            "fixed": "always",
            "seq": ["one", ScriptedReply("two")],
            "fn": lambda r: f"hi {r.variables['who']}",
            "*": "fallback",
        }
    )
    assert (await llm.complete(req("fixed"))).text == "always"
    assert (await llm.complete(req("fixed"))).text == "always"
    assert [(await llm.complete(req("seq"))).text for _ in range(2)] == ["one", "two"]
    assert (await llm.complete(req("fn", who="Ann"))).text == "hi Ann"
    assert (await llm.complete(req("other"))).text == "fallback"
    assert [c.prompt_name for c in llm.calls_for("seq")] == ["seq", "seq"]


async def test_async_function_script() -> None:
    async def answer(request: ChatRequest) -> ScriptedReply:
        await asyncio.sleep(0)
        return ScriptedReply(request.prompt_name.upper())

    assert (await ScriptedLLM(answer).complete(req("abc"))).text == "ABC"


async def test_unknown_prompt_names_the_prompt() -> None:
    llm = ScriptedLLM({"known": "x"})
    with pytest.raises(ScriptError, match=r"'mystery'.*known"):
        await llm.complete(req("mystery"))
    with pytest.raises(ScriptError, match="mystery"):
        await collect(llm, req("mystery"))
    assert issubclass(ScriptError, UsageError)


async def test_exhausted_reply_list_is_an_error() -> None:
    llm = ScriptedLLM({"p": ["only"]})
    await llm.complete(req())
    with pytest.raises(ScriptError, match="2 times"):
        await llm.complete(req())


async def test_bad_script_return_type() -> None:
    with pytest.raises(ScriptError, match="int"):
        await ScriptedLLM(lambda r: 42).complete(req())  # type: ignore[arg-type, return-value]


async def test_records_calls_with_bpe_token_counts() -> None:
    llm = ScriptedLLM({"p": "The answer is forty-two."})
    request = req(text="What is the answer to everything?")
    completion = await llm.complete(request)
    [call] = llm.calls
    assert call.request is request and call.completion is completion and call.prompt_name == "p"
    assert call.finished >= call.started and not call.streamed and call.error is None
    assert completion.usage == Usage(
        count_message_tokens(request.messages), count_text_tokens(completion.text)
    )
    assert llm.usage == completion.usage


async def test_explicit_usage_overrides_counting() -> None:
    llm = ScriptedLLM({"p": ScriptedReply("x", usage=Usage(100, 7))})
    assert (await llm.complete(req())).usage == Usage(100, 7)


async def test_truncation_and_errors_in_complete() -> None:
    llm = ScriptedLLM(
        {
            "cut": ScriptedReply("partial", finish_reason="length"),
            "fail": ScriptedReply(error=LLMTimeout("too slow")),
        }
    )
    assert (await llm.complete(req("cut"))).truncated
    with pytest.raises(LLMTimeout):
        await llm.complete(req("fail"))
    assert isinstance(llm.calls[-1].error, LLMTimeout) and llm.calls[-1].completion is None
    assert llm.in_flight == 0


async def test_stream_chunks_then_one_done_chunk() -> None:
    llm = ScriptedLLM({"p": ScriptedReply("abcdefghij", chunk_size=4, finish_reason="length")})
    chunks = await collect(llm, req())
    assert [c.text for c in chunks] == ["abcd", "efgh", "ij", ""]
    assert [c.done for c in chunks] == [False, False, False, True]
    last = chunks[-1]
    assert last.finish_reason == "length" and last.usage == llm.calls[0].completion.usage  # type: ignore[union-attr]
    assert llm.calls[0].streamed


async def test_stream_error_is_the_final_chunk_after_partial_text() -> None:
    boom = LLMTimeout("stalled")
    chunks = await collect(ScriptedLLM({"p": ScriptedReply("abcdef", chunk_size=3, error=boom)}), req())
    assert [c.text for c in chunks] == ["abc", "def", ""]
    assert chunks[-1].done and chunks[-1].error is boom and chunks[-1].usage is None


async def test_delays_apply_to_complete_and_stream() -> None:
    reply = ScriptedReply("x" * 40, delay_s=0.02, chunk_size=10, chunk_delay_s=0.01)
    llm = ScriptedLLM({"p": reply})
    start = time.perf_counter()
    await llm.complete(req())
    assert time.perf_counter() - start >= 0.055
    start = time.perf_counter()
    first_at = None
    async for _chunk in llm.stream(req()):
        if first_at is None:
            first_at = time.perf_counter() - start
    total = time.perf_counter() - start
    assert first_at is not None and 0.025 <= first_at < total and total >= 0.055


async def test_tracks_max_concurrent_calls() -> None:
    llm = ScriptedLLM({"p": ScriptedReply("x", delay_s=0.02)})
    await asyncio.gather(*(llm.complete(req()) for _ in range(5)))
    assert llm.max_concurrent == 5 and llm.in_flight == 0
    sequential = ScriptedLLM({"p": ScriptedReply("x", delay_s=0.001)})
    for _ in range(3):
        await sequential.complete(req())
    assert sequential.max_concurrent == 1


# ------------------------------------------------------------------------------------ HashEmbedder


async def test_hash_embedder_shape_norm_and_determinism() -> None:
    a, b = HashEmbedder(), HashEmbedder()
    assert isinstance(a, Embedder)
    texts = ["Alice lives in Paris", "Bob works at Acme", "x"]
    va, vb = await a.embed(texts), await b.embed(texts)
    assert va.shape == (3, 384) and va.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(va, axis=1), 1.0, rtol=1e-5)
    np.testing.assert_array_equal(va, vb)


async def test_hash_embedder_similarity_sanity() -> None:
    e = HashEmbedder(dim=256)
    v = await e.embed(
        [
            "Alice moved to Paris last year",
            "alice moved to paris in 2023",
            "The quarterly stock report was bad",
            "Alice relocated to Paris",
        ]
    )
    assert v[0] @ v[1] > 0.6
    assert v[0] @ v[1] > v[0] @ v[3] > v[0] @ v[2]
    assert abs(float(v[0] @ v[2])) < 0.3


async def test_hash_embedder_empty_inputs_and_request_count() -> None:
    e = HashEmbedder(dim=8)
    empty = await e.embed([])
    assert empty.shape == (0, 8) and empty.dtype == np.float32 and e.requests == 0
    v = await e.embed(["", "word"])
    assert e.requests == 1 and not v[0].any() and np.isclose(np.linalg.norm(v[1]), 1.0)
    with pytest.raises(UsageError):
        await e.embed("not a list")
