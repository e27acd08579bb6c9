"""epigraph's memory tools in pydantic-ai (``pip install 'epigraph[pydantic-ai]'``): an ``Agent`` given
``memory_toolset(kg, group)`` (remember, search, ask, correct); the facts it stores keep their validity
windows.

The agent is told what Alice said over a year and asked where she lives and works, now and in
June 2023. Offline (the default) its model is pydantic-ai's ``FunctionModel`` playing the calls of
``agent_script.py``, and the graph runs on the quickstart's recorded answers. Live (EPIGRAPH_LLM=local,
or EPIGRAPH_LLM_BASE_URL / _API_KEY / _MODEL) the graph's own endpoint is the agent's model too
(``OpenAIChatModel``), and the model chooses its calls. Run: ``python examples/pydantic_ai_tools.py``.
"""

from __future__ import annotations

import asyncio
import sys

from agent_script import INSTRUCTIONS, PROMPT, answer, next_call
from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models import Model
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider
from quickstart import choose_embedder, choose_llm, close

from epigraph import KnowledgeGraph
from epigraph.config import Settings
from epigraph.integrations.pydantic_ai import memory_toolset
from epigraph.testing import ScriptedLLM

GROUP = "alice-agent"


def scripted_model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """The agent's model, offline: the next scripted call after the tools' answers so far."""
    replies = [
        str(part.content)
        for message in messages
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, ToolReturnPart)
    ]
    call = next_call(replies)
    if call is None:
        return ModelResponse(parts=[TextPart(answer(replies))])
    return ModelResponse(parts=[ToolCallPart(*call)])


def agent_model(kg: KnowledgeGraph, live: bool) -> Model:
    """The graph's own endpoint live, else the scripted model."""
    if not live:
        return FunctionModel(scripted_model)
    key = kg.settings.llm_api_key.get_secret_value() if kg.settings.llm_api_key else "none"
    provider = OpenAIProvider(base_url=kg.settings.llm_base_url, api_key=key)
    return OpenAIChatModel(str(kg.settings.llm_model), provider=provider)


async def main() -> int:
    settings = Settings.from_env(db_path=":memory:")
    llm, note = choose_llm(settings)
    print(f"epigraph + pydantic-ai: {note}")
    live = not isinstance(llm, ScriptedLLM)
    async with KnowledgeGraph(settings, llm=llm, embedder=choose_embedder(settings), group_id=GROUP) as kg:
        agent = Agent(
            agent_model(kg, live),
            instructions=INSTRUCTIONS,
            toolsets=[memory_toolset(kg, GROUP, speaker="Alice")],
        )
        result = await agent.run(PROMPT)
        calls = [p.tool_name for m in result.all_messages() for p in m.parts if isinstance(p, ToolCallPart)]
        print(f"\nThe agent called: {', '.join(calls)}")
        print(f"\nIts answer:\n{result.output}")
    await close(llm)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
