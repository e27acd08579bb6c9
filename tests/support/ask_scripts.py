"""Scripted models for the ask tests: plan replies as JSON, and an answerer that reads the facts block
the way a careful model would (by the windows it shows)."""

from __future__ import annotations

import json
import re
from datetime import date, datetime
from typing import Any

from epigraph.prompts.protocol import ChatRequest
from epigraph.testing import ScriptedReply

_DAY = r"\d{1,2} [A-Z][a-z]+ \d{4}"
_LINE = re.compile(
    rf"^(F\d+): (.*) \(from ({_DAY})(?: until ({_DAY}))?(?:; (current|ended|not yet)(?: as of {_DAY})?)?\)$"
)


def shown_day(text: str) -> date:
    """A date as the answering context writes it (``7 May 2023``)."""
    return datetime.strptime(text, "%d %B %Y").date()


def plan(action: str = "answer", thought: str = "", **args: Any) -> str:
    return json.dumps({"thought": thought, "action": action, **args})


def fact_lines(request: ChatRequest) -> list[tuple[str, str, date, date | None, str]]:
    """(id, text, from, until, status) of each fact line shown to the answering call (no status
    shown: current)."""
    out = []
    for line in str(request.variables["facts"]).splitlines():
        if m := _LINE.match(line):
            out.append((m[1], m[2], shown_day(m[3]), m[4] and shown_day(m[4]), m[5] or "current"))
    return out


def held_on(when: date, **reply: Any) -> Any:
    """An answerer citing the fact whose window holds ``when`` (by the text the prompt shows)."""

    def answer(request: ChatRequest) -> ScriptedReply:
        for label, text, start, end, _ in fact_lines(request):
            if start <= when and (end is None or when < end):
                return ScriptedReply(f"{text} [{label}]", **reply)
        return ScriptedReply("The graph holds nothing about this.", **reply)

    return answer
