"""run() and stream() against the ScriptedLLM."""

from __future__ import annotations

import asyncio
import json
import time

import pytest

from epigraph.errors import LLMUnavailable, StructuredOutputError, UsageError
from epigraph.prompts import ChatRequest, Prompt, PromptResult, Usage, run, stream
from epigraph.testing import ScriptedLLM, ScriptedReply
from epigraph.tokens import aload_encoding
from tests.support.prompt_defs import EXAMPLE, Decision, EntityLine, EntityOut, FactLine

GOOD = '{"reasoning": "same person", "duplicate": true}'


def ent(name: str) -> str:
    return json.dumps({"name": name, "kind": "person"})


def jsonl(*names: str) -> str:
    return "".join(ent(n) + "\n" for n in names)


# ------------------------------------------------------------------------------------------- run


async def test_request_carries_prompt_metadata(decide_prompt: Prompt) -> None:
    llm = ScriptedLLM({"test_decide": GOOD})
    await run(llm, decide_prompt, EXAMPLE)
    request = llm.calls[0].request
    assert request.prompt_name == "test_decide"
    assert request.variables == {"episode": "Alice: I moved to Paris.", "speakers": ["Alice"]}
    assert request.response_type == "json" and request.small and request.max_tokens == 300
    assert request.json_schema is not None and "duplicate" in request.json_schema["properties"]


async def test_text_prompt_returns_reply_as_is(summary_prompt: Prompt) -> None:
    reply = "  Alice moved to Paris.\n```not parsed```"
    result = await run(ScriptedLLM({"test_summary": reply}), summary_prompt, EXAMPLE)
    assert result.value == reply and result.items == [] and result.calls == 1
    assert result.usage.output_tokens > 0 and result.usage.input_tokens > 0


async def test_json_prompt_parses_and_validates(decide_prompt: Prompt) -> None:
    result = await run(
        ScriptedLLM({"test_decide": f"<think>hmm</think>```json\n{GOOD}\n```"}), decide_prompt, EXAMPLE
    )
    assert result.value == Decision(reasoning="same person", duplicate=True)
    assert (result.calls, result.truncated, result.dropped) == (1, False, [])


async def test_json_reask_once_then_succeeds(decide_prompt: Prompt) -> None:
    llm = ScriptedLLM({"test_decide": ['{"reasoning": "x"}', GOOD]})
    result = await run(llm, decide_prompt, EXAMPLE)
    assert result.value.duplicate is True and result.calls == 2 and result.attempts == 2
    reask = llm.calls[1].request.messages
    assert reask[-2] == {"role": "assistant", "content": '{"reasoning": "x"}'}
    assert reask[-1]["role"] == "user" and "duplicate" in reask[-1]["content"]
    assert result.usage == llm.calls[0].completion.usage + llm.calls[1].completion.usage


async def test_json_fails_after_one_reask_with_raw_and_usage(decide_prompt: Prompt) -> None:
    llm = ScriptedLLM({"test_decide": ["not json", "still not json"]})
    with pytest.raises(StructuredOutputError) as info:
        await run(llm, decide_prompt, EXAMPLE)
    err = info.value
    assert err.raw == "still not json" and err.attempts == 2 and len(llm.calls) == 2
    assert isinstance(err.usage, Usage) and err.usage == llm.usage
    assert "test_decide" in str(err)


async def test_truncated_json_is_a_failed_attempt_with_a_shorter_hint(decide_prompt: Prompt) -> None:
    llm = ScriptedLLM(
        {"test_decide": [ScriptedReply('{"reasoning": "very lo', finish_reason="length"), GOOD]}
    )
    result = await run(llm, decide_prompt, EXAMPLE)
    assert result.value.duplicate and result.calls == 2 and not result.truncated
    assert "shorter" in llm.calls[1].request.messages[-1]["content"]


