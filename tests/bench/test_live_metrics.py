"""bench/_live_metrics.py: a gold restatement counts as merged only when the built fact matching the
first statement also carries the restating turn's episode (a fact written again as new is not)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from epigraph.graph.model import Entity, Fact
from epigraph.testing import HashEmbedder

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from _gold import GoldSet
from _live_metrics import Built, fact_quality

G = "g"
FIRST = "Jon started a dance studio."
AGAIN = "Jon is starting his dance studio."


def _gold() -> dict[str, Any]:
    def turn(fact: dict[str, Any]) -> dict[str, Any]:
        return {"entities": [{"name": "Jon"}, {"name": "dance studio"}], "facts": [fact]}

    return {
        "turns": {
            "D1:1": turn({"id": "D1:1#1", "source": "Jon", "target": "dance studio", "fact": FIRST}),
            "D1:2": turn(
                {
                    "id": "D1:2#1",
                    "source": "Jon",
                    "target": "dance studio",
                    "fact": AGAIN,
                    "duplicate_of": ["D1:1#1"],
                }
            ),
        }
    }


async def _restatements(facts_episodes: list[list[str]]) -> tuple[float, float]:
    jon, studio = Entity(group_id=G, name="Jon"), Entity(group_id=G, name="dance studio")
    facts = [
        Fact(
            group_id=G,
            source_uuid=jon.uuid,
            target_uuid=studio.uuid,
            relation="STARTED",
            text=FIRST,
            episodes=e,
        )
        for e in facts_episodes
    ]
    gold = _gold()
    built = Built({jon.uuid: jon, studio.uuid: studio}, facts)
    metrics = await fact_quality(
        GoldSet(G, gold, []),
        list(gold["turns"].values()),
        built,
        HashEmbedder(),
        0.99,
        {"D1:1": "e1", "D1:2": "e2"},
    )
    return metrics["restatements_expected"], metrics["restatements_merged"]


async def test_a_restatement_is_merged_when_the_first_facts_provenance_holds_its_turn() -> None:
    assert await _restatements([["e1", "e2"]]) == (1, 1)


async def test_a_restatement_written_again_as_a_new_fact_is_not_merged() -> None:
    assert await _restatements([["e1"], ["e2"]]) == (1, 0)
