"""The LLM path: a ScriptedLLM proposes mappings for a shape no detector knows."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from epigraph.errors import StructuredOutputError
from epigraph.graph.model import Episode
from epigraph.importers import IrrelevantDataset, MappingError, iter_episodes, plan_import
from epigraph.importers.propose import (
    MAX_KEYS,
    MAX_STRING,
    propose_mapping,
    shorten,
    shorten_samples,
)
from epigraph.prompts.propose_mapping import EXAMPLE, PROMPT
from epigraph.prompts.runtime import build_request
from epigraph.testing import ScriptedLLM

FIXTURES = Path(__file__).parent / "fixtures"
ODD = FIXTURES / "odd.jsonl"

GOOD: dict[str, Any] = {
    "messages": [
        {
            "each": "log[*]",
            "role": "actor.kind",
            "role_map": {"client": "user", "agent": "assistant"},
            "content": "payload.txt",
            "speaker": "actor.handle",
            "timestamp": "ts",
            "id": None,
        }
    ],
    "system": None,
    "records": None,
    "meta": {
        "source": "helpdesk",
        "language": "en",
        "timestamp": "ticket.opened",
        "timestamp_format": None,
        "token_count": None,
        "quality_score": None,
        "original_id": "ticket.no",
    },
}
BAD = {**GOOD, "messages": [{**GOOD["messages"][0], "content": "log.payload.txt", "each": None}]}


def script(*replies: Any) -> ScriptedLLM:
    return ScriptedLLM({"propose_mapping": [r if isinstance(r, str) else json.dumps(r) for r in replies]})


async def test_odd_format_only_the_llm_can_map() -> None:
    llm = script(GOOD)
    plan = await plan_import(ODD, "auto", llm=llm, group_id="support")
    assert plan.origin == "proposed by the LLM"
    assert plan.mapping.description == "proposed by the LLM"
    eps = [e for e in iter_episodes(plan) if isinstance(e, Episode)]
    assert [e.content for e in eps] == [
        "ann: My order 554 is late.",
        "bob: Sorry Ann, it ships tomorrow.",
        "cid: Please change my address to 5 Elm St.",
    ]
    assert eps[0].reference_time == datetime(2024, 3, 1, 10, tzinfo=UTC)
    assert {e.source_description for e in eps} == {"helpdesk"}
    assert len(llm.calls) == 1
    sent = llm.calls[0].variables
    assert sent["file_name"] == "odd.jsonl" and "My order 554 is late." in sent["samples"]
    assert sent["problems"] == "none"


async def test_invalid_proposal_is_reasked_once_with_the_problems() -> None:
    llm = script(BAD, GOOD)
    plan = await plan_import(ODD, llm=llm, group_id="g")
    assert plan.compiled.messages[0].each is not None
    assert len(llm.calls) == 2
    second = llm.calls[1].variables
    assert "log.payload.txt" in second["problems"] and "'log' is an array" in second["problems"]
    assert json.loads(second["previous"])["messages"][0]["content"] == "log.payload.txt"


async def test_still_invalid_after_the_reask_fails_clearly() -> None:
    llm = script(BAD, BAD)
    with pytest.raises(MappingError) as info:
        await plan_import(ODD, llm=llm, group_id="g")
    assert "messages[0].content: log.payload.txt" in info.value.unresolved
    assert "still invalid after one re-ask" in str(info.value)
    assert "no known format recognised" in str(info.value)
    assert len(llm.calls) == 2


async def test_structural_problems_are_reasked_too() -> None:
    llm = script({"text": "log", "colour": "red"}, GOOD)
    await plan_import(ODD, llm=llm, group_id="g")
    assert "colour" in llm.calls[1].variables["problems"]


async def test_non_json_reply_goes_through_the_runtime_reask() -> None:
    llm = script("Sure! Here is a mapping: {not json", GOOD)
    plan = await plan_import(ODD, llm=llm, group_id="g")
    assert plan.mode == "messages" and len(llm.calls) == 2
    with pytest.raises(StructuredOutputError):
        await plan_import(ODD, llm=script("nope", "still nope"), group_id="g")


async def test_fenced_json_with_think_block_is_accepted() -> None:
    reply = "<think>records are tickets</think>\n```json\n" + json.dumps(GOOD) + "\n```"
    plan = await plan_import(ODD, llm=script(reply), group_id="g")
    assert plan.origin == "proposed by the LLM"


async def test_irrelevant_dataset_is_refused() -> None:
    llm = script({"text": None, "name": None, "records": None, "meta": None})
    with pytest.raises(IrrelevantDataset, match="no chat messages"):
        await plan_import(FIXTURES / "irrelevant.jsonl", llm=llm, group_id="g")
    with pytest.raises(IrrelevantDataset):
        await plan_import(
            FIXTURES / "irrelevant.jsonl", llm=script({"messages": None, "system": None, "meta": None})
        )


async def test_known_formats_never_call_the_llm() -> None:
    llm = ScriptedLLM({})
    plan = await plan_import(FIXTURES / "locomo_mini.json", llm=llm)
    assert plan.origin == "detected: locomo" and llm.calls == []


async def test_without_an_llm_an_unknown_format_is_a_clear_error() -> None:
    with pytest.raises(MappingError, match="pass an LLM"):
        await plan_import(ODD)


async def test_a_given_mapping_is_never_replaced_by_a_proposal(tmp_path: Path) -> None:
    mapping = tmp_path / "m.json"
    mapping.write_text(json.dumps(BAD))
    with pytest.raises(MappingError):
        await plan_import(ODD, mapping, llm=script(GOOD))


async def test_detected_mapping_that_does_not_fit_falls_back_to_the_llm(tmp_path: Path) -> None:
    path = tmp_path / "npc.jsonl"
    path.write_text(
        json.dumps({"conversations": [{"from": "npc", "value": "Halt!"}, {"from": "hero", "value": "Hi"}]})
        + "\n"
    )
    proposal = {
        "messages": [
            {
                "each": "conversations[*]",
                "role": "from",
                "content": "value",
                "speaker": "from",
                "role_map": {"npc": "assistant", "hero": "user"},
            }
        ]
    }
    plan = await plan_import(path, llm=script(proposal))
    assert [e.content for e in iter_episodes(plan)] == ["npc: Halt!", "hero: Hi"]  # type: ignore[union-attr]


async def test_propose_mapping_needs_samples() -> None:
    with pytest.raises(MappingError, match="no records"):
        await propose_mapping(script(GOOD), [], file_name="x")


def test_prompt_renders_with_every_field() -> None:
    request = build_request(PROMPT, EXAMPLE)
    system, user = request.messages
    assert "records" in system["content"] and "role_map" in system["content"]
    assert "support.jsonl" in user["content"] and "Problems found in it: none" in user["content"]


def test_samples_are_shortened_but_keep_their_shape() -> None:
    record = {
        "long": "x" * 1000,
        "many": list(range(100)),
        **{f"session_{i}": [i] for i in range(100)},
    }
    short = shorten(record)
    assert short["long"] == "x" * MAX_STRING + f"…(+{1000 - MAX_STRING} more chars)"
    assert short["many"] == [0, 1, 2, "…(+97 more)"]
    assert len(short) == MAX_KEYS + 1 and "session_99" in short["…"]
    deep: Any = "leaf"
    for _ in range(50):
        deep = {"k": deep}
    assert "nested deeper" in json.dumps(shorten(deep))
    assert len(shorten_samples([record] * 3)) < 12_000
