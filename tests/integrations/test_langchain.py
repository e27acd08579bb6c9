"""LangChain's own classes over the graph: the chat history under ``RunnableWithMessageHistory`` and the
retriever in a chain, offline (the scripted world of ``tests/support/integrations_world.py``)."""

from __future__ import annotations

from datetime import datetime

import pytest
from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import RunnableLambda
from langchain_core.runnables.history import RunnableWithMessageHistory

from epigraph import KnowledgeGraph
from epigraph.errors import InputError, UsageError
from epigraph.graph.model import utc_now
from epigraph.integrations.langchain import EpigraphChatMessageHistory, EpigraphRetriever
from tests.support.integrations_world import ACME, BERLIN, LISBON, PARIS, SAID


async def test_messages_become_episodes_and_read_back_in_order(kg: KnowledgeGraph) -> None:
    history = EpigraphChatMessageHistory(kg, "alice", human_name="Alice", source="chat-1")
    assert isinstance(history, BaseChatMessageHistory)
    await history.aadd_messages([HumanMessage(SAID["paris"]), AIMessage("Noted: Paris.")])
    await history.aadd_messages([HumanMessage(SAID["berlin"])])

    messages = await history.aget_messages()
    assert [(type(m), m.content) for m in messages] == [
        (HumanMessage, SAID["paris"]),
        (AIMessage, "Noted: Paris."),
        (HumanMessage, SAID["berlin"]),
    ]
    episodes = await kg.group("alice").episodes()
    assert {e.uuid for e in episodes} == {m.additional_kwargs["episode_uuid"] for m in messages}
    assert {e.source_description for e in episodes} == {"chat-1"}
    found = await kg.search("where does Alice live", group_ids="alice", include_retired=True)
    assert {r.fact.text: r.retired for r in found.facts} == {PARIS: True, BERLIN: False}


async def test_a_human_message_keeps_its_speaker(kg: KnowledgeGraph) -> None:
    history = EpigraphChatMessageHistory(kg, "team")
    await history.aadd_messages([HumanMessage(SAID["acme"], name="Alice"), HumanMessage("hello")])
    first, second = await history.aget_messages()
    assert (first.name, first.content) == ("Alice", SAID["acme"])
    assert (second.name, second.content) == (None, "hello")
    assert [e.content for e in (await kg.group("team").episodes())[::-1]] == [
        f"Alice: {SAID['acme']}",
        "user: hello",
    ]


async def test_other_kinds_of_message_store_nothing(kg: KnowledgeGraph) -> None:
    history = EpigraphChatMessageHistory(kg, "alice")
    with pytest.raises(InputError, match=r"messages\[1\]: a SystemMessage"):
        await history.aadd_messages([HumanMessage("hi"), SystemMessage("be brief")])
    assert await history.aget_messages() == []


async def test_clear_removes_the_messages_and_what_they_taught(kg: KnowledgeGraph) -> None:
    history = EpigraphChatMessageHistory(kg, "alice", human_name="Alice")
    await history.aadd_messages([HumanMessage(SAID["acme"])])
    await history.aclear()
    assert await history.aget_messages() == []
    assert not (await kg.search("Acme", group_ids="alice")).facts


def test_the_synchronous_methods_name_the_asynchronous_ones(kg: KnowledgeGraph) -> None:
    history = EpigraphChatMessageHistory(kg, "alice")
    with pytest.raises(UsageError, match=r"await history\.aget_messages\(\)"):
        _ = history.messages
    with pytest.raises(UsageError, match=r"await history\.aadd_messages"):
        history.add_user_message("hi")
    with pytest.raises(UsageError, match=r"await retriever\.ainvoke"):
        EpigraphRetriever(kg=kg, group_id="alice").invoke("x")


