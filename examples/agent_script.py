"""What the agent examples (``openai_agents_tools.py``, ``pydantic_ai_tools.py``) ask their agent, and
the tool calls a model would make for it, played in order when they run offline (live, the model
chooses): remember what Alice said (her longer messages), then search the memory now and as of June 2023."""

from __future__ import annotations

from typing import Any

from quickstart import SESSIONS

TOLD = [text for _, turns in SESSIONS for speaker, text in turns if speaker == "Alice" and len(text) > 40]
QUESTION = "Where does Alice live and work?"
PROMPT = (
    "Alice told me these over the past year; remember each, then tell me where she lives and works now "
    "and where she did on 2023-06-01:\n" + "\n".join(f"- {text}" for text in TOLD)
)
INSTRUCTIONS = (
    "You keep a long-term memory of what people tell you. Remember each statement with the remember "
    "tool (one call each), then answer questions from the search tool's facts and their dates."
)
CALLS: list[tuple[str, dict[str, Any]]] = [
    *(("remember", {"text": text}) for text in TOLD),
    ("search", {"query": QUESTION, "as_of": None}),
    ("search", {"query": QUESTION, "as_of": "2023-06-01"}),
]


def next_call(replies: list[str]) -> tuple[str, dict[str, Any]] | None:
    """The call to make after ``replies`` (the tools' answers so far); None: time to answer."""
    return CALLS[len(replies)] if len(replies) < len(CALLS) else None


def answer(replies: list[str]) -> str:
    """The final answer: what the two searches found."""
    return f"Now:\n{replies[-2]}\nOn 2023-06-01:\n{replies[-1]}"
