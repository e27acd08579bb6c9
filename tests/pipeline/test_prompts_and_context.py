"""The pipeline's prompts render within budget; the context window is capped by tokens and ordered."""

from __future__ import annotations

from datetime import timedelta

import pytest

from epigraph.graph.embedded import EmbeddedStore
from epigraph.graph.model import Episode
from epigraph.pipeline.context import context_block, context_text, previous_episodes
from epigraph.prompts import (
    extract_combined,
    extract_entities,
    extract_facts,
    resolve_episode,
    summarize_entities,
)
from epigraph.prompts.parsing import parse_lines_reply
from epigraph.prompts.render import render
from epigraph.tokens import count_message_tokens
from tests.support.world import T0

MODULES = [
    extract_entities,
    extract_facts,
    extract_combined,
    resolve_episode,
    summarize_entities,
]


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.PROMPT.name)
def test_every_prompt_is_a_fixed_part_then_a_small_new_part(module: object) -> None:
    """The instructions and examples come first and the episode last, so a server that caches prompt
    prefixes evaluates only the last message; that part and the whole stay small."""
    prompt = module.PROMPT  # type: ignore[attr-defined]
    messages = render(prompt, module.EXAMPLE)  # type: ignore[attr-defined]
    assert messages[0]["role"] == "system" and messages[-1]["role"] == "user"
    # 520: extract_combined v9's names line (measured, live bench) took it from 463 to 510; the fixed
    # part is read once per server and cached, a call evaluates only the episode
    assert count_message_tokens(messages) < 520, "prompts stay small: they run for every episode"
    assert count_message_tokens(messages[-1:]) < 100, "what changes from call to call is the episode"
    fixed = render(prompt, module.EXAMPLE.model_copy(update={"context": ""}))  # type: ignore[attr-defined]
    assert all(a == b for a, b in zip(messages[:-1], fixed[:-1], strict=True)), "nothing before it varies"


def test_combined_lines_are_facts_and_the_entities_they_name() -> None:
    reply = (
        "[Ann] lives in [Oslo] since 2019\n[Bo]\nAnn lives in Oslo\n[Ann] lives in [Oslo] since 2019\n"
        "Names: Oslo; fjord tour\nNames: none"
    )
    data = extract_combined.EXAMPLE
    items, dropped = parse_lines_reply(reply, lambda line: extract_combined.PROMPT.lines.decode(line, data))  # type: ignore[union-attr]
    assert [(type(i).__name__, getattr(i, "name", None)) for i in items] == [
        ("EntityLine", "Ann"),
        ("EntityLine", "Oslo"),
        ("FactLine", None),
        ("EntityLine", "Bo"),
        ("EntityLine", "Oslo"),
        ("EntityLine", "fjord tour"),
    ], "the names line names entities, and `Names: none` none"
    assert items[2].fact == "Ann lives in Oslo since 2019" and items[2].relation == "lives in"  # type: ignore[union-attr]
    assert [d.reason.split(":")[0] for d in dropped] == [
        "not a fact line '[subject] relation [object] ...'",
        "repeated line",
    ]


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
    assert context_text([], 100) == "" and context_block("") == ""
    assert context_block("turn 2").startswith("Earlier") and context_block("turn 2").endswith("turn 2\n\n")
    assert await previous_episodes(store, episodes[0], limit=8) == []


async def test_the_window_is_the_same_however_many_later_turns_are_stored(store: EmbeddedStore) -> None:
    """A session's turns share their reference time; those stored after this one (accepted together, or run
    ahead: ``IngestOptions.in_flight``) are skipped, however many: the window is the turns before it."""
    episodes = [_episode(i, f"turn {i}") for i in range(40)]
    for e in episodes[:11]:
        await store.save_episode(e)
    alone = await previous_episodes(store, episodes[10], limit=8)
    for e in episodes[11:]:
        await store.save_episode(e)
    crowded = await previous_episodes(store, episodes[10], limit=8)
    assert [e.content for e in crowded] == [e.content for e in alone]
    assert [e.content for e in alone] == [f"turn {i}" for i in range(9, 1, -1)]
