"""epigraph's memory tools in the OpenAI Agents SDK (``pip install 'epigraph[openai-agents]'``): an
``Agent`` given ``memory_tools(kg, group)`` (remember, search, ask, correct) and run with
``Runner.run``; the facts it stores keep their validity windows.

The agent is told what Alice said over a year and asked where she lives and works, now and in
June 2023. Offline (the default) its model is the SDK's ``OpenAIChatCompletionsModel`` talking over real
HTTP to epigraph's local fake OpenAI server, scripted to call the tools (``agent_script.py``), and the
graph runs on the quickstart's recorded answers. Live (EPIGRAPH_LLM=local, or EPIGRAPH_LLM_BASE_URL /
_API_KEY / _MODEL) the same endpoint is both the graph's model and the agent's, and the model chooses
its calls. Tracing is off: nothing is sent anywhere else. Run: ``python examples/openai_agents_tools.py``.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from agent_script import INSTRUCTIONS, PROMPT, answer, next_call
from agents import Agent, ModelSettings, OpenAIChatCompletionsModel, RunConfig, Runner
from openai import AsyncOpenAI
from quickstart import choose_embedder, choose_llm, close

from epigraph import KnowledgeGraph
from epigraph.config import Settings
from epigraph.integrations.openai_agents import memory_tools
from epigraph.testing import ScriptedLLM
from epigraph.testing.server import FakeOpenAIServer, Reply, ToolCall

GROUP = "alice-agent"


def scripted_model(body: dict[str, Any]) -> Reply:
    """The agent's model, offline: the next scripted call after the tool results it was sent."""
    replies = [str(m["content"]) for m in body["messages"] if m["role"] == "tool"]
    call = next_call(replies)
    if call is None:
        return Reply(text=answer(replies))
    name, arguments = call
    return Reply.calling(ToolCall(name, json.dumps(arguments)))


@asynccontextmanager
async def agent_endpoint(kg: KnowledgeGraph, live: bool) -> AsyncIterator[tuple[AsyncOpenAI, str]]:
    """The agent's OpenAI-compatible client and model: the graph's own endpoint live, else the
    scripted local server."""
    if live:
        key = kg.settings.llm_api_key.get_secret_value() if kg.settings.llm_api_key else "none"
        client = AsyncOpenAI(base_url=kg.settings.llm_base_url, api_key=key)
        yield client, str(kg.settings.llm_model)
    else:
        async with FakeOpenAIServer(scripted_model) as server:
            client = AsyncOpenAI(base_url=server.base_url, api_key="offline")
            yield client, "scripted"
    await client.close()


async def main() -> int:
    settings = Settings.from_env(db_path=":memory:")
    llm, note = choose_llm(settings)
    print(f"epigraph + OpenAI Agents SDK: {note}")
    live = not isinstance(llm, ScriptedLLM)
    async with KnowledgeGraph(settings, llm=llm, embedder=choose_embedder(settings), group_id=GROUP) as kg:
        async with agent_endpoint(kg, live) as (client, model):
            agent = Agent(
                name="memory-keeper",
                instructions=INSTRUCTIONS,
                model=OpenAIChatCompletionsModel(model=model, openai_client=client),
                model_settings=ModelSettings(parallel_tool_calls=False),
                tools=memory_tools(kg, GROUP, speaker="Alice"),
            )
            result = await Runner.run(
                agent, PROMPT, run_config=RunConfig(tracing_disabled=True), max_turns=12
            )
        calls = [item.raw_item.name for item in result.new_items if item.type == "tool_call_item"]  # type: ignore[union-attr]
        print(f"\nThe agent called: {', '.join(calls)}")
        print(f"\nIts answer:\n{result.final_output}")
    await close(llm)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
