"""A small group to forget someone in, written straight into a store (no model): Zaria Quillfeather
(alias Zaria), married to Bob, in three episodes of two conversations with Carol, Lyon, Acme and
Biscuit the dog; retired facts on both sides of her, two corrections by hand (one about her, one that
only names her), a community around her and two conversation summaries that name her.

Also the two probes every forgetting test ends with: where the name is still found in a store's bytes
(the SQLite file and its WAL) or in any label or property of any Neo4j node or relationship.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

from epigraph.embed import Embedder
from epigraph.graph.corrections import Correction, CorrectionOp, GraphSlice, new_correction_uuid
from epigraph.graph.decisions import DecisionRecord, Step
from epigraph.graph.derived import Community, ConversationSummary
from epigraph.graph.forget_plan import ForgetPlan, plan_forgetting
from epigraph.graph.forgetting import ForgetRequest, subject_hash
from epigraph.graph.model import Entity, Episode, EpisodeStatus, Fact, Invalidation, Mention
from epigraph.graph.store import EpisodeWrite, ForgetStore, GraphStore

NAME, ALIAS = "Zaria Quillfeather", "Zaria"
NEEDLES = ("zaria", "quillfeather")
"""What no byte, property or line may hold afterwards (case-insensitive)."""
T0 = datetime(2024, 3, 1, 9, 0, tzinfo=UTC)


@dataclass
class World:
    group: str
    zaria: Entity
    bob: Entity
    carol: Entity
    lyon: Entity
    acme: Entity
    biscuit: Entity
    e1: Episode
    e2: Episode
    e3: Episode
    facts: dict[str, Fact]
    corrections: dict[str, Correction]
    community: Community

    def fact(self, name: str) -> Fact:
        return self.facts[name]


async def _vector(embedder: Embedder, text: str) -> list[float]:
    return [float(x) for x in (await embedder.embed([text]))[0]]


async def build(store: GraphStore, group: str, embedder: Embedder) -> World:
    """Write the world into ``store`` (see the module docstring)."""

    async def entity(name: str, summary: str = "", aliases: tuple[str, ...] = ()) -> Entity:
        return Entity(
            group_id=group,
            name=name,
            aliases=list(aliases),
            summary=summary,
            labels=["Person"] if name in (NAME, "Bob", "Carol") else [],
            name_embedding=await _vector(embedder, name),
        )

    zaria = await entity(NAME, "Zaria Quillfeather is a nurse in Lyon.", (ALIAS,))
    bob = await entity("Bob", "Bob is married to Zaria.")
    carol, lyon = await entity("Carol", "Carol lives in Lyon."), await entity("Lyon")
    acme, biscuit = await entity("Acme"), await entity("Biscuit", "Biscuit is Zaria's dog.")

    def episode(text: str, source: str, hours: int) -> Episode:
        return Episode(
            group_id=group,
            content=text,
            source_description=source,
            status=EpisodeStatus.DONE,
            reference_time=T0 + timedelta(hours=hours),
            name=f"turn {hours}",
        )

    e1 = episode("Bob: I married Zaria Quillfeather last spring. Carol moved to Lyon.", "chat-1", 0)
    e2 = episode("Carol: I started at Acme this week.", "chat-1", 1)
    e3 = episode("Bob: Zaria and I adopted Biscuit. I met Carol at Zaria's party.", "chat-2", 2)

    async def fact(src: Entity, rel: str, dst: Entity, text: str, *episodes: Episode) -> Fact:
        return Fact(
            group_id=group,
            source_uuid=src.uuid,
            target_uuid=dst.uuid,
            relation=rel,
            text=text,
            episodes=[e.uuid for e in episodes],
            text_embedding=await _vector(embedder, text),
            stated_at=min(e.reference_time for e in episodes),
        )

    married = await fact(bob, "MARRIED_TO", zaria, "Bob is married to Zaria.", e1)
    dating = await fact(bob, "DATES", carol, "Bob is dating Carol.", e1)
    dating = _retired(dating, married, e1)
    worked = await fact(zaria, "WORKS_IN", acme, "Zaria worked at Acme.", e1)
    nurse = await fact(zaria, "WORKS_IN", lyon, "Zaria Quillfeather works as a nurse in Lyon.", e1)
    worked = _retired(worked, nurse, e1)
    facts = {
        "married": married,
        "dating": dating,
        "worked": worked,
        "nurse": nurse,
        "carol_lyon": await fact(carol, "LIVES_IN", lyon, "Carol lives in Lyon.", e1),
        "acme": await fact(carol, "WORKS_AT", acme, "Carol works at Acme.", e2),
        "party": await fact(bob, "MET", carol, "Bob met Carol at Zaria's party.", e3),
        "biscuit": await fact(bob, "OWNS", biscuit, "Bob and Zaria adopted Biscuit.", e3),
        "biscuit_bob": await fact(biscuit, "LIVES_WITH", bob, "Biscuit lives with Bob.", e1, e3),
    }
    everyone = (zaria, bob, carol, lyon, acme, biscuit)
    mentions = (
        (e1, (zaria, bob, carol, lyon, biscuit)),
        (e2, (carol, acme)),
        (e3, (zaria, bob, biscuit, carol)),
    )
    for ep, named in mentions:
        stated = [f for f in facts.values() if ep.uuid in f.episodes]
        await store.write_episode(
            EpisodeWrite(
                episode=ep,
                entities=list(everyone),
                facts=stated,
                mentions=[Mention(group_id=group, episode_uuid=ep.uuid, entity_uuid=e.uuid) for e in named],
                decisions=_decisions(ep, [f for f in stated if f.source_uuid == zaria.uuid] or stated),
            )
        )
    corrections = {
        "names_her": await _added_by_hand(
            store, embedder, group, bob, carol, "Bob and Carol plan Zaria's birthday.", "told by Zaria"
        ),
        "about_her": await _added_by_hand(store, embedder, group, zaria, carol, "Zaria knows Carol.", ""),
    }
    community = Community(
        group_id=group,
        name="Zaria's circle",
        summary="Friends around Zaria Quillfeather.",
        members=[bob.uuid, zaria.uuid, carol.uuid],
        summarized="x",
        embedding=await _vector(embedder, "Zaria's circle"),
    )
    views = store
    await views.replace_communities(group, [community])  # type: ignore[attr-defined]
    for key, text in (
        ("chat-1", "Bob married Zaria; Carol moved."),
        ("chat-2", "Zaria and Bob adopted a dog."),
    ):
        summary = ConversationSummary(group_id=group, key=key, summary=text, episodes=1, version=1)
        assert await views.save_conversation_summary(summary)  # type: ignore[attr-defined]
    return World(group, zaria, bob, carol, lyon, acme, biscuit, e1, e2, e3, facts, corrections, community)


def _decisions(ep: Episode, facts: list[Fact]) -> DecisionRecord:
    """The episode's decision record: its names as the reply proposed them (one refused, one repaired),
    its facts kept with the words that dated them, and the reply's lines: her name in every text field a
    step has, wherever the episode names her."""
    said = (NAME, "Bob", "Carol", "Lyon", "Acme", "Biscuit", ALIAS)
    names = [n for n in said if n in ep.content and not (n == ALIAS and NAME in ep.content)]
    steps = [Step(stage="name", act="new", subject=n) for n in names]
    if ALIAS in ep.content:
        why = "not in Zaria's turn"
        steps.append(Step(stage="name", act="refused", subject="Zaria Q", by="grounded", why=why))
        steps.append(Step(stage="name", act="repaired", subject="zaria quill", by="spelling", became=NAME))
    steps += [
        Step(
            stage="fact",
            act="new",
            subject=f.text,
            by="no_candidates",
            ids=(f.uuid,),
            line=i,
            dated="last spring" if "spring" in ep.content else "",
        )
        for i, f in enumerate(facts, 1)
    ]
    return DecisionRecord(
        group_id=ep.group_id,
        episode_uuid=ep.uuid,
        created_at=ep.reference_time,
        steps=tuple(steps),
        texts=tuple(f"[{n}] said" for n in names),
    )


def _retired(fact: Fact, by: Fact, episode: Episode) -> Fact:
    """``fact`` retired by ``by`` when ``episode`` was said."""
    invalidation = Invalidation(fact_uuid=by.uuid, episode_uuid=episode.uuid)
    when = episode.reference_time
    return fact.model_copy(update={"invalid_at": when, "expired_at": when, "invalidated_by": invalidation})


async def _added_by_hand(
    store: GraphStore, embedder: Embedder, group: str, a: Entity, b: Entity, text: str, reason: str
) -> Correction:
    uuid = new_correction_uuid()
    fact = Fact(
        group_id=group,
        source_uuid=a.uuid,
        target_uuid=b.uuid,
        relation="KNOWS",
        text=text,
        text_embedding=await _vector(embedder, text),
        attributes={"source": "person:mia", "correction": uuid},
    )
    correction = Correction(
        uuid=uuid,
        group_id=group,
        operation=CorrectionOp.ADD_FACT,
        author="person:mia",
        reason=reason,
        after=GraphSlice(facts=[fact]),
    )
    await store.apply_correction(correction)  # type: ignore[attr-defined]
    return correction


def request(world: World, **changes: object) -> ForgetRequest:
    """Forgetting Zaria (her name and alias), now."""
    base = ForgetRequest(
        group_id=world.group,
        now=datetime.now(UTC),
        entities=(world.zaria.uuid,),
        names=(NAME, ALIAS),
        subject=subject_hash(NAME),
    )
    return replace(base, **changes)  # type: ignore[arg-type]


async def preview(store: ForgetStore, req: ForgetRequest) -> ForgetPlan:
    """The plan over a dump of the group and its vault's values, as ``kg.forget`` previews it."""
    items = [item async for item in store.dump([req.group_id])]
    return plan_forgetting(items, req, await store.held_placeholders(req.group_id))


