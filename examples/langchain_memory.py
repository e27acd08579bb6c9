"""epigraph in LangChain: a chat history whose messages become a temporal graph, and a retriever of its
facts with their validity windows (``pip install 'epigraph[langchain]'``).

The quickstart's conversation (Alice and Bob, three sessions, facts that change) is added to an
``EpigraphChatMessageHistory`` as LangChain messages, Alice's as ``HumanMessage``, Bob's as
``AIMessage``; the history reads them back; an ``EpigraphRetriever`` then finds the facts that hold now
and those that held in June 2023, each a ``Document`` with its window in the metadata.

Offline by default, on the quickstart's recorded answers; live like the quickstart (EPIGRAPH_LLM=local,
or EPIGRAPH_LLM_BASE_URL / _API_KEY / _MODEL). Run: ``python examples/langchain_memory.py``.
"""

from __future__ import annotations

import asyncio
import sys
from datetime import datetime

from langchain_core.documents import Document
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from quickstart import GROUP, SESSIONS, choose_embedder, choose_llm, close

from epigraph import KnowledgeGraph
from epigraph.config import Settings
from epigraph.integrations.langchain import EpigraphChatMessageHistory, EpigraphRetriever


def messages() -> list[BaseMessage]:
    """The conversation as LangChain messages, each dated by its session."""
    out: list[BaseMessage] = []
    for when, turns in SESSIONS:
        for speaker, text in turns:
            kind = HumanMessage if speaker == "Alice" else AIMessage
            out.append(kind(text, additional_kwargs={"reference_time": when}))
    return out


def show(doc: Document) -> str:
    meta = doc.metadata
    window = f"{_day(meta['valid_at'])} .. {_day(meta['invalid_at']) or 'now'}"
    return f"  {window:<24} {doc.page_content}"


def _day(value: str | None) -> str:
    return datetime.fromisoformat(value).date().isoformat() if value else ""


async def main() -> int:
    settings = Settings.from_env(db_path=":memory:")
    llm, note = choose_llm(settings)
    print(f"epigraph + LangChain: {note}")
    async with KnowledgeGraph(settings, llm=llm, embedder=choose_embedder(settings), group_id=GROUP) as kg:
        history = EpigraphChatMessageHistory(kg, GROUP, human_name="Alice", ai_name="Bob", source="chat")
        await history.aadd_messages(messages())
        stored = await history.aget_messages()
        print(f"\nThe history holds {len(stored)} messages, read back from the graph's episodes:")
        for message in stored[:4]:
            print(f"  {type(message).__name__:<12} {message.content}")
        print("  ...")

        retriever = EpigraphRetriever(kg=kg, group_id=GROUP, k=6)
        question = "Where does Alice live and work?"
        print(f"\nRetriever, now: {question}")
        for doc in await retriever.ainvoke(question):
            print(show(doc))
        print(f"\nRetriever, as of 2023-06-01: {question}")
        for doc in await retriever.model_copy(update={"as_of": "2023-06-01"}).ainvoke(question):
            print(show(doc))
    await close(llm)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
