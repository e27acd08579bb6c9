"""The framework adapters on the real local model (``epigraph[local-model]``): one graph whose model is
Qwen2.5-Coder-1.5B under llama.cpp, used in turn through LangChain's chat history and retriever, a
LangGraph graph's store, an OpenAI Agents SDK run and a pydantic-ai run, one episode each (a few
minutes on 2 cores). The agents' own models are scripted (the fake OpenAI server, ``FunctionModel``):
what is live is everything epigraph does with the tools' calls. Skipped without the extra, except in CI.
"""

from __future__ import annotations

import json
from typing import Any, TypedDict

import pytest
from agents import Agent, OpenAIChatCompletionsModel, RunConfig, Runner
from langchain_core.messages import HumanMessage
from langgraph.graph import END, START, StateGraph
from langgraph.store.base import BaseStore
from openai import AsyncOpenAI
from pydantic_ai import Agent as PydanticAgent
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from epigraph import KnowledgeGraph
from epigraph.config import Settings
from epigraph.graph.model import EpisodeStatus
from epigraph.integrations.langchain import EpigraphChatMessageHistory, EpigraphRetriever
from epigraph.integrations.langgraph import EpigraphStore
from epigraph.integrations.openai_agents import memory_tools
from epigraph.integrations.pydantic_ai import memory_toolset
from epigraph.testing import HashEmbedder
from epigraph.testing.server import FakeOpenAIServer, Reply, ToolCall
from tests.support.local_model import require_local_model

pytestmark = pytest.mark.live

SAID = "I just started a new job as a designer at Acme in Paris."
NOTE = {"speaker": "Bob", "text": "I teach math at the Sorbonne."}
TOLD = "Carol founded Globex in Berlin in 2019."


class Turn(TypedDict):
    note: dict[str, str]


async def remember(state: Turn, *, store: BaseStore) -> dict[str, Any]:
    await store.aput(("memories", "bob"), "job", state["note"])
    return {}


async def test_the_four_adapters_on_the_real_local_model() -> None:
    require_local_model()
    settings = Settings.from_env(llm_local=True, db_path=":memory:", llm_max_tokens=1024)
    async with KnowledgeGraph(settings, embedder=HashEmbedder(), group_id="live") as kg:
        # LangChain: a message in, read back; the retriever's documents cite it
        history = EpigraphChatMessageHistory(kg, "alice", human_name="Alice")
        await history.aadd_messages([HumanMessage(SAID)])
        (message,) = await history.aget_messages()
        assert message.content == SAID
        docs = await EpigraphRetriever(kg=kg, group_id="alice").ainvoke("Alice job Acme Paris")
        assert docs, "the model stated no fact about Alice's new job"
        assert all(message.additional_kwargs["episode_uuid"] in d.metadata["episodes"] for d in docs)

        # LangGraph: a node writes a memory; the store's search finds it
        builder = StateGraph(Turn)
        builder.add_node("remember", remember)
        builder.add_edge(START, "remember")
        builder.add_edge("remember", END)
        store = EpigraphStore(kg)
        await builder.compile(store=store).ainvoke({"note": NOTE})
        hits = await store.asearch(("memories", "bob"), query="Sorbonne math")
        assert [(h.key, h.value) for h in hits] == [("job", NOTE)]

        # OpenAI Agents SDK: the agent's remember call is ingested by the real model
        call = Reply.calling(ToolCall("remember", json.dumps({"text": TOLD})))
        async with FakeOpenAIServer(lambda body: call if len(body["messages"]) < 3 else "done") as server:
            client = AsyncOpenAI(base_url=server.base_url, api_key="local", max_retries=0)
            agent = Agent(
                name="memory",
                model=OpenAIChatCompletionsModel(model="scripted", openai_client=client),
                tools=memory_tools(kg, "carol"),
            )
            await Runner.run(agent, "remember", run_config=RunConfig(tracing_disabled=True))
            await client.close()
        remembered = [
            str(m["content"]) for m in server.chat_requests[-1].body["messages"] if m["role"] == "tool"
        ]
        assert remembered[0].startswith("remembered (episode ")

        # pydantic-ai: the agent searches Alice's group, whose facts the retriever found above
        def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            returned = [
                str(p.content)
                for m in messages
                if isinstance(m, ModelRequest)
                for p in m.parts
                if isinstance(p, ToolReturnPart)
            ]
            if not returned:
                return ModelResponse(
                    parts=[ToolCallPart("search", {"query": "Alice job Acme Paris", "as_of": None})]
                )
            return ModelResponse(parts=[TextPart(returned[0])])

        found = (
            await PydanticAgent(FunctionModel(model), toolsets=[memory_toolset(kg, "alice")]).run("?")
        ).output
        # The same search as the retriever's: the same facts. Their order may move: other groups were
        # written since, and full-text ranks read the whole store's word statistics.
        lines = sorted(found.splitlines(), key=lambda line: line.rsplit("; id ", 1)[-1])
        docs = sorted(docs, key=lambda d: f"{d.id})")
        assert [line.split(" (valid ")[0] for line in lines] == [f"- {d.page_content}" for d in docs]
        assert all(line.endswith(f"; id {d.id})") for line, d in zip(lines, docs, strict=True))

        statuses = {
            e.status for g in ("alice", "memories.bob", "carol") for e in await kg.group(g).episodes()
        }
        assert statuses == {EpisodeStatus.DONE}
