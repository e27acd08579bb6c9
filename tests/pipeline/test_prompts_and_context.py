"""The pipeline's prompts render within budget; the context window is capped by tokens and ordered."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from epigraph.graph.embedded import EmbeddedStore
from epigraph.graph.model import Episode
from epigraph.pipeline.context import NONE, context_text, previous_episodes
from epigraph.prompts import (
    date_fact,
    extract_combined,
    extract_entities,
    extract_facts,
    resolve_episode,
    summarize_entities,
)
from epigraph.prompts.parsing import parse_jsonl_reply
from epigraph.prompts.render import output_adapter, render
from epigraph.tokens import count_message_tokens

from .conftest import T0

MODULES = [
    extract_entities,
    extract_facts,
    extract_combined,
    resolve_episode,
    date_fact,
    summarize_entities,
]


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.PROMPT.name)
def test_every_prompt_renders_its_example_compactly(module: object) -> None:
    prompt = module.PROMPT  # type: ignore[attr-defined]
    messages = render(prompt, module.EXAMPLE)  # type: ignore[attr-defined]
    assert [m["role"] for m in messages] == ["system", "user"]
    assert count_message_tokens(messages) < 450, "prompts stay small: they run for every episode"


def test_combined_lines_are_discriminated_by_type() -> None:
    fact = json.dumps(
        {"type": "fact", "source": "Ann", "target": "Oslo", "relation": "IN", "fact": "Ann is in Oslo."}
    )
    reply = '{"type": "entity", "name": "Ann"}\n' + fact + '\n{"type": "other"}'
    items, dropped = parse_jsonl_reply(reply, output_adapter(extract_combined.PROMPT))
    assert [type(i).__name__ for i in items] == ["EntityLine", "FactLine"] and len(dropped) == 1


def _episode(i: int, content: str, minutes: int = 0) -> Episode:
    return Episode(
        group_id="g", content=content, reference_time=T0, created_at=T0 + timedelta(minutes=minutes + i)
    )


async def test_the_window_holds_the_turns_before_this_one_oldest_first(store: EmbeddedStore) -> None:
    episodes = [_episode(i, f"turn {i}") for i in range(5)]
    for e in episodes:
        await store.save_episode(e)
    before = await previous_episodes(store, episodes[3], limit=8)
    assert [e.content for e in before] == ["turn 2", "turn 1", "turn 0"]
    assert context_text(before, 1000) == "turn 0\nturn 1\nturn 2"
    assert context_text(before, 6) == "turn 2", "the newest turns are kept within the token cap"
    assert context_text([], 100) == NONE
    assert await previous_episodes(store, episodes[0], limit=8) == []
