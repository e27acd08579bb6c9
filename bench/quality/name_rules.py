"""Candidate rules for the names a person would keep, measured on a built graph (issue 59, part 2).

Each rule says whether a built entity stays; an entity it refuses takes its facts with it, and the
graph left is scored as the live bench scores the whole one (``entity_precision``, ``entity_recall``,
``fact_recall_endpoints``), so a rule's gain in precision is read beside what it costs. A post-hoc
estimate: the pipeline refusing a name at extraction could attach that fact elsewhere; the rule
chosen is measured again once built. Every rule keeps a speaker and a named entity (a word of its own
name capitalized: "LGBTQ support group", not the possessor of "Melanie's kids"):

- ``named``: nothing else;
- ``concrete``: also a thing whose head is neither abstract (a derivation ending: "excitement",
  "acceptance", "happiness") nor a pro-form ("new things", "old one");
- ``linked``: also a thing holding a fact whose other end is a speaker or a named entity;
- ``twice``: also a thing the turns mention twice or more (two episodes);
- ``concrete_or_twice``: ``concrete``, or mentioned twice;
- ``held``: also a thing holding a fact (any fact: a name with none is a node a reader learns nothing
  from).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from epigraph.graph.model import Entity, Fact
from epigraph.language import words

_ABSTRACT_ENDINGS = ("ment", "ments", "ness", "ship", "ance", "ence", "ity", "ism", "tion", "sion", "dom")
_PRO_FORMS = frozenset("thing things one ones stuff something anything everything way ways lot lots".split())

Rule = Callable[[Entity, "Graph"], bool]


class Graph:
    """What the rules read: the built entities (uuid -> entity) and facts, each entity's mentions (how
    many episodes named it), the speakers."""

    def __init__(
        self,
        entities: Mapping[str, Entity],
        facts: Sequence[Fact],
        mentions: Mapping[str, int],
        speakers: Sequence[str],
    ) -> None:
        self.entities, self.facts = entities, facts
        self.mentions = mentions
        self.speakers = {s.casefold() for s in speakers}

    def named(self, entity: Entity) -> bool:
        if entity.name.casefold() in self.speakers:
            return True
        owned = entity.name.split("'s ", 1)[-1]  # "Melanie's kids": the kids' own name
        return any(w[:1].isupper() for w in owned.split())

    def other_ends(self, entity: Entity) -> list[Entity]:
        ends = []
        for fact in self.facts:
            if entity.uuid in (fact.source_uuid, fact.target_uuid):
                other = fact.target_uuid if fact.source_uuid == entity.uuid else fact.source_uuid
                if other in self.entities:
                    ends.append(self.entities[other])
        return ends


def concrete(name: str) -> bool:
    """Whether a name's head (its last word) is neither abstract nor a pro-form."""
    said = words(name)
    if not said:
        return False
    head = said[-1]
    return head not in _PRO_FORMS and not (len(head) > 5 and head.endswith(_ABSTRACT_ENDINGS))


RULES: dict[str, Rule] = {
    "named": lambda e, g: g.named(e),
    "concrete": lambda e, g: g.named(e) or concrete(e.name),
    "linked": lambda e, g: g.named(e) or any(g.named(o) for o in g.other_ends(e)),
    "twice": lambda e, g: g.named(e) or g.mentions.get(e.uuid, 0) >= 2,
    "concrete_or_twice": lambda e, g: g.named(e) or concrete(e.name) or g.mentions.get(e.uuid, 0) >= 2,
    "held": lambda e, g: g.named(e) or bool(g.other_ends(e)),
}


def kept_by_rule(
    entities: Mapping[str, Entity],
    facts: Sequence[Fact],
    mentions: Mapping[str, int],
    speakers: Sequence[str],
) -> dict[str, set[str]]:
    """Each rule of :data:`RULES` -> the uuids of the entities it keeps."""
    graph = Graph(entities, facts, mentions, speakers)
    return {name: {u for u, e in entities.items() if rule(e, graph)} for name, rule in RULES.items()}
