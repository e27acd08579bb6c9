"""Graphs the export and load tests move between stores: the quickstart conversation (its recorded
answers) and the tiny LoCoMo file of the CLI tests imported through its detected mapping (scripted
answers below), each with corrections by hand on top."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from epigraph import KnowledgeGraph
from epigraph.episodes.inputs import EpisodeInput
from epigraph.importers.plan import iter_inputs, plan_without_llm
from epigraph.prompts.fact_lines import time_words, write_fact
from epigraph.prompts.grammar import NONE
from epigraph.prompts.protocol import ChatRequest
from epigraph.prompts.resolve_episode import verdict_line
from epigraph.testing import ScriptedLLM
from epigraph.testing.overview import OVERVIEW_SCRIPT
from tests.support.quickstart import ingest_quickstart

LOCOMO = Path(__file__).resolve().parents[1] / "cli" / "locomo_tiny.json"

# per turn of locomo_tiny.json: its entities and facts (source, target, relation, sentence, valid_at)
TURNS: dict[str, tuple[list[str], list[tuple[str, str, str, str, str | None]]]] = {
    "Noah! I finally finished my first marathon.": (
        ["Mia", "Noah", "marathon"],
        [("Mia", "marathon", "FINISHED", "Mia finished her first marathon.", "2023-03-03T09:15:00Z")],
    ),
    "Amazing. I just adopted a cat called Pixel.": (
        ["Noah", "Pixel"],
        [("Noah", "Pixel", "ADOPTED", "Noah adopted a cat called Pixel.", "2023-03-03T09:15:00Z")],
    ),
    "Send me a photo of Pixel!": (["Mia", "Pixel"], []),
    "Pixel knocked my plant over again.": (
        ["Noah", "Pixel", "plant"],
        [("Pixel", "plant", "KNOCKED_OVER", "Pixel knocked Noah's plant over.", None)],
    ),
    "I signed up for the Lisbon marathon in October.": (
        ["Mia", "Lisbon marathon"],
        [("Mia", "Lisbon marathon", "SIGNED_UP_FOR", "Mia signed up for the Lisbon marathon.", None)],
    ),
}


def _turn(variables: Mapping[str, Any]) -> tuple[list[str], list[tuple[str, str, str, str, str | None]]]:
    return TURNS[str(variables["message"]).strip()]


def _fact_lines(facts: list[tuple[str, str, str, str, str | None]]) -> list[str]:
    return [
        write_fact(sentence, s, t, relation, time_words(valid_at))
        for s, t, relation, sentence, valid_at in facts
    ]


def locomo_reply(request: ChatRequest) -> str:
    """The scripted answers of the tiny LoCoMo conversation, in the prompts' line formats (unknown
    names resolve as new)."""
    v = request.variables
    name = request.prompt_name
    if name == "extract_entities":
        return "; ".join(_turn(v)[0]) or NONE
    if name == "extract_facts":
        return "\n".join(_fact_lines(_turn(v)[1])) or NONE
    if name == "extract_combined":
        entities, facts = _turn(v)
        named = {n for s, t, *_ in facts for n in (s, t)}
        return "\n".join(_fact_lines(facts) + [f"[{n}]" for n in entities if n not in named]) or NONE
    if name == "resolve_episode":
        lines = [f"{q['id']} new" for q in v["entities"]] + [verdict_line(f["id"]) for f in v["facts"]]
        return "\n".join(lines)
    if name in OVERVIEW_SCRIPT:  # communities and conversation summaries
        return str(OVERVIEW_SCRIPT[name](request))
    if name == "summarize_entities":
        return json.dumps({"summaries": [{"id": e["id"], "summary": e["name"] + "."} for e in v["entities"]]})
    raise AssertionError(f"unexpected prompt {name}")


def locomo_inputs(group_id: str) -> list[EpisodeInput]:
    plan = plan_without_llm(LOCOMO, "auto", group_id=group_id)
    return [item for item in iter_inputs(plan) if isinstance(item, EpisodeInput)]


async def ingest_locomo(kg: KnowledgeGraph) -> None:
    results = await kg.add_episodes(locomo_inputs(kg.group_id))
    assert len(results) == 5 and all(r.ok for r in results), [r.error for r in results]


async def quickstart_with_corrections(kg: KnowledgeGraph) -> None:
    """The quickstart graph, then a fact added by hand, a merge and its undo, a retirement; then its
    communities."""
    await ingest_quickstart(kg)
    await kg.corrections.add_fact("Bob", "knows", "Carol", valid_at="2001-09-01", author="alice")
    merge = await kg.corrections.merge_entities("Globex", "Acme", author="alice")
    await kg.corrections.undo(merge.uuid, author="bob")
    sorbonne = next(iter((await kg.entity("Sorbonne")).current))
    await kg.corrections.retire_fact(sorbonne.uuid, at="2024-05-01", author="alice", reason="he retired")
    await kg.overview.build_communities()


async def locomo_with_corrections(kg: KnowledgeGraph) -> None:
    """The tiny LoCoMo graph (its conversation summarized), then a rename and a merge; then its
    communities."""
    await ingest_locomo(kg)
    await kg.corrections.rename_entity("Pixel", "Pixel the cat", author="mia")
    await kg.corrections.merge_entities("Lisbon marathon", "marathon", author="mia", reason="one marathon")
    await kg.overview.build_communities()  # the conversation's summary was folded by the ingestion itself


BUILDERS = {
    "quickstart": (quickstart_with_corrections, None),
    "locomo": (locomo_with_corrections, locomo_reply),
}


def llm_for(name: str) -> ScriptedLLM:
    from tests.support.quickstart import quickstart_llm

    reply = BUILDERS[name][1]
    return quickstart_llm() if reply is None else ScriptedLLM(reply)
