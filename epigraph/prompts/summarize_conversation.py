"""summarize_conversation (text): a conversation's running summary, updated from its new episodes only.

The model gets the summary so far and the episodes recorded since it was written (each dated and cut
short, at most ``OverviewOptions.conversation_tokens`` of them per call), and rewrites the summary. It
never sees the episodes already folded in, so an update costs the new text, not the whole conversation.
Episodes that arrived late (dated before the latest one already covered) are marked, so the model places
them in time instead of appending them.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from .base import OutputShape, Prompt


class SummarizeConversationInput(BaseModel):
    conversation: str
    """The chain's key (its source)."""
    summary: str
    """The summary so far; "(none yet)" for a new one."""
    episodes: str = Field(min_length=1)
    """One line per new episode: ``[DATE] content``, oldest first; a late one ends with "(arrived late)"."""


EXAMPLE = SummarizeConversationInput(
    conversation="chat:alice-bob",
    summary="Alice told Bob she moved to Berlin in May 2023 for a job at Globex.",
    episodes="[2023-06-02] Bob: How is the new job going?\n"
    "[2023-06-02] Alice: Great, and I adopted a cat named Miso last week.",
)

PROMPT: Prompt[SummarizeConversationInput, str] = Prompt(
    name="summarize_conversation",
    version="1",
    input_model=SummarizeConversationInput,
    output_model=None,
    response_type="text",
    example=EXAMPLE,
    small=True,
    # One paragraph of at most five sentences (under 120 words).
    shape=OutputShape(per_item=200, items=lambda d: 1, base=0),
)
