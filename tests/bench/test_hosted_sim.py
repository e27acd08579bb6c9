"""The hosted bench's simulated provider, small: its reading of a message, its answers to our pipeline
through the real client (the graph is built), its answers to Graphiti's response models, and the limit
share arithmetic."""

from __future__ import annotations

import dataclasses
import json
from datetime import UTC, datetime
from typing import Any

import pytest

from bench.performance.hosted import options_for
from bench.performance.hosted_answers import EpigraphAnswers
from bench.performance.hosted_figures import limit_share
from bench.performance.hosted_graphiti_answers import GraphitiAnswers, smallest
from bench.performance.hosted_provider import TIERS
from bench.performance.hosted_rows import stage_means
from bench.performance.hosted_world import read
from epigraph import KnowledgeGraph
from epigraph.episodes.inputs import EpisodeInput
from epigraph.graph.embedded import EmbeddedStore
from epigraph.llm import OpenAIChat
from epigraph.pipeline.options import IngestOptions
from epigraph.testing import HashEmbedder
from epigraph.testing.server import FakeOpenAIServer

TURNS = [
    ("Caroline", "I went to a LGBTQ support group yesterday and it was so powerful."),
    ("Melanie", "Wow, that's cool, Caroline! My kids loved the pottery class at the Riverside Center."),
    ("Caroline", "Thanks, Melanie! I painted the lake sunrise for my mom."),
]


def test_reading_names_the_speaker_first_and_copies_the_messages_words() -> None:
    reading = read(*TURNS[1])
    assert reading.names[0] == "Melanie"
    assert {"Caroline", "Melanie's kids", "Riverside Center"} <= set(reading.names)
    assert "Wow" not in reading.names, "a word that starts its sentence is no name"
    kids = next(f for f in reading.facts if f.target == "Melanie's kids")
    assert kids.source == "Melanie" and kids.sentence.startswith("Melanie") and kids.sentence.endswith("kids")


async def test_the_volume_answers_build_a_graph_through_the_real_client() -> None:
    answers = EpigraphAnswers([])
    async with (
        FakeOpenAIServer(answers) as srv,
        OpenAIChat(model="sim", base_url=srv.base_url, api_key="k") as llm,
        EmbeddedStore(":memory:") as store,
    ):
        async with KnowledgeGraph(store=store, llm=llm, embedder=HashEmbedder()) as kg:
            items = [
                EpisodeInput(
                    content=text, speaker=who, reference_time=datetime(2023, 5, 8, 13, i, tzinfo=UTC)
                )
                for i, (who, text) in enumerate(TURNS)
            ]
            results = await kg.add_episodes(items)
            stats = await store.stats("default")
    assert all(r.ok for r in results)
    assert stats.facts >= 4 and stats.entities >= 5
    assert answers.answered["extract_entities"] == 3 and answers.gold_calls == 0


def graphiti_body(model: str, text: str, schema: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "model": "sim",
        "messages": [
            {"role": "system", "content": "You are a helpful assistant."},
            {"role": "user", "content": text},
        ],
        "response_format": {"type": "json_schema", "json_schema": {"name": model, "schema": schema or {}}},
    }


