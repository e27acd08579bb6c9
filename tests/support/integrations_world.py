"""The world of the agent-framework adapter tests: Alice's home changes twice (Paris, then Berlin, then
Lisbon) and she works at Acme, told by the scripted world (``world.py``). It answers ``ask`` with the
first current fact it is shown, cited (its agent, when that finds none, answers at once); conversation
summaries come from ``OVERVIEW_SCRIPT``."""

from __future__ import annotations

import json

from epigraph.prompts.protocol import ChatRequest
from epigraph.testing.overview import OVERVIEW_SCRIPT
from tests.support.world import F, Turn, World

PARIS, BERLIN, LISBON = "Alice lives in Paris.", "Alice lives in Berlin.", "Alice lives in Lisbon."


ACME = "Alice works at Acme."


SAID = {
    "paris": "I live in Paris.",
    "acme": "I work at Acme.",
    "berlin": "I moved to Berlin.",
    "lisbon": "I moved to Lisbon.",
}
"""What Alice says, by topic; as an episode each reads ``Alice: <sentence>``."""


NOTES = {topic: {"data": f"Alice said: {sentence}"} for topic, sentence in SAID.items()}
"""The same as memories a LangGraph node stores (JSON episodes)."""


def _told(topic: str) -> list[str]:
    """The episode contents that tell ``topic``: Alice's message and the note of it."""
    return [f"Alice: {SAID[topic]}", json.dumps(NOTES[topic])]


def first_current_fact(request: ChatRequest) -> str:
    """The answering call's reply: the first current fact shown (no "ended" or "not yet" after its
    window), cited by its label."""
    for line in str(request.variables["facts"]).splitlines():
        label, _, rest = line.partition(": ")
        if label.startswith("F") and not any(f"; {s}" in rest for s in ("ended", "not yet")):
            return f"{rest.split(' (from ')[0]} [{label}]"
    return "[none] The graph holds nothing about this."


TURNS = {
    "paris": Turn(["Alice", "Paris"], [F("Alice", "Paris", "LIVES_IN", PARIS, "2020-03-01T00:00:00Z")]),
    "acme": Turn(["Alice", "Acme"], [F("Alice", "Acme", "WORKS_AT", ACME, "2021-05-01T00:00:00Z")]),
    "berlin": Turn(["Alice", "Berlin"], [F("Alice", "Berlin", "LIVES_IN", BERLIN, "2022-01-10T00:00:00Z")]),
    "lisbon": Turn(["Alice", "Lisbon"], [F("Alice", "Lisbon", "LIVES_IN", LISBON, "2024-02-01T00:00:00Z")]),
}


def answer_now(request: ChatRequest) -> str:
    """The ask agent's plan when the context found nothing: answer with what it has."""
    return json.dumps({"thought": "nothing more to look up", "action": "answer"})


WORLD = World(
    {content: turn for topic, turn in TURNS.items() for content in _told(topic)},
    contradicts={BERLIN: [PARIS], LISBON: [BERLIN]},
    overrides={**OVERVIEW_SCRIPT, "ask_plan": answer_now, "ask_answer": first_current_fact},
)
