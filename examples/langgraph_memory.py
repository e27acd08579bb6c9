"""epigraph as LangGraph's long-term memory: a compiled ``StateGraph`` whose nodes write and read
memories through ``EpigraphStore`` (LangGraph's store interface; ``pip install 'epigraph[langgraph]'``).

Each turn of the quickstart's conversation runs the graph once: the ``remember`` node stores the turn as
a memory in the namespace ``("memories", "quickstart")`` (an episode of the group
``memories.quickstart``, its facts extracted at once), the ``recall`` node searches that namespace for
what the graph knows about the turn. After the conversation the store's search finds the memories,
and the group's facts show their validity windows: what changed, and when.

Offline by default, on the quickstart's recorded answers (a memory is JSON: the recording is read by
the turn it holds); live like the quickstart (EPIGRAPH_LLM=local, or EPIGRAPH_LLM_BASE_URL / _API_KEY /
_MODEL). Run: ``python examples/langgraph_memory.py``.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.store.base import BaseStore
from quickstart import RECORDED, SESSIONS, Replay, choose_embedder, choose_llm, close

from epigraph import KnowledgeGraph
from epigraph.config import Settings
from epigraph.integrations.langgraph import EpigraphStore
from epigraph.present.tables import fmt_validity
from epigraph.prompts.extraction import ExtractionInput
from epigraph.prompts.grammar import NONE
from epigraph.prompts.protocol import ChatRequest
from epigraph.testing import ScriptedLLM

NAMESPACE = ("memories", "quickstart")
EXTRACTION = ("extract_entities", "extract_facts", "extract_combined")


class Turn(TypedDict):
    speaker: str
    text: str
    recalled: list[str]


async def remember(state: Turn, *, store: BaseStore) -> dict[str, Any]:
    """Store the turn as a memory (one episode, its facts extracted now)."""
    key = f"turn-{len(await store.asearch(NAMESPACE, limit=100)) + 1}"
    await store.aput(NAMESPACE, key, {"speaker": state["speaker"], "text": state["text"]})
    return {}


async def recall(state: Turn, *, store: BaseStore) -> dict[str, Any]:
    """What the memory holds about the turn: the best earlier memories."""
    hits = await store.asearch(NAMESPACE, query=state["text"], limit=3)
    return {"recalled": [f"{h.value['speaker']}: {h.value['text']}" for h in hits]}


def build(store: BaseStore) -> Any:
    builder = StateGraph(Turn)
    builder.add_node("remember", remember)
    builder.add_node("recall", recall)
    builder.add_edge(START, "remember")
    builder.add_edge("remember", "recall")
    builder.add_edge("recall", END)
    return builder.compile(store=store)


class NoteReplay(Replay):
    """The quickstart's recording, read by the turn a memory holds (``{"speaker", "text"}``)."""

    def __call__(self, request: ChatRequest) -> str:
        if request.prompt_name not in EXTRACTION:
            return super().__call__(request)
        note = json.loads(ExtractionInput.model_validate(request.variables).content())
        said = f"{note['speaker']}: {note['text']}"
        return "\n".join(self.r[request.prompt_name].get(said, [])) or NONE


async def main() -> int:
    settings = Settings.from_env(db_path=":memory:")
    llm, note = choose_llm(settings)
    if isinstance(llm, ScriptedLLM):
        llm = ScriptedLLM(NoteReplay(json.loads(RECORDED.read_text(encoding="utf-8"))))
    print(f"epigraph + LangGraph: {note}")
    async with KnowledgeGraph(settings, llm=llm, embedder=choose_embedder(settings)) as kg:
        store = EpigraphStore(kg)
        graph = build(store)
        print(f"\nThe graph runs once a turn; its nodes write and read {NAMESPACE}")
        for _, turns in SESSIONS:
            for speaker, text in turns:
                out = await graph.ainvoke({"speaker": speaker, "text": text, "recalled": []})
                print(f"  {speaker}: {text[:60]:<60} recalled {len(out['recalled'])}")

        question = "Where does Alice work?"
        print(f"\nstore.asearch({NAMESPACE}, query={question!r})")
        for hit in await store.asearch(NAMESPACE, query=question, limit=3):
            print(f"  {hit.key:<8} {hit.value['speaker']}: {hit.value['text']}")

        group = ".".join(NAMESPACE)
        found = await kg.search("Alice lives works", group_ids=group, include_retired=True, limit=6)
        print(f"\nWhat the group {group!r} learned about Alice, with windows")
        for result in found.facts:
            print(f"  {fmt_validity(result.fact):<28} {result.fact.text}")
    await close(llm)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