async def applied(
    store: GraphStore, embedder: Embedder, req: ForgetRequest, plan: ForgetPlan
) -> ForgetRequest:
    """``req`` with the embeddings of the plan's texts and its digest: ready for ``store.forget``."""
    rows = await embedder.embed(list(plan.texts)) if plan.texts else []
    vectors = {t: [float(x) for x in row] for t, row in zip(plan.texts, rows, strict=True)}
    return replace(req, vectors=vectors, expect=plan.digest)


def found_in_files(path: Path) -> dict[str, int]:
    """How often each needle is in the SQLite file and its WAL, as bytes (case-insensitive)."""
    data = b"".join(p.read_bytes() for p in (path, Path(f"{path}-wal")) if p.exists())
    return {n: len(re.findall(re.escape(n.encode()), data, re.IGNORECASE)) for n in NEEDLES}


NEO4J_SCAN = """
CALL () {
  MATCH (n) RETURN labels(n) AS labels, properties(n) AS props
  UNION ALL
  MATCH ()-[r]->() RETURN [type(r)] AS labels, properties(r) AS props
}
WITH labels, props
WHERE any(l IN labels WHERE any(x IN $needles WHERE toLower(l) CONTAINS x))
   OR any(k IN keys(props) WHERE any(x IN $needles WHERE toLower(k) CONTAINS x
      OR CASE WHEN valueType(props[k]) STARTS WITH 'LIST'
              THEN any(v IN props[k] WHERE toLower(toString(v)) CONTAINS x)
              ELSE toLower(toString(props[k])) CONTAINS x END))
RETURN labels, props.group_id AS group_id, props.uuid AS uuid
"""
"""Every node and relationship of the whole database whose labels (type), property names or values
(list items too) hold a needle, case-insensitive."""