async def test_truncated_json_twice_raises(decide_prompt: Prompt) -> None:
    cut = ScriptedReply(GOOD, finish_reason="length")  # even a parseable reply is not trusted when cut
    with pytest.raises(StructuredOutputError, match="cut off"):
        await run(ScriptedLLM({"test_decide": [cut, cut]}), decide_prompt, EXAMPLE)


async def test_jsonl_valid_and_invalid_lines(entities_prompt: Prompt) -> None:
    reply = f'```jsonl\n{ent("A")}\n\nnot json\n{{"name": "B"}}\n{ent("C")}\n```'
    result = await run(ScriptedLLM({"test_entities": reply}), entities_prompt, EXAMPLE)
    assert [i.name for i in result.items] == ["A", "C"]
    assert [d.line_no for d in result.dropped] == [4, 5]
    assert result.value is None and result.complete


async def test_jsonl_truncated_after_k_lines(entities_prompt: Prompt) -> None:
    reply = ScriptedReply(jsonl("A", "B", "C") + '{"name": "D", "ki', finish_reason="length")
    result = await run(ScriptedLLM({"test_entities": reply}), entities_prompt, EXAMPLE)
    assert len(result.items) == 3 and result.truncated and not result.complete
    assert result.dropped[-1].reason.startswith("truncated")


async def test_jsonl_empty_reply_is_not_an_error(entities_prompt: Prompt) -> None:
    result = await run(ScriptedLLM({"test_entities": ""}), entities_prompt, EXAMPLE)
    assert result.items == [] and result.dropped == []


async def test_jsonl_discriminated_union(mixed_prompt: Prompt) -> None:
    reply = "\n".join(
        [
            '{"type": "entity", "name": "Alice"}',
            '{"type": "fact", "source": "Alice", "target": "Paris", "relation": "LIVES_IN"}',
            '{"type": "opinion", "text": "nice"}',
        ]
    )
    llm = ScriptedLLM({"test_mixed": reply})
    result = await run(llm, mixed_prompt, EXAMPLE)
    assert [type(i) for i in result.items] == [EntityLine, FactLine] and len(result.dropped) == 1
    assert "oneOf" in (llm.calls[0].request.json_schema or {})


async def test_input_as_dict_and_bad_input(entities_prompt: Prompt) -> None:
    llm = ScriptedLLM({"test_entities": jsonl("A")})
    result = await run(llm, entities_prompt, {"episode": "x", "speakers": []})
    assert len(result.items) == 1
    with pytest.raises(UsageError):
        await run(llm, entities_prompt, {"speakers": 3})
    with pytest.raises(UsageError):
        await run(llm, entities_prompt, "just a string")


async def test_llm_errors_propagate_from_run(entities_prompt: Prompt) -> None:
    llm = ScriptedLLM({"test_entities": ScriptedReply(error=LLMUnavailable("server down"))})
    with pytest.raises(LLMUnavailable):
        await run(llm, entities_prompt, EXAMPLE)


# ---------------------------------------------------------------------------------------- stream


async def test_stream_hands_first_item_before_reply_is_complete(entities_prompt: Prompt) -> None:
    await aload_encoding()  # the one-off tokenizer load would otherwise count as generation time
    reply = ScriptedReply(jsonl(*[f"Entity{i}" for i in range(10)]), chunk_size=12, chunk_delay_s=0.01)
    llm = ScriptedLLM({"test_entities": reply})
    start = time.perf_counter()
    arrivals: list[float] = []
    s = stream(llm, entities_prompt, EXAMPLE)
    async for _item in s:
        arrivals.append(time.perf_counter() - start)
    total = time.perf_counter() - start
    assert len(arrivals) == 10
    assert arrivals[0] < total / 2
    assert arrivals == sorted(arrivals) and arrivals[-1] - arrivals[0] > total / 2
    result = s.result
    assert [i.name for i in result.items] == [f"Entity{i}" for i in range(10)]
    assert result.usage.output_tokens > 0 and result.calls == 1 and result.complete


