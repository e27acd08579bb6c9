"""Real replies of the local 1.5B model (``fixtures/live/*.json``, recorded by hand and by
``bench/live_bench.py --save-replies``) through the runtime and the pipeline: what is kept, what is
dropped and why, and what the episode reports.

Each fixture holds the prompt, the episode (and context) it answered, how the request was made, the
finish reason and the reply exactly as the model streamed it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from epigraph.graph.embedded import EmbeddedStore
from epigraph.pipeline import Ingestor
from epigraph.prompts import extract_combined as cp
from epigraph.prompts import extract_entities as ep
from epigraph.prompts import extract_facts as fp
from epigraph.prompts.runtime import PromptResult, stream
from epigraph.testing import HashEmbedder, ScriptedLLM, ScriptedReply

FIXTURES = Path(__file__).parent / "fixtures" / "live"
PROMPTS: dict[str, Any] = {"extract_entities": ep, "extract_facts": fp, "extract_combined": cp}


def fixture(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))
    return data


async def replay(name: str) -> tuple[list[Any], PromptResult[Any]]:
    """Stream the recorded reply, in model-sized pieces, through the prompt it answered."""
    data = fixture(name)
    module = PROMPTS[data["prompt"]]
    finish = data.get("finish_reason", "stop")
    finish = "stop" if finish == "stopped" else finish  # the runtime closed it: it decides again here
    reply = ScriptedReply(data["text"], chunk_size=7, finish_reason=finish)
    llm = ScriptedLLM({data["prompt"]: reply})
    variables = {"episode": data["episode"], "reference_time": "2023-05-08T13:56:00Z"}
    if data["prompt"] != "extract_facts":
        variables["previous"] = data.get("previous", "")
    else:
        variables["entities"] = data.get("entities", [])
    lines = stream(llm, module.PROMPT, variables)
    items = [item async for item in lines]
    return items, lines.result


async def test_a_cycle_under_the_grammar_is_cut_after_two_repeats() -> None:
    items, result = await replay("entities_grammar_cycle")
    assert [i.name for i in items] == ["Melanie", "Caroline", "Melanie's kids", "Melanie's work"]
    assert result.stopped == "2 repeated lines" and result.truncated
    reasons = [d.reason for d in result.dropped]
    assert reasons[:2] == ["repeated line", "repeated line"]
    assert set(reasons[2:]) <= {"truncated: incomplete final line"}, "the line it was cut in"


async def test_invented_attributes_parse_but_never_reach_the_graph(
    store: EmbeddedStore, embedder: HashEmbedder
) -> None:
    data = fixture("entities_invented_attributes")
    items, result = await replay("entities_invented_attributes")
    assert [i.attributes["occupation"] for i in items] == ["teacher", "teacher"], "what the model wrote"
    assert result.dropped == [] and result.complete
    llm = ScriptedLLM({"extract_entities": data["text"], "extract_facts": ""})
    done = await Ingestor(store, llm, embedder).add_episode(
        data["episode"], group_id="g", reference_time="2023-05-08T13:56:00Z"
    )
    assert sorted(e.name for e in done.entities) == ["Caroline", "Melanie"]
    assert all(e.attributes == {} for e in done.entities), "no declared type: the inventions are dropped"
    assert any("dropped: no declared type" in w for w in done.report.warnings)


async def test_a_reply_the_runtime_closed_in_the_live_run_is_closed_again() -> None:
    items, result = await replay("entities_stopped_on_repeats")
    assert [i.name for i in items] == ["Melanie"], "the same line three times: one item"
    assert result.stopped == "2 repeated lines"


async def test_a_reply_cut_at_its_cap_keeps_its_whole_lines() -> None:
    data = fixture("combined_cut_at_cap")
    items, result = await replay("combined_cut_at_cap")
    whole = [line for line in data["text"].split("\n")[:-1] if line.strip()]
    assert result.truncated and result.finish_reason == "length"
    assert len(items) + sum(d.reason == "repeated line" for d in result.dropped) == len(whole)
    assert result.dropped[-1].reason == "truncated: incomplete final line"


@pytest.mark.parametrize("name", sorted(p.stem for p in FIXTURES.glob("*.json")))
async def test_every_recorded_reply_is_handled_without_an_error(name: str) -> None:
    data = fixture(name)
    if data["prompt"] not in PROMPTS:
        pytest.skip("a json prompt's reply: covered by the runtime's json tests")
    items, result = await replay(name)
    assert result.error is None
    assert len(items) + len(result.dropped) >= 1 or not data["text"].strip()