def test_graphiti_response_models_are_answered_from_the_prompt() -> None:
    answers = GraphitiAnswers()
    message = f"<CURRENT MESSAGE>\n{TURNS[0][0]}: {TURNS[0][1]}\n</CURRENT MESSAGE>"
    entities = json.loads(answers(graphiti_body("ExtractedEntities", message)))["extracted_entities"]
    assert [e["name"] for e in entities] == ["Caroline", "LGBTQ support group"]
    assert all(e["episode_indices"] == [0] for e in entities)
    edges_prompt = (
        f"<CURRENT_MESSAGE>\n{TURNS[0][0]}: {TURNS[0][1]}\n</CURRENT_MESSAGE>\n"
        '<ENTITIES>\n[{"name": "Caroline"}, {"name": "LGBTQ support group"}]\n</ENTITIES>'
    )
    edges = json.loads(answers(graphiti_body("ExtractedEdges", edges_prompt)))["edges"]
    assert [(e["source_entity_name"], e["target_entity_name"]) for e in edges] == [
        ("Caroline", "LGBTQ support group")
    ]
    resolve = (
        '<ENTITIES>\n[{"id": 0, "name": "Caroline"}, {"id": 1, "name": "a new thing"}]\n</ENTITIES>\n'
        '<EXISTING ENTITIES>\n[{"candidate_id": 3, "name": "caroline"}]\n</EXISTING ENTITIES>'
    )
    resolutions = json.loads(answers(graphiti_body("NodeResolutions", resolve)))["entity_resolutions"]
    assert [(r["id"], r["duplicate_candidate_id"]) for r in resolutions] == [(0, 3), (1, -1)]
    same = (
        "<EXISTING FACTS>\n[{'idx': 0, 'fact': 'Caroline met Mel.'}]\n</EXISTING FACTS>\n"
        "<NEW FACT>\nCaroline met Mel.\n</NEW FACT>"
    )
    assert json.loads(answers(graphiti_body("EdgeDuplicate", same))) == {
        "duplicate_facts": [0],
        "contradicted_facts": [],
    }
    assert answers.answered == {
        "ExtractedEntities": 1,
        "ExtractedEdges": 1,
        "NodeResolutions": 1,
        "EdgeDuplicate": 1,
    }


def test_an_unknown_schema_gets_the_smallest_value_it_accepts() -> None:
    schema = {
        "type": "object",
        "properties": {
            "age": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
            "tags": {"type": "array", "items": {"type": "string"}},
            "kind": {"$ref": "#/$defs/Kind"},
            "note": {"type": "string", "default": "n/a"},
        },
        "required": ["age", "tags", "kind"],
        "$defs": {
            "Kind": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
        },
    }
    assert smallest(schema, schema) == {"age": None, "tags": [], "kind": {"name": ""}}
    assert json.loads(GraphitiAnswers()(graphiti_body("Person", "", schema))) == smallest(schema, schema)


def test_limit_share_is_of_the_allowance_plus_its_refill() -> None:
    tier = TIERS["tier1"]  # 500 RPM, 200,000 TPM
    # 60 s after the first request: the provider allowed 200,000 + 200,000 tokens and 1,000 requests
    admissions = [[0.0, 300_000, 0.0], [60.0, 60_000, 0.0]]
    share = limit_share({"admissions": admissions}, tier, end=60.0)
    assert share["tokens_share"] == 0.9 and share["requests_share"] == 0.002
    assert share["limit_share"] == 0.9 and share["tokens_binding"] == 1.0


def test_window_sets_the_named_ingest_option_or_refuses_before_a_row_runs() -> None:
    assert options_for(0) == dataclasses.replace(IngestOptions(), in_flight=1)  # sequential: one at a time
    assert options_for(8) == dataclasses.replace(IngestOptions(), in_flight=8)
    assert options_for(3, option="window") == dataclasses.replace(IngestOptions(), window=3)
    with pytest.raises(SystemExit, match="no 'not_an_option' yet"):
        options_for(3, option="not_an_option")


def test_stage_means_are_each_stages_mean_time_an_episode() -> None:
    """Where a commit's time goes: each stage's ms summed over the reports, divided by their number (a
    stage one report lacks counts as 0 there)."""
    reports = [
        dataclasses.make_dataclass("R", ["stage_ms"])({"resolve_facts": 600.0, "extract_facts": 100.0}),
        dataclasses.make_dataclass("R", ["stage_ms"])({"resolve_facts": 400.0}),
    ]
    assert stage_means(reports) == {"stage_ms.extract_facts": 50.0, "stage_ms.resolve_facts": 500.0}
    assert stage_means([]) == {}
