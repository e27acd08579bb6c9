"""Scripted answers for the overview prompts (``summarize_communities``, ``summarize_conversation``):
deterministic replies built from the request's own input, for tests, benches and offline demos.

``OVERVIEW_SCRIPT`` is a ``ScriptedLLM`` script entry per prompt; merge it into a script of your own::

    llm = ScriptedLLM({**my_script, **OVERVIEW_SCRIPT})

A community is named after its two best connected members ("Caroline and Melanie") and summarized with
their summaries' first sentences; a conversation's summary is the summary so far followed by the first
words of each new message, its last 1,000 characters kept.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..prompts.protocol import ChatRequest

__all__ = ["OVERVIEW_SCRIPT", "community_reply", "conversation_reply"]


def _first_sentence(text: str) -> str:
    head = text.split(". ")[0].strip()
    return head if head.endswith(".") or not head else head + "."


def community_reply(request: ChatRequest) -> str:
    """``{"communities": [...]}``: each community named after its first two members."""
    out = []
    for community in request.variables["communities"]:
        members: list[Mapping[str, Any]] = community["members"]
        names = [m["name"] for m in members[:2]]
        summary = " ".join(_first_sentence(m["summary"]) for m in members[:2] if m["summary"])
        out.append({"id": community["id"], "name": " and ".join(names), "summary": summary or names[0]})
    return json.dumps({"communities": out})


def conversation_reply(request: ChatRequest) -> str:
    """The summary so far, then the first eight words of each new message (the last 1,000 characters)."""
    variables = request.variables
    before = "" if variables["summary"] == "(none yet)" else str(variables["summary"])
    lines = [" ".join(line.split()[:9]) for line in str(variables["episodes"]).splitlines()]
    return (before + " " + " / ".join(lines)).strip()[-1000:]


OVERVIEW_SCRIPT: dict[str, Any] = {
    "summarize_communities": community_reply,
    "summarize_conversation": conversation_reply,
}
