"""The quickstart conversation (``examples/quickstart.py``) as the tests ingest it: its recorded answers
replayed, with scripted ones for communities and conversations, and the hash embedder."""

from __future__ import annotations

import dataclasses
import json

from epigraph import KnowledgeGraph
from epigraph.prompts.protocol import ChatRequest
from epigraph.testing import ScriptedLLM
from epigraph.testing.overview import OVERVIEW_SCRIPT
from examples.quickstart import RECORDED, Replay, conversation


def quickstart_llm() -> ScriptedLLM:
    """The quickstart's recorded answers, and scripted ones for communities and conversations."""
    replay = Replay(json.loads(RECORDED.read_text(encoding="utf-8")))

    def reply(request: ChatRequest) -> str:
        answer = OVERVIEW_SCRIPT.get(request.prompt_name, replay)
        return str(answer(request))

    return ScriptedLLM(reply)


async def ingest_quickstart(kg: KnowledgeGraph) -> None:
    """The quickstart's conversation, into ``kg``'s group."""
    results = await kg.add_episodes([dataclasses.replace(e, group_id=kg.group_id) for e in conversation()])
    assert all(r.ok for r in results)