async def test_stream_final_line_without_newline(entities_prompt: Prompt) -> None:
    llm = ScriptedLLM({"test_entities": ScriptedReply(jsonl("A") + ent("B"), chunk_size=5)})
    names = [i.name async for i in stream(llm, entities_prompt, EXAMPLE)]
    assert names == ["A", "B"]


async def test_stream_truncated_drops_incomplete_final_line(entities_prompt: Prompt) -> None:
    reply = ScriptedReply(jsonl("A", "B") + '{"name": "C", "k', finish_reason="length", chunk_size=7)
    s = stream(ScriptedLLM({"test_entities": reply}), entities_prompt, EXAMPLE)
    names = [i.name async for i in s]
    assert names == ["A", "B"] and s.result.truncated
    assert [d.reason for d in s.result.dropped] == ["truncated: incomplete final line"]


async def test_stream_error_keeps_items_and_records_error(entities_prompt: Prompt) -> None:
    boom = LLMUnavailable("connection reset")
    reply = ScriptedReply(jsonl("A", "B") + '{"name": "C"', error=boom, chunk_size=9)
    s = stream(ScriptedLLM({"test_entities": reply}), entities_prompt, EXAMPLE)
    names = [i.name async for i in s]  # no exception mid-iteration
    result = s.result
    assert names == ["A", "B"] and result.error is boom and not result.complete
    assert result.dropped[0].reason == "stream error: incomplete final line"
    with pytest.raises(LLMUnavailable):
        result.raise_for_error()


async def test_stream_of_json_and_text_yields_once(decide_prompt: Prompt, summary_prompt: Prompt) -> None:
    llm = ScriptedLLM({"test_decide": ["bad", GOOD], "test_summary": "Alice moved."})
    s = stream(llm, decide_prompt, EXAMPLE)
    values = [v async for v in s]
    assert values == [Decision(reasoning="same person", duplicate=True)] and s.result.calls == 2
    t = stream(llm, summary_prompt, EXAMPLE)
    assert [v async for v in t] == ["Alice moved."] and t.result.value == "Alice moved."
    assert not any(c.streamed for c in llm.calls)


async def test_stream_result_before_iteration_and_single_use(entities_prompt: Prompt) -> None:
    s = stream(ScriptedLLM({"test_entities": jsonl("A")}), entities_prompt, EXAMPLE)
    with pytest.raises(UsageError):
        _ = s.result
    assert [i.name async for i in s] == ["A"] and s.done
    with pytest.raises(UsageError):
        s.__aiter__()


async def test_stream_template_errors_surface_at_once(entities_prompt: Prompt) -> None:
    with pytest.raises(UsageError):
        stream(ScriptedLLM({}), entities_prompt, 42)


async def test_consumer_starts_work_while_model_writes(entities_prompt: Prompt) -> None:
    """Downstream work overlaps generation: per-item tasks finish before the stream ends."""
    reply = ScriptedReply(jsonl("A", "B", "C", "D"), chunk_size=10, chunk_delay_s=0.01)
    s = stream(ScriptedLLM({"test_entities": reply}), entities_prompt, EXAMPLE)
    finished: list[str] = []

    async def resolve(item: EntityOut) -> None:
        await asyncio.sleep(0)
        finished.append(item.name)

    async with asyncio.TaskGroup() as tg:
        async for item in s:
            tg.create_task(resolve(item))
            if item.name == "C":
                await asyncio.sleep(0.001)
                assert finished[:2] == ["A", "B"]  # earlier items already resolved mid-stream
    assert finished == ["A", "B", "C", "D"]


def test_prompt_result_is_frozen() -> None:
    r: PromptResult[EntityOut] = PromptResult(prompt_name="x")
    with pytest.raises(AttributeError):
        r.calls = 3  # type: ignore[misc]


async def test_scripted_callable_answers_by_input(entities_prompt: Prompt) -> None:
    def answer(request: ChatRequest) -> str:
        return jsonl(*request.variables["speakers"])

    result = await run(ScriptedLLM(answer), entities_prompt, EXAMPLE)
    assert [i.name for i in result.items] == ["Alice"]
