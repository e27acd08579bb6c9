"""An episode ingested with numbered fact lines (``FactOptions.line_format`` "numbered"): the fact call
shows the names numbered, its lines' numbers become the facts' ends, their free sentences the facts'
texts, dated from their own words, through the facts room's gates."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

import pytest

from epigraph.episodes.inputs import EpisodeInput
from epigraph.graph.embedded import EmbeddedStore
from epigraph.ingestion.ingestor import Ingestor
from epigraph.pipeline.options import FactOptions, IngestOptions
from epigraph.prompts.protocol import ChatRequest
from epigraph.testing import HashEmbedder, ScriptedLLM
from tests.support.world import T0

MESSAGE = "Ann: Busy! I started a pottery class last Monday. It meets at the community center."
NAMES = "Ann; pottery class; community center"
REPLY = "\n".join(
    [
        "1 2 | Ann started a pottery class last Monday",
        "2 3 | The pottery class meets at the community center",
        "1 3 | Ann teaches yoga classes to seniors at the community center",  # not the message's words
        "7 1 | Ann goes to the gym",  # no seventh name
    ]
)


def numbered_facts(request: ChatRequest) -> str:
    """The reply a model writes to the numbered call, whichever call it is asked."""
    return REPLY


def _options(**facts: object) -> IngestOptions:
    return replace(IngestOptions(), facts=replace(FactOptions(), **facts))


async def _ingest(
    store: EmbeddedStore, embedder: HashEmbedder, options: IngestOptions
) -> tuple[ScriptedLLM, object]:
    llm = ScriptedLLM({"extract_entities": NAMES, "extract_facts": numbered_facts})
    ingestor = Ingestor(store, llm, embedder, options)
    result = await ingestor.add_episode(EpisodeInput(MESSAGE, group_id="g", reference_time=T0))
    return llm, result


async def test_numbered_lines_build_the_facts_their_numbers_and_sentences_say(
    store: EmbeddedStore, embedder: HashEmbedder
) -> None:
    llm, result = await _ingest(store, embedder, _options(line_format="numbered"))
    assert result.ok  # type: ignore[attr-defined]
    names = {e.uuid: e.name for e in result.entities}  # type: ignore[attr-defined]
    built = {
        (names[f.source_uuid], f.relation, names[f.target_uuid], f.text): f.valid_at
        for f in result.facts  # type: ignore[attr-defined]
    }
    assert built == {
        ("Ann", "STARTED", "pottery class", "Ann started a pottery class last Monday"): datetime(
            2024, 2, 26, tzinfo=T0.tzinfo
        ),
        (
            "pottery class",
            "MEETS_AT",
            "community center",
            "The pottery class meets at the community center",
        ): None,
    }
    report = result.report  # type: ignore[attr-defined]
    assert report.dropped_lines == 2  # the number of no name, and the sentence the message does not say
    assert any("hallucinated" in w and "yoga" in w for w in report.warnings)
    (call,) = llm.calls_for("extract_facts")
    assert call.request.variables["names"] == "1 Ann, 2 pottery class, 3 community center"
    assert "1 2 | Ann started a pottery class last Monday" in call.request.messages[2]["content"]


async def test_the_default_bracket_call_reads_no_numbered_line(
    store: EmbeddedStore, embedder: HashEmbedder
) -> None:
    llm, result = await _ingest(store, embedder, IngestOptions())
    (call,) = llm.calls_for("extract_facts")
    assert call.request.variables["names"] == "Ann, pottery class, community center"
    assert result.facts == []  # type: ignore[attr-defined]


def test_an_unknown_line_format_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="line_format must be one of brackets, numbered, not 'numbers'"):
        FactOptions(line_format="numbers")  # type: ignore[arg-type]