@pytest.mark.filterwarnings("ignore:RunnableWithMessageHistory is deprecated")  # still in langchain-core 1.8
async def test_runnable_with_message_history_remembers_the_turns(kg: KnowledgeGraph) -> None:
    """LangChain's own wrapper reads the history before the turn and writes both messages after it."""
    seen: list[list[BaseMessage]] = []

    def model(prompt: object) -> AIMessage:
        messages = prompt.to_messages()  # type: ignore[attr-defined]
        seen.append(messages)
        return AIMessage(f"You said {len(messages) - 1} things before.")

    prompt = ChatPromptTemplate.from_messages([MessagesPlaceholder("history"), ("human", "{input}")])
    chain = RunnableWithMessageHistory(
        prompt | RunnableLambda(model),
        lambda session_id: EpigraphChatMessageHistory(kg, session_id, human_name="Alice"),
        input_messages_key="input",
        history_messages_key="history",
    )
    config = {"configurable": {"session_id": "alice"}}
    await chain.ainvoke({"input": SAID["paris"]}, config=config)
    reply = await chain.ainvoke({"input": SAID["berlin"]}, config=config)

    assert reply.content == "You said 2 things before."
    assert [m.content for m in seen[1]] == [SAID["paris"], "You said 0 things before.", SAID["berlin"]]
    history = await EpigraphChatMessageHistory(kg, "alice", human_name="Alice").aget_messages()
    assert [type(m) for m in history] == [HumanMessage, AIMessage, HumanMessage, AIMessage]


async def _alice(kg: KnowledgeGraph) -> None:
    history = EpigraphChatMessageHistory(kg, "alice", human_name="Alice")
    await history.aadd_messages([HumanMessage(SAID[k]) for k in ("paris", "acme", "berlin", "lisbon")])


async def test_the_retriever_returns_facts_with_their_windows(kg: KnowledgeGraph) -> None:
    await _alice(kg)
    retriever = EpigraphRetriever(kg=kg, group_id="alice", k=5)
    assert isinstance(retriever, BaseRetriever)

    docs = await retriever.ainvoke("where does Alice live")
    now = {d.page_content: d.metadata for d in docs}
    assert LISBON in now and ACME in now and PARIS not in now and BERLIN not in now
    lisbon = now[LISBON]
    assert lisbon["valid_at"] == "2024-02-01T00:00:00+00:00" and lisbon["invalid_at"] is None
    assert (lisbon["source"], lisbon["relation"], lisbon["target"]) == ("Alice", "LIVES_IN", "Lisbon")
    episodes = {e.uuid: e.content for e in await kg.group("alice").episodes()}
    assert [episodes[u] for u in lisbon["episodes"]] == [f"Alice: {SAID['lisbon']}"]
    assert docs[0].id == docs[0].metadata["uuid"]

    then = await retriever.model_copy(update={"as_of": "2023-01-01"}).ainvoke("where does Alice live")
    berlin = next(d.metadata for d in then if d.page_content == BERLIN)
    assert LISBON not in {d.page_content for d in then}
    assert (berlin["valid_at"], berlin["invalid_at"]) == (
        "2022-01-10T00:00:00+00:00",
        "2024-02-01T00:00:00+00:00",
    )


async def test_the_retriever_in_a_chain(kg: KnowledgeGraph) -> None:
    await _alice(kg)
    retriever = EpigraphRetriever(kg=kg, group_id="alice", k=3)
    chain = retriever | RunnableLambda(lambda docs: sorted(d.page_content for d in docs))
    assert LISBON in await chain.ainvoke("Alice lives")


async def test_a_message_may_carry_its_time(kg: KnowledgeGraph) -> None:
    history = EpigraphChatMessageHistory(kg, "alice", human_name="Alice")
    dated = HumanMessage(SAID["paris"], additional_kwargs={"reference_time": "2020-03-02T09:00:00Z"})
    before = utc_now()
    await history.aadd_messages([dated, HumanMessage(SAID["acme"])])
    first, second = await history.aget_messages()
    assert first.additional_kwargs["reference_time"] == "2020-03-02T09:00:00+00:00"
    assert datetime.fromisoformat(second.additional_kwargs["reference_time"]) >= before  # when added
    again = EpigraphChatMessageHistory(kg, "copy", human_name="Alice")
    await again.aadd_messages([first, second])  # read back, added elsewhere: same times
    assert [m.additional_kwargs["reference_time"] for m in await again.aget_messages()] == [
        first.additional_kwargs["reference_time"],
        second.additional_kwargs["reference_time"],
    ]
    with pytest.raises(InputError, match=r"messages\[0\]: reference_time 'soon' is not"):
        await history.aadd_messages([HumanMessage("x", additional_kwargs={"reference_time": "soon"})])
