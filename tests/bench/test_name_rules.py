"""bench/quality/name_rules.py: each candidate rule keeps the speakers and the named entities; an
abstract head or a pro-form is refused by ``concrete``, an entity linked to a speaker kept by ``linked``,
one mentioned in two episodes kept by ``twice``, one holding any fact by ``held``."""

from __future__ import annotations

from datetime import UTC, datetime

from bench.quality.name_rules import concrete, kept_by_rule
from epigraph.graph.model import Entity, Fact

G = "g"
SAID = datetime(2023, 1, 20, tzinfo=UTC)


def _fact(a: Entity, b: Entity) -> Fact:
    return Fact(group_id=G, source_uuid=a.uuid, target_uuid=b.uuid, relation="R", text="x", stated_at=SAID)


def test_each_rule_keeps_what_it_says() -> None:
    mel, group = Entity(group_id=G, name="Melanie"), Entity(group_id=G, name="LGBTQ support group")
    courage = Entity(group_id=G, name="courage")
    kids, excitement = Entity(group_id=G, name="Melanie's kids"), Entity(group_id=G, name="excitement")
    things, advice = Entity(group_id=G, name="new things"), Entity(group_id=G, name="advice")
    entities = {e.uuid: e for e in (mel, group, kids, excitement, things, advice, courage)}
    facts = [_fact(mel, kids), _fact(mel, excitement), _fact(things, advice)]
    mentions = {advice.uuid: 2}

    kept = kept_by_rule(entities, facts, mentions, ["Melanie", "Caroline"])

    names = {rule: {entities[u].name for u in uuids} for rule, uuids in kept.items()}
    assert names["named"] == {"Melanie", "LGBTQ support group"}
    assert names["concrete"] == {"Melanie", "LGBTQ support group", "Melanie's kids", "advice", "courage"}
    assert names["linked"] == {"Melanie", "LGBTQ support group", "Melanie's kids", "excitement"}
    assert names["twice"] == {"Melanie", "LGBTQ support group", "advice"}
    assert names["concrete_or_twice"] == names["concrete"]
    assert names["held"] == names["linked"] | {"new things", "advice"}  # not "courage": it holds no fact


def test_a_concrete_head_is_neither_abstract_nor_a_pro_form() -> None:
    assert [concrete(n) for n in ("dance studio", "happiness", "old one", "acceptance", "kids")] == [
        True, False, False, False, True,
    ]  # fmt: skip
