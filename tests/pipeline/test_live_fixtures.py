"""Real replies of the local 1.5B model (``fixtures/live/*.json``, saved by ``bench/quality/live.py
--save-replies``) through the runtime and the pipeline: what is kept, what is dropped and why, and what
the episode reports.

Each fixture holds the prompt (and its version), the speaker and episode it answered, how the reply
ended and the reply exactly as the model streamed it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from epigraph.episodes.inputs import EpisodeInput
from epigraph.graph.embedded import EmbeddedStore
from epigraph.ingestion.ingestor import Ingestor
from epigraph.pipeline.options import IngestOptions
from epigraph.prompts import extract_combined as cp
from epigraph.prompts import extract_entities as ep
from epigraph.prompts import extract_facts as fp
from epigraph.prompts.extraction import ExtractionInput
from epigraph.prompts.runtime import PromptResult, stream
from epigraph.testing import HashEmbedder, ScriptedLLM, ScriptedReply

FIXTURES = Path(__file__).parent / "fixtures" / "live"
PROMPTS: dict[str, Any] = {"extract_entities": ep, "extract_facts": fp, "extract_combined": cp}


def fixture(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))
    return data


def content(data: dict[str, Any]) -> str:
    return f"{data['speaker']}: {data['episode']}"


async def replay(name: str) -> tuple[list[Any], PromptResult[Any]]:
    """Stream the recorded reply, in model-sized pieces, through the prompt it answered."""
    data = fixture(name)
    module = PROMPTS[data["prompt"]]
    finish = data.get("finish_reason", "stop")
    finish = "stop" if finish == "stopped" else finish  # the runtime closed it: it decides again here
    reply = ScriptedReply(data["text"], chunk_size=7, finish_reason=finish)
    llm = ScriptedLLM({data["prompt"]: reply})
    variables = ExtractionInput.of(content(data), data["speaker"])
    if data["prompt"] == "extract_facts":
        variables["entities"] = data.get("entities", ["Caroline"])
    lines = stream(llm, module.PROMPT, variables)
    items = [item async for item in lines]
    return items, lines.result


async def ingest(store: EmbeddedStore, embedder: HashEmbedder, name: str) -> Any:
    """The fixture's episode through the pipeline, its prompt answered with the recorded reply."""
    data = fixture(name)
    mode = "separate" if data["prompt"] != "extract_combined" else "combined"
    llm = ScriptedLLM({data["prompt"]: data["text"], "extract_facts": "none", "resolve_episode": ""})
    ingestor = Ingestor(store, llm, embedder, IngestOptions(mode=mode))
    return await ingestor.add_episode(
        EpisodeInput(content(data), group_id="g", reference_time="2023-05-08T13:56:00Z")
    )


async def test_a_repeated_line_closes_the_reply_and_the_lines_before_it_stand() -> None:
    items, result = await replay("combined_stopped_on_repeat")
    facts = [i for i in items if isinstance(i, cp.FactLine)]
    assert [f.fact for f in facts] == [
        "Melanie painted lake sunrise last year",
        "lake sunrise is special to Melanie as it is her favorite time of year",
    ]
    assert result.stopped == "a repeated line" and result.truncated
    assert [d.reason for d in result.dropped] == ["repeated line"]


async def test_a_fact_reply_closed_at_its_repeat_in_the_live_run_is_closed_again() -> None:
    items, result = await replay("facts_stopped_on_repeat")
    assert len(items) == 3 and result.stopped == "a repeated line"


async def test_names_from_the_prompts_example_never_reach_the_graph(
    store: EmbeddedStore, embedder: HashEmbedder
) -> None:
    """The model wrote "Ann" (the name in the prompt's example) for Melanie's message: the names the
    message never says are dropped as hallucinated, with their facts."""
    done = await ingest(store, embedder, "combined_example_names")
    names = {e.name for e in done.entities}
    assert "Ann" not in names and "Melanie" in names
    assert all("Ann" not in f.text.split() for f in done.facts)
    assert any("'Ann'" in w and "hallucinated" in w for w in done.report.warnings)


async def test_a_name_in_another_script_is_kept_only_when_the_message_grounds_it(
    store: EmbeddedStore, embedder: HashEmbedder
) -> None:
    done = await ingest(store, embedder, "entities_other_script")
    names = {e.name for e in done.entities}
    assert {"transgender stories", "Caroline"} <= names
    assert not any("感谢" in n for n in names), "a name with words the message never says is dropped"


async def test_a_greeting_costs_one_short_reply_and_adds_nothing(
    store: EmbeddedStore, embedder: HashEmbedder
) -> None:
    done = await ingest(store, embedder, "combined_greeting")
    assert done.ok and done.entities == [] and done.facts == []
    assert done.report.llm_calls == 1 and done.report.output_tokens <= 3


@pytest.mark.parametrize("name", sorted(p.stem for p in FIXTURES.glob("*.json")))
async def test_every_recorded_reply_is_handled_without_an_error(name: str) -> None:
    data = fixture(name)
    if data["prompt"] not in PROMPTS:
        pytest.skip("a resolve_episode reply: tests/pipeline/test_retirements.py replays it")
    items, result = await replay(name)
    assert result.error is None
    assert len(items) + len(result.dropped) >= 1 or data["text"].strip() == "none"
