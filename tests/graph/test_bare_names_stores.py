"""Bare names resolved without a model (``NameOptions.bare_names``) on both stores: the speaker's own
thing found by exact name, and the one longer name a bare noun heads found among the store's BM25
candidates."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from epigraph.episodes.inputs import EpisodeInput
from epigraph.graph.store import GraphStore
from epigraph.ingestion.ingestor import Ingestor
from epigraph.pipeline.options import FactOptions, IngestOptions, NameOptions
from epigraph.prompts.extraction import ExtractionInput
from epigraph.prompts.fact_lines import write_fact
from epigraph.prompts.protocol import ChatRequest
from epigraph.testing import HashEmbedder, ScriptedLLM, ScriptedReply
from tests.support.stores import DIM

T0 = datetime(2024, 3, 1, 12, 0, tzinfo=UTC)
LINES = {
    "Caroline: I went to a LGBTQ support group yesterday.": (
        "LGBTQ support group",
        "Caroline went to a LGBTQ support group.",
    ),
    "Jon: I'm starting my own business.": ("business", "Jon is starting a business."),
    "Melanie: So cool you found such a helpful group.": ("group", "Melanie finds the group helpful."),
    "Jon: The business is going well.": ("business", "Jon's business is going well."),
}


def _answer(request: ChatRequest) -> ScriptedReply:
    content = ExtractionInput.model_validate(request.variables).content()
    speaker = content.split(":")[0]
    name, sentence = LINES[content]
    if request.prompt_name == "extract_entities":
        return ScriptedReply(f"{speaker}\n{name}")
    return ScriptedReply(write_fact(sentence, speaker, name, "SAID", ""))


async def test_bare_names_reach_the_full_name_on_either_store(store: GraphStore, group: str) -> None:
    ingestor = Ingestor(
        store,
        ScriptedLLM(_answer),
        HashEmbedder(dim=DIM),
        IngestOptions(names=NameOptions(bare_names=True), facts=FactOptions(resolve=False)),
    )
    results = [
        await ingestor.add_episode(
            EpisodeInput(text, group_id=group, reference_time=T0 + timedelta(minutes=i))
        )
        for i, text in enumerate(LINES)
    ]
    names = [sorted(e.name for e in r.entities) for r in results]
    assert names == [
        ["Caroline", "LGBTQ support group"],
        ["Jon", "Jon's business"],
        ["LGBTQ support group", "Melanie"],
        ["Jon", "Jon's business"],
    ]
    (support,) = [e for e in results[2].entities if e.name == "LGBTQ support group"]
    assert support.aliases == ["group"]
    assert results[3].facts[0].target_uuid == next(e.uuid for e in results[1].entities if e.name != "Jon")
