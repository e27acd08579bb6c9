"""Builds a small temporal graph in an in-memory EmbeddedStore, embedded with HashEmbedder.

Group ``g``:

- Alice LIVES_IN Paris (from 2020, learned 2020-02) -> Berlin (from 2021, learned 2021-02, retires Paris)
  -> Rome (from 2022, learned 2022-02, retires Berlin): a fact that changed twice;
- Alice WORKS_AT Acme (3 supporting episodes), Bob WORKS_AT Globex, Alice KNOWS Bob, Bob LIVES_IN Berlin,
  Carol (alias "Caz") KNOWS Bob.

Group ``other``: its own Alice LIVES_IN Paris, to prove that nothing crosses groups.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

from epigraph.graph.embedded import EmbeddedStore
from epigraph.graph.model import Entity, Episode, Fact, Mention
from epigraph.graph.store import EpisodeWrite
from epigraph.graph.temporal import apply_contradiction
from epigraph.testing import HashEmbedder

DIM = 64


def t(year: int, month: int = 1, day: int = 1) -> datetime:
    return datetime(year, month, day, tzinfo=UTC)


@dataclass
class Graph:
    store: EmbeddedStore
    embedder: HashEmbedder
    entities: dict[str, Entity] = field(default_factory=dict)
    facts: dict[str, Fact] = field(default_factory=dict)
    episodes: dict[str, Episode] = field(default_factory=dict)

    def e(self, key: str) -> Entity:
        return self.entities[key]

    def f(self, key: str) -> Fact:
        return self.facts[key]


async def _embed(embedder: HashEmbedder, text: str) -> list[float]:
    return [float(x) for x in (await embedder.embed([text]))[0]]


class Builder:
    def __init__(self, graph: Graph, group_id: str) -> None:
        self.g, self.group_id = graph, group_id

    async def entity(
        self, key: str, name: str, labels: list[str], aliases: list[str] | None = None
    ) -> Entity:
        entity = Entity(
            group_id=self.group_id,
            name=name,
            labels=labels,
            aliases=aliases or [],
            summary=f"{name} is a {labels[0].lower()}.",
            name_embedding=await _embed(self.g.embedder, name),
            created_at=t(2019),
        )
        self.g.entities[key] = entity
        return entity

    async def fact(
        self,
        key: str,
        src: str,
        relation: str,
        dst: str,
        text: str,
        valid: datetime,
        learned: datetime,
        episodes: list[str],
    ) -> Fact:
        fact = Fact(
            group_id=self.group_id,
            source_uuid=self.g.e(src).uuid,
            target_uuid=self.g.e(dst).uuid,
            relation=relation,
            text=text,
            text_embedding=await _embed(self.g.embedder, text),
            valid_at=valid,
            created_at=learned,
            episodes=[self.g.episodes[k].uuid for k in episodes],
        )
        self.g.facts[key] = fact
        return fact

    async def episode(self, key: str, content: str, when: datetime) -> Episode:
        episode = Episode(
            group_id=self.group_id,
            content=content,
            reference_time=when,
            created_at=when,
            content_embedding=await _embed(self.g.embedder, content),
        )
        self.g.episodes[key] = episode
        return episode

    async def write(self, episode: str, entities: list[str], facts: list[str], mentions: list[str]) -> None:
        ep = self.g.episodes[episode]
        await self.g.store.write_episode(
            EpisodeWrite(
                episode=ep,
                entities=[self.g.e(k) for k in entities],
                facts=[self.g.f(k) for k in facts],
                mentions=[
                    Mention(group_id=self.group_id, episode_uuid=ep.uuid, entity_uuid=self.g.e(k).uuid)
                    for k in mentions
                ],
            )
        )


async def build(graph: Graph) -> None:
    b = Builder(graph, "g")
    for key, name, labels, aliases in [
        ("alice", "Alice", ["Person"], ["Ali"]),
        ("bob", "Bob", ["Person"], []),
        ("carol", "Carol", ["Person"], ["Caz"]),
        ("acme", "Acme", ["Company"], []),
        ("globex", "Globex", ["Company"], []),
        ("paris", "Paris", ["City"], []),
        ("berlin", "Berlin", ["City"], []),
        ("rome", "Rome", ["City"], []),
    ]:
        await b.entity(key, name, labels, aliases)
    await b.episode("e1", "Alice: I just moved to Paris and I work at Acme.", t(2020, 2))
    await b.episode("e2", "Alice: Acme sent me to a conference.", t(2020, 3))
    await b.episode("e3", "Alice: Still loving my job at Acme. Bob works at Globex.", t(2020, 4))
    await b.episode("e-berlin", "Alice: I moved to Berlin last month!", t(2021, 2))
    await b.episode("e-rome", "Alice: Now I live in Rome. Carol knows Bob.", t(2022, 2))
    await b.fact("paris", "alice", "LIVES_IN", "paris", "Alice lives in Paris.", t(2020), t(2020, 2), ["e1"])
    await b.fact(
        "works", "alice", "WORKS_AT", "acme", "Alice works at Acme.", t(2019), t(2020, 2), ["e1", "e2", "e3"]
    )
    await b.fact(
        "bob_works", "bob", "WORKS_AT", "globex", "Bob works at Globex.", t(2018), t(2020, 4), ["e3"]
    )
    await b.fact("knows", "alice", "KNOWS", "bob", "Alice knows Bob from work.", t(2020), t(2020, 4), ["e3"])
    await b.write("e1", ["alice", "paris", "acme"], ["paris", "works"], ["alice", "paris", "acme"])
    await b.write("e2", [], [], ["alice", "acme"])
    await b.write(
        "e3", ["bob", "globex"], ["works", "bob_works", "knows"], ["alice", "acme", "bob", "globex"]
    )
    await b.fact(
        "berlin", "alice", "LIVES_IN", "berlin", "Alice lives in Berlin.", t(2021), t(2021, 2), ["e-berlin"]
    )
    await b.fact(
        "bob_berlin", "bob", "LIVES_IN", "berlin", "Bob lives in Berlin.", t(2020), t(2021, 2), ["e-berlin"]
    )
    graph.facts["paris"] = apply_contradiction(
        graph.f("paris"), graph.f("berlin"), graph.episodes["e-berlin"].uuid, now=t(2021, 2)
    )
    await b.write("e-berlin", ["berlin"], ["paris", "berlin", "bob_berlin"], ["alice", "berlin"])
    await b.fact("rome", "alice", "LIVES_IN", "rome", "Alice lives in Rome.", t(2022), t(2022, 2), ["e-rome"])
    await b.fact("carol", "carol", "KNOWS", "bob", "Carol knows Bob.", t(2022), t(2022, 2), ["e-rome"])
    graph.facts["berlin"] = apply_contradiction(
        graph.f("berlin"), graph.f("rome"), graph.episodes["e-rome"].uuid, now=t(2022, 2)
    )
    await b.write("e-rome", ["rome", "carol"], ["berlin", "rome", "carol"], ["alice", "rome", "carol", "bob"])

    o = Builder(graph, "other")
    await o.entity("o_alice", "Alice", ["Person"])
    await o.entity("o_paris", "Paris", ["City"])
    await o.episode("o1", "Alice: I live in Paris.", t(2020))
    await o.fact(
        "o_paris", "o_alice", "LIVES_IN", "o_paris", "Alice lives in Paris.", t(2020), t(2020), ["o1"]
    )
    await o.write("o1", ["o_alice", "o_paris"], ["o_paris"], ["o_alice", "o_paris"])
