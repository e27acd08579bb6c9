"""The memory tools in real pydantic-ai runs: an ``Agent`` with the toolset, driven by pydantic-ai's own
``FunctionModel`` (scripted tool calls that read the tools' replies) and ``TestModel`` (calls every tool
it is told to with arguments it makes up). The graph's own model is the scripted world of
``tests/support/integrations_world.py``."""

from __future__ import annotations

import re

from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.test import TestModel
from pydantic_ai.toolsets import FunctionToolset

from epigraph import KnowledgeGraph
from epigraph.graph.model import utc_now
from epigraph.integrations.pydantic_ai import memory_toolset
from tests.support.integrations_world import BERLIN, PARIS, SAID


def replies(messages: list[ModelMessage]) -> list[str]:
    """What the tools answered so far; a call to make again (pydantic-ai 2: a return whose outcome is
    ``retried``) as ``retry: <why>``."""
    out = []
    for message in messages:
        for part in message.parts if isinstance(message, ModelRequest) else ():
            if isinstance(part, ToolReturnPart):
                out.append(("retry: " if part.outcome == "retried" else "") + str(part.content))
    return out


async def test_a_scripted_model_remembers_searches_the_past_and_is_told_to_retry(kg: KnowledgeGraph) -> None:
    await kg.group("alice").add_episode(f"Alice: {SAID['paris']}", reference_time=utc_now())

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        done = replies(messages)
        if not done:
            assert [t.name for t in info.function_tools] == ["remember", "search", "ask", "correct"]
            return ModelResponse(parts=[ToolCallPart("remember", {"text": SAID["berlin"]})])
        if len(done) == 1:
            return ModelResponse(
                parts=[ToolCallPart("search", {"query": "Alice lives", "as_of": "2021-01-01"})]
            )
        if len(done) == 2:
            return ModelResponse(parts=[ToolCallPart("search", {"query": "Alice", "as_of": "last year"})])
        return ModelResponse(parts=[TextPart(" || ".join(done))])

    toolset = memory_toolset(kg, "alice", speaker="Alice")
    assert isinstance(toolset, FunctionToolset)
    result = await Agent(FunctionModel(model), toolsets=[toolset]).run("I moved to Berlin.")

    remembered, past, retried = result.output.split(" || ")
    assert f"facts:\n- {BERLIN} (valid 2022-01-10 → now; id " in remembered
    assert f"no longer true:\n- {PARIS} (valid 2020-03-01 → 2022-01-10; id " in remembered
    assert re.fullmatch(rf"- {re.escape(PARIS)} \(valid 2020-03-01 → 2022-01-10; id [\w-]+\)", past)
    assert retried.startswith("retry: ") and "last year" in retried
    latest = (await kg.group("alice").episodes(limit=1))[0]
    assert latest.content == f"Alice: {SAID['berlin']}"


async def test_pydantic_ais_test_model_calls_the_tools(kg: KnowledgeGraph) -> None:
    agent = Agent(TestModel(call_tools=["remember", "ask"]), toolsets=[memory_toolset(kg, "notes")])
    result = await agent.run("remember this")
    episodes = await kg.group("notes").episodes()
    assert len(episodes) == 1 and episodes[0].kind == "text"
    assert "remember" in result.output and "ask" in result.output  # TestModel's summary of the calls
