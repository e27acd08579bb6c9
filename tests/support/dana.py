"""The world of issue 63: "Dana works at Acme" said in 2023, "Dana left Acme and joined Initech" in
2024, written as records (no model) so every door can be asked about it as of 2023-06-01.

Dana's alias "Dana S." is said only in 2024, her summary ("Dana works at Initech.") is written from
the 2024 episode, Initech is first named then (with a fact dated back to 2021, so a fact valid as of
2023 names it), and Hooli was made by hand in March 2023 (no episode mentions it).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from epigraph.graph.model import Entity, Episode, Fact
from epigraph.graph.store import GraphStore
from tests.support.records import make_entity, make_episode, make_fact, vec, write_of

SAID_2023 = datetime(2023, 1, 10, tzinfo=UTC)
RECORDED_2023 = datetime(2023, 2, 1, tzinfo=UTC)
SAID_2024 = datetime(2024, 3, 1, tzinfo=UTC)
RECORDED_2024 = datetime(2024, 4, 1, tzinfo=UTC)
HOOLI_MADE = datetime(2023, 3, 1, tzinfo=UTC)
ASKED = datetime(2023, 6, 1, tzinfo=UTC)
"""The time asked: after the 2023 episode (said and recorded), before the 2024 one."""
DANA_SUMMARY = "Dana works at Initech."


@dataclass(frozen=True)
class Dana:
    group_id: str
    dana: Entity
    acme: Entity
    initech: Entity
    hooli: Entity
    first: Episode
    second: Episode
    facts: tuple[Fact, ...]


async def write_dana(store: GraphStore, group: str) -> Dana:
    first = make_episode(group, "Dana: I work at Acme.", at=SAID_2023, created_at=RECORDED_2023)
    second = make_episode(
        group, "Dana S.: I left Acme and joined Initech, where I have consulted since 2021.",
        at=SAID_2024, created_at=RECORDED_2024,
    )  # fmt: skip
    dana = make_entity(group, "Dana", 1, aliases=["Dana S."], summary=DANA_SUMMARY, labels=["Person"],
                       created_at=RECORDED_2023)  # fmt: skip
    acme = make_entity(group, "Acme", 2, summary="A company Dana left.", created_at=RECORDED_2023)
    initech = make_entity(group, "Initech", 3, summary="Where Dana works.", created_at=RECORDED_2024)
    hooli = make_entity(group, "Hooli", 4, summary="Made by hand.", created_at=HOOLI_MADE)
    works = make_fact(group, dana, acme, "Dana works at Acme", [first.uuid], 5, relation="WORKS_AT",
                      valid_at=SAID_2023, created_at=RECORDED_2023)  # fmt: skip
    left = works.model_copy(update={"invalid_at": SAID_2024})
    joined = make_fact(group, dana, initech, "Dana works at Initech", [second.uuid], 6, relation="WORKS_AT",
                       valid_at=SAID_2024, created_at=RECORDED_2024)  # fmt: skip
    consults = make_fact(group, dana, initech, "Dana consults for Initech", [second.uuid], 7,
                         relation="CONSULTS_FOR", valid_at=datetime(2021, 1, 1, tzinfo=UTC),
                         created_at=RECORDED_2024)  # fmt: skip
    await store.write_episode(write_of(first, [dana.model_copy(update={"aliases": [], "summary": ""}), acme],
                                       [works]))  # fmt: skip
    await store.write_episode(write_of(second, [dana, acme, initech], [left, joined, consults]))
    by_hand = make_episode(group, "(by hand)", at=HOOLI_MADE, created_at=HOOLI_MADE)
    await store.write_episode(write_of(by_hand, [hooli], [], mentioned=[]))
    return Dana(group, dana, acme, initech, hooli, first, second, (left, joined, consults))


__all__ = ["ASKED", "DANA_SUMMARY", "Dana", "vec", "write_dana"]
