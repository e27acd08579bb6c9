"""The memory tools in a real OpenAI Agents SDK run: ``Agent`` + ``Runner.run`` with the SDK's own
``OpenAIChatCompletionsModel`` over an ``AsyncOpenAI`` client, against the shipped fake OpenAI-compatible
server (real HTTP on 127.0.0.1) scripted to call the tools, then answer. Tracing is off: nothing leaves
the machine. The graph's own model is the scripted world of ``tests/support/integrations_world.py``."""

from __future__ import annotations

import json
import re
from typing import Any

from agents import Agent, FunctionTool, ModelSettings, OpenAIChatCompletionsModel, RunConfig, Runner
from openai import AsyncOpenAI

from epigraph import KnowledgeGraph
from epigraph.graph.model import utc_now
from epigraph.integrations.openai_agents import memory_tools
from epigraph.testing.server import FakeOpenAIServer, Reply, ToolCall
from tests.support.integrations_world import ACME, BERLIN, LISBON, SAID

NO_TRACING = RunConfig(tracing_disabled=True)


def tool_outputs(body: dict[str, Any]) -> list[str]:
    """The tool results the agent sent back to the model in this request."""
    return [str(m["content"]) for m in body["messages"] if m["role"] == "tool"]


def call(name: str, **arguments: Any) -> Reply:
    return Reply.calling(ToolCall(name, json.dumps(arguments)))


async def run(kg: KnowledgeGraph, handler: Any, prompt: str) -> tuple[str, FakeOpenAIServer]:
    async with FakeOpenAIServer(handler) as server:
        client = AsyncOpenAI(base_url=server.base_url, api_key="sk-local", max_retries=0)
        agent = Agent(
            name="assistant",
            instructions="Keep the user's memory up to date.",
            model=OpenAIChatCompletionsModel(model="fake-model", openai_client=client),
            model_settings=ModelSettings(parallel_tool_calls=False),
            tools=memory_tools(kg, "alice", speaker="Alice"),
        )
        result = await Runner.run(agent, prompt, run_config=NO_TRACING)
        await client.close()
    return str(result.final_output), server


async def test_the_tools_are_function_tools_with_their_descriptions(kg: KnowledgeGraph) -> None:
    tools = memory_tools(kg, "alice")
    assert all(isinstance(t, FunctionTool) for t in tools)
    assert [t.name for t in tools] == ["remember", "search", "ask", "correct"]
    search = tools[1].params_json_schema["properties"]
    assert search["as_of"]["description"].startswith("An ISO date or time")


async def test_an_agent_remembers_then_searches(kg: KnowledgeGraph) -> None:
    def model(body: dict[str, Any]) -> Reply:
        done = tool_outputs(body)
        if not done:
            return call("remember", text=SAID["acme"])
        if len(done) == 1:
            return call("search", query="Alice works")
        return Reply(text=f"Noted. {done[-1]}")

    final, server = await run(kg, model, "I work at Acme.")

    assert final.startswith(f"Noted. - {ACME} (valid 2021-05-01 → now; id ")
    remembered = tool_outputs(server.chat_requests[-1].body)[0]
    assert remembered.startswith("remembered (episode ") and ACME in remembered
    (episode,) = await kg.group("alice").episodes()
    assert episode.content == f"Alice: {SAID['acme']}"
    offered = {t["function"]["name"] for t in server.chat_requests[0].body["tools"]}
    assert offered == {"remember", "search", "ask", "correct"}


async def test_an_agent_asks_and_corrects_by_the_id_it_read(kg: KnowledgeGraph) -> None:
    for topic in ("paris", "berlin", "lisbon"):
        await kg.group("alice").add_episode(f"Alice: {SAID[topic]}", reference_time=utc_now())

    def model(body: dict[str, Any]) -> Reply:
        done = tool_outputs(body)
        if not done:
            return call("ask", question="Where does Alice live?")
        if len(done) == 1:
            (fact_id,) = re.findall(r"fact id ([\w-]+)\)", done[0])
            return call(
                "correct", fact_id=fact_id, reason="she moved back", new_text=None, ended_at="2025-06-01"
            )
        if len(done) == 2:
            return call("correct", fact_id="no-such-fact", reason="test", new_text="x", ended_at=None)
        return Reply(text=" || ".join(done))

    final, _ = await run(kg, model, "Alice left Lisbon in June 2025.")

    answer, corrected, refused = final.split(" || ")
    assert answer.startswith(f"{LISBON} [F1]\ncited:\n- [F1] {LISBON} (fact id ")
    assert (
        corrected.startswith("corrected (") and f"- {LISBON} (valid 2024-02-01 → 2025-06-01; id" in corrected
    )
    assert refused.startswith("error: ") and "no-such-fact" in refused
    found = await kg.search("Alice lives", group_ids="alice", as_of="2025-07-01")
    assert LISBON not in [r.fact.text for r in found.facts]
    then = await kg.search("Alice lives", group_ids="alice", as_of="2023-01-01")
    assert BERLIN in [r.fact.text for r in then.facts]
    (log,) = await kg.group("alice").corrections.history()
    assert log.author == "agent:assistant" and log.reason == "she moved back"
