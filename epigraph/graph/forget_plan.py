"""The plan of a forgetting: from one group's records and a :class:`~.forgetting.ForgetRequest`, what
goes, what is rewritten, and a digest of it. Pure: the preview runs it over a dump, and a store runs it
again inside its transaction over what it reads there, so what is applied is what was previewed (the
store refuses a plan whose digest is not the preview's).

What goes:

- the subjects (``request.entities``), with every fact that has one as an end, current or retired;
- the episodes deleted: ``request.episodes`` (retention), and with ``mentioning="delete"`` every
  episode that mentions a subject or names one (``request.names``, found by ``scrub.Scrubber``); facts
  that only deleted episodes state go with them, the others lose those episodes from their provenance
  (an undated fact's start moves with its earliest statement); entities that only deleted episodes
  mentioned go too (unless a fact added by hand touches them), with their facts, as ``delete_episode``
  decides for one episode;
- the corrections by hand that touch anything removed (an undo would bring it back);
- the decision records of the episodes deleted (``graph.decisions``: a record goes with its episode).

What is rewritten, every name replaced by the placeholder: the episodes that name a subject
(``mentioning="redact"``: content, name, source, error and report; the other subjects' facts they
stated are kept), the facts, entities (names, aliases, attributes), communities, corrections and the
kept episodes' decision records (each step's texts, the reply's lines) that name it. Derived text is
rebuilt, not patched: an entity touched (an end of a removed or reworded fact, or naming the subject)
gets the summary composed from its current facts (``derived.compose_summary``; marked owed when it has
more than ``compose_max`` of them, so a model writes it after the commit); a
community that lost a member or names the subject keeps its scrubbed name, loses its summary and is
left stale (the overview summarizes it again); a conversation summary of a chain that lost or changed an
episode, or that names the subject, is dropped (folded again from the episodes that stay).

Facts retired by a removed fact or a deleted episode stay retired (``kept_retired``): forgetting takes
data out, it does not make the graph believe again what the world had changed.

The redaction vault (``RedactionVault``): a placeholder of redacted personal data (``<PHONE_3>``) that
some text of the group held before and no text that stays holds afterwards (every text field of every
record, ``texts.texts_of``) has its value taken out of the vault (``vault_freed``: the digest and the
sealed original; the number stays reserved, so no other value is ever given it). Only the vault's rows
that hold a value are candidates (``held``, which the store reads in its transaction); a placeholder no
stored text held before (an episode still on its way, numbered by a producer) is left alone.
"""

from __future__ import annotations

import hashlib
import json
import uuid as uuidlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from pydantic import BaseModel

from ..errors import ConflictError
from .corrections import Correction, GraphSlice
from .decisions import DecisionRecord
from .derived import Community, ConversationSummary, chain_key, community_text, compose_summary
from .forgetting import RECORD_PREFIX, ForgetRecord, ForgetRequest, ForgetWrite
from .model import Entity, Episode, Fact, Mention, content_hash
from .placeholders import placeholders_in
from .scrub import Scrubber
from .store_records import DumpItem
from .temporal import first_stated, is_current
from .texts import texts_of

_RECORD_NAMESPACE = uuidlib.UUID("2b9c6f0e-5d8a-4f61-9a0e-7c3d1e4b8f52")

Kind = str
"""``episode``, ``entity``, ``fact`` or ``community``: what a rewritten record with a vector is."""


@dataclass(slots=True)
class _Group:
    """One group's records, by uuid (a dump's items)."""

    episodes: dict[str, Episode] = field(default_factory=dict)
    entities: dict[str, Entity] = field(default_factory=dict)
    facts: dict[str, Fact] = field(default_factory=dict)
    mentioned: dict[str, set[str]] = field(default_factory=dict)
    """Episode uuid -> the entities it mentions."""
    corrections: list[Correction] = field(default_factory=list)
    communities: list[Community] = field(default_factory=list)
    summaries: list[ConversationSummary] = field(default_factory=list)
    decisions: list[DecisionRecord] = field(default_factory=list)

    @classmethod
    def of(cls, items: Iterable[DumpItem], group_id: str) -> _Group:
        group = cls()
        for item in items:
            if getattr(item, "group_id", None) != group_id:
                continue
            if isinstance(item, Episode):
                group.episodes[item.uuid] = item
            elif isinstance(item, Entity):
                group.entities[item.uuid] = item
            elif isinstance(item, Fact):
                group.facts[item.uuid] = item
            elif isinstance(item, Mention):
                group.mentioned.setdefault(item.episode_uuid, set()).add(item.entity_uuid)
            elif isinstance(item, Correction):
                group.corrections.append(item)
            elif isinstance(item, Community):
                group.communities.append(item)
            elif isinstance(item, ConversationSummary):
                group.summaries.append(item)
            elif isinstance(item, DecisionRecord):
                group.decisions.append(item)
        return group


@dataclass(frozen=True, slots=True)
class ForgetPlan:
    """A forgetting planned: the write (records without embeddings), which rewritten records' embedded
    text changed (``reembed``: (kind, uuid)), the texts to embed for them, the ids and counts of what
    goes or is rewritten, and the digest that names the plan."""

    write: ForgetWrite
    reembed: frozenset[tuple[Kind, str]]
    texts: tuple[str, ...]
    ids: dict[str, list[str]]
    counts: dict[str, int]
    digest: str
    conversations: tuple[str, ...]
    """The chains (keys as they are afterwards) whose summaries were dropped and still have episodes."""

    @property
    def empty(self) -> bool:
        """Nothing to forget (no record goes or changes)."""
        return not any(self.ids.values())

    def rewritten(self) -> dict[Kind, list[str]]:
        """The uuids of the rewritten records by kind: the store reads their stored embeddings."""
        w = self.write
        return {
            "episode": [e.uuid for e in w.episodes],
            "entity": [e.uuid for e in w.entities],
            "fact": [f.uuid for f in w.facts],
            "community": [c.uuid for c in w.communities or ()],
        }

    def with_vectors(
        self,
        stored: Mapping[tuple[Kind, str], Sequence[float] | None],
        vectors: Mapping[str, Sequence[float]],
    ) -> ForgetWrite:
        """The write with each rewritten record's embedding: the stored one (``stored``, by kind and
        uuid), or, where its embedded text changed, the one ``vectors`` gives for the new text; none
        where it had none. ConflictError when a needed one is not given (the plan is not the one its
        texts were embedded for)."""

        def vector(kind: Kind, uuid: str, text: str) -> list[float] | None:
            old = stored.get((kind, uuid))
            if old is None:
                return None
            if (kind, uuid) not in self.reembed:
                return list(old)
            if text not in vectors:
                raise ConflictError(
                    "a rewritten text has no embedding: the group changed since the forgetting was "
                    "previewed; nothing was written (preview it again)"
                )
            return [float(x) for x in vectors[text]]

        w = self.write
        communities = None if w.communities is None else tuple(
            c.model_copy(update={"embedding": vector("community", c.uuid, community_text(c.name, c.summary))})
            for c in w.communities
        )  # fmt: skip
        return replace(
            w,
            episodes=tuple(
                e.model_copy(update={"content_embedding": vector("episode", e.uuid, e.content)})
                for e in w.episodes
            ),
            entities=tuple(
                e.model_copy(update={"name_embedding": vector("entity", e.uuid, e.name)}) for e in w.entities
            ),
            facts=tuple(
                f.model_copy(update={"text_embedding": vector("fact", f.uuid, f.text)}) for f in w.facts
            ),
            communities=communities,
        )


def plan_forgetting(
    items: Iterable[DumpItem], request: ForgetRequest, held: Iterable[tuple[str, int]] = ()
) -> ForgetPlan:
    """The plan of ``request`` over the group's records ``items`` and the ``(kind, number)``
    placeholders its redaction vault holds a value for (``held``; see the module docstring)."""
    return _Planner(_Group.of(items, request.group_id), request, held).plan()


class _Planner:
    def __init__(self, group: _Group, request: ForgetRequest, held: Iterable[tuple[str, int]]) -> None:
        self.g = group
        self.request = request
        self.held = set(held)
        self.scrub = Scrubber(request.names, request.placeholder)
        self.subjects = set(request.entities) & group.entities.keys()
        self.reembed: set[tuple[Kind, str]] = set()

    def plan(self) -> ForgetPlan:
        g, request = self.g, self.request
        naming = {
            uuid
            for uuid, ep in g.episodes.items()
            if g.mentioned.get(uuid, set()) & self.subjects or self._names_in_episode(ep)
        }
        deleted = set(request.episodes) & g.episodes.keys()
        if request.mentioning == "delete":
            deleted |= naming
        removed, orphans = self._removed_facts(deleted)
        gone_entities = self.subjects | orphans
        facts, redacted_facts, detached = self._kept_facts(removed, deleted)
        final = {**{u: f for u, f in g.facts.items() if u not in removed}, **{f.uuid: f for f in facts}}
        touched = self._touched(removed, redacted_facts, gone_entities)
        entities, owed = self._kept_entities(gone_entities, touched, final)
        episodes = self._redacted_episodes(naming - deleted)
        communities, dissolved, rewritten_communities = self._communities(gone_entities)
        dropped, refold = self._conversations(deleted, episodes)
        deleted_corrections, corrections = self._corrections(gone_entities | set(removed), deleted)
        freed = self._vault_freed(deleted, final, gone_entities, entities, episodes, communities, dropped,
                                  deleted_corrections, corrections)  # fmt: skip
        decisions = self._redacted_decisions(deleted)
        kept_retired = sorted(
            f.uuid
            for f in final.values()
            if f.invalidated_by is not None
            and (f.invalidated_by.fact_uuid in removed or f.invalidated_by.episode_uuid in deleted)
        )
        ids = {
            "entities": sorted(self.subjects),
            "orphans": sorted(orphans),
            "facts": sorted(removed),
            "facts_redacted": sorted(redacted_facts),
            "facts_detached": sorted(detached),
            "kept_retired": kept_retired,
            "episodes_deleted": sorted(deleted),
            "episodes_redacted": sorted(e.uuid for e in episodes),
            "entities_rewritten": sorted(e.uuid for e in entities),
            "summaries_owed": sorted(owed),
            "communities_rewritten": sorted(rewritten_communities),
            "communities_dissolved": sorted(dissolved),
            "corrections_deleted": sorted(deleted_corrections),
            "corrections_redacted": sorted(c.uuid for c in corrections),
            "decisions_deleted": sorted(r.episode_uuid for r in g.decisions if r.episode_uuid in deleted),
            "decisions_redacted": sorted(r.episode_uuid for r in decisions),
        }
        current = sum(1 for u in removed if is_current(g.facts[u], request.now))
        counts = {
            **{key: len(value) for key, value in ids.items()},
            "aliases": sum(len(g.entities[u].aliases) for u in self.subjects),
            "facts_current": current,
            "facts_retired": len(removed) - current,
            "episodes_mentioning": len(naming),
            "conversations_reset": len(dropped),
            "names_unused": self.scrub.unused,
            "vault_values": len(freed),
        }
        write = ForgetWrite(
            group_id=request.group_id,
            delete_facts=tuple(sorted(removed)),
            delete_entities=tuple(sorted(gone_entities)),
            delete_episodes=tuple(sorted(deleted)),
            delete_corrections=tuple(sorted(deleted_corrections)),
            conversations_dropped=tuple(sorted(dropped)),
            episodes=tuple(episodes),
            entities=tuple(entities),
            facts=tuple(facts),
            corrections=tuple(corrections),
            communities=tuple(communities),
            decisions=tuple(decisions),
            owed=tuple(sorted(owed)),
            vault_freed=freed,
        )
        digest = _digest(write, ids)
        record = ForgetRecord(
            uuid=RECORD_PREFIX + str(uuidlib.uuid5(_RECORD_NAMESPACE, f"{digest} {request.now.isoformat()}")),
            group_id=request.group_id,
            at=request.now,
            call=request.call,
            episodes=request.mentioning,
            subject=request.subject,
            older_than=request.older_than,
            counts=counts,
            ids=ids,
        )
        write = replace(write, record=record)
        return ForgetPlan(
            write=write,
            reembed=frozenset(self.reembed),
            texts=tuple(dict.fromkeys(self._texts(write))),
            ids=ids,
            counts=counts,
            digest=digest,
            conversations=tuple(sorted(refold)),
        )

    # --- what goes --------------------------------------------------------------------------------
    def _names_in_episode(self, ep: Episode) -> bool:
        return any(self.scrub.finds(text) for _, text in texts_of(ep))

    def _removed_facts(self, deleted: set[str]) -> tuple[dict[str, Fact], set[str]]:
        """The facts that go (a subject's; those only deleted episodes state; an orphan's) and the
        orphans: entities only deleted episodes mentioned, no fact added by hand touches, no subject."""
        g = self.g
        removed = {
            u: f
            for u, f in g.facts.items()
            if {f.source_uuid, f.target_uuid} & self.subjects
            or (f.episodes and all(e in deleted for e in f.episodes))
        }
        by_hand = {end for u, f in g.facts.items() if not f.episodes and u not in removed for end in _ends(f)}
        elsewhere = {e for ep, found in g.mentioned.items() if ep not in deleted for e in found}
        mentioned = {e for ep in deleted for e in g.mentioned.get(ep, ())}
        orphans = mentioned - elsewhere - by_hand - self.subjects
        removed.update({u: f for u, f in g.facts.items() if set(_ends(f)) & orphans})
        return removed, orphans

    # --- what is rewritten ------------------------------------------------------------------------
    def _kept_facts(
        self, removed: Mapping[str, Fact], deleted: set[str]
    ) -> tuple[list[Fact], set[str], set[str]]:
        """The surviving facts that change (provenance, text, attributes); the reworded ones' and the
        detached ones' uuids."""
        g, s = self.g, self.scrub
        changed: list[Fact] = []
        reworded: set[str] = set()
        detached: set[str] = set()
        for uuid, fact in g.facts.items():
            if uuid in removed:
                continue
            update: dict[str, Any] = {}
            kept = [e for e in fact.episodes if e not in deleted]
            if len(kept) != len(fact.episodes):
                times = (g.episodes[e].reference_time for e in kept if e in g.episodes)
                update["episodes"] = kept
                update["stated_at"] = fact.stated_at and first_stated(times, fact.stated_at)
                detached.add(uuid)
            text, attributes = s.text(fact.text), s.value(fact.attributes)
            if text != fact.text:
                update["text"] = text
                reworded.add(uuid)
                self.reembed.add(("fact", uuid))
            if attributes != fact.attributes:
                update["attributes"] = attributes
            if update:
                changed.append(fact.model_copy(update=update))
        return changed, reworded, detached

    def _touched(self, removed: Mapping[str, Fact], reworded: set[str], gone: set[str]) -> set[str]:
        """The entities whose summaries are rebuilt: the ends of removed or reworded facts (but those
        that go) and those whose own text names the subject."""
        ends = {e for f in removed.values() for e in _ends(f)}
        ends |= {e for u in reworded for e in _ends(self.g.facts[u])}
        s = self.scrub
        for uuid, entity in self.g.entities.items():
            if any(s.finds(text) for _, text in texts_of(entity)):
                ends.add(uuid)
        return ends - gone

    def _kept_entities(
        self, gone: set[str], touched: set[str], final: Mapping[str, Fact]
    ) -> tuple[list[Entity], set[str]]:
        """The touched entities rewritten: names scrubbed, summary composed from their current facts;
        and those of them owed a model summary (more current facts than a composed summary holds)."""
        now, limit, s = self.request.now, self.request.compose_max, self.scrub
        around: dict[str, list[Fact]] = {}
        for fact in final.values():
            if is_current(fact, now):
                for end in set(_ends(fact)) & touched:
                    around.setdefault(end, []).append(fact)
        rewritten: list[Entity] = []
        owed: set[str] = set()
        for uuid in sorted(touched):
            entity = self.g.entities.get(uuid)
            if entity is None or uuid in gone:
                continue
            name = s.text(entity.name)
            aliases = [a for a in s.texts(entity.aliases) if a not in (name, s.placeholder)]
            facts = around.get(uuid, [])
            update = {
                "name": name,
                "aliases": aliases,
                "attributes": s.value(entity.attributes),
                "summary": compose_summary(facts, limit),
            }
            if name != entity.name:
                self.reembed.add(("entity", uuid))
            if len(facts) > limit:
                owed.add(uuid)
            changed = entity.model_copy(update=update)
            if changed != entity:
                rewritten.append(changed)
        return rewritten, owed

    def _redacted_episodes(self, naming: set[str]) -> list[Episode]:
        """The episodes that stay but name the subject, scrubbed (an episode that only mentions a subject
        without naming it, by a pronoun, stays as it is)."""
        s = self.scrub
        rewritten: list[Episode] = []
        for uuid in sorted(naming):
            ep = self.g.episodes[uuid]
            content = s.text(ep.content)
            report = ep.report.model_copy(update={"warnings": [s.text(w) for w in ep.report.warnings]})
            update: dict[str, Any] = {
                "name": s.text(ep.name),
                "content": content,
                "content_hash": content_hash(content),
                "source_description": s.text(ep.source_description),
                "error": s.maybe(ep.error),
                "report": report,
            }
            changed = ep.model_copy(update=update)
            if changed == ep:
                continue
            if content != ep.content:
                self.reembed.add(("episode", uuid))
            rewritten.append(changed)
        return rewritten

    def _communities(self, gone: set[str]) -> tuple[list[Community], set[str], set[str]]:
        """The group's communities afterwards, the dissolved ones (no member left) and the rewritten
        ones (a member gone, or naming the subject: name scrubbed, summary dropped, stale)."""
        s, now = self.scrub, self.request.now
        kept: list[Community] = []
        dissolved: set[str] = set()
        rewritten: set[str] = set()
        for community in self.g.communities:
            members = [m for m in community.members if m not in gone]
            if not members:
                dissolved.add(community.uuid)
                continue
            name = s.text(community.name)
            if members != community.members or name != community.name or s.finds(community.summary):
                update = {
                    "members": members,
                    "name": name,
                    "summary": "",
                    "summarized": "",
                    "updated_at": now,
                }
                community = community.model_copy(update=update)
                rewritten.add(community.uuid)
                self.reembed.add(("community", community.uuid))
            kept.append(community)
        return kept, dissolved, rewritten

    def _conversations(self, deleted: set[str], rewritten: list[Episode]) -> tuple[set[str], set[str]]:
        """The conversation summaries dropped (their chain lost or changed an episode, or they name the
        subject), and the chains to fold again afterwards: those of the dropped summaries that keep an
        episode, by their keys once scrubbed."""
        g, s = self.g, self.scrub
        changed = {e.uuid for e in rewritten if e.content != g.episodes[e.uuid].content}
        changed |= {
            e.uuid for e in rewritten if e.source_description != g.episodes[e.uuid].source_description
        }
        keys = {chain_key(g.episodes[u].source_description) for u in deleted | changed}
        keys |= {x.key for x in g.summaries if s.finds(x.summary) or s.finds(x.key)}
        keys.discard(None)
        dropped = {x.key for x in g.summaries if x.key in keys}
        refold = {
            key
            for ep in g.episodes.values()
            if ep.uuid not in deleted
            and chain_key(ep.source_description) in dropped
            and (key := chain_key(s.text(ep.source_description))) is not None
        }
        return dropped, refold

    def _corrections(self, gone: set[str], deleted: set[str]) -> tuple[set[str], list[Correction]]:
        """The corrections deleted (touching a record that goes, or a deleted episode's mention) and the
        others that name the subject, scrubbed."""
        deleted_ids: set[str] = set()
        rewritten: list[Correction] = []
        for correction in self.g.corrections:
            sides = (correction.before, correction.after)
            episodes = {m.episode_uuid for side in sides for m in side.mentions}
            if set(correction.subjects()) & gone or episodes & deleted:
                deleted_ids.add(correction.uuid)
                continue
            scrubbed = self._scrubbed_correction(correction)
            if scrubbed != correction:
                rewritten.append(scrubbed)
        return deleted_ids, rewritten

    def _scrubbed_correction(self, c: Correction) -> Correction:
        s = self.scrub
        kind, _, who = c.author.partition(":")

        def side(part: GraphSlice) -> GraphSlice:
            entities = [
                e.model_copy(update={"name": s.text(e.name), "aliases": s.texts(e.aliases),
                                     "summary": s.text(e.summary), "attributes": s.value(e.attributes)})
                for e in part.entities
            ]  # fmt: skip
            facts = [
                f.model_copy(update={"text": s.text(f.text), "attributes": s.value(f.attributes)})
                for f in part.facts
            ]
            return part.model_copy(update={"entities": entities, "facts": facts})

        update = {
            "reason": s.text(c.reason),
            "author": f"{kind}:{s.text(who)}",
            "before": side(c.before),
            "after": side(c.after),
        }
        return c.model_copy(update=update)

    def _vault_freed(
        self,
        deleted: set[str],
        facts: Mapping[str, Fact],
        gone: set[str],
        entities: list[Entity],
        episodes: list[Episode],
        communities: list[Community],
        dropped: set[str],
        deleted_corrections: set[str],
        corrections: list[Correction],
    ) -> tuple[tuple[str, int], ...]:
        """The vault's placeholders some text of the group holds now and none holds afterwards: the
        group's records before, against the records that stay (rewritten ones as rewritten)."""
        g = self.g
        before = _placeholders([*g.episodes.values(), *g.entities.values(), *g.facts.values(),
                                *g.communities, *g.summaries, *g.corrections])  # fmt: skip
        after = _placeholders([
            *_afterwards(g.episodes.values(), deleted, episodes),
            *_afterwards(g.entities.values(), gone, entities),
            *facts.values(),
            *communities,
            *(x for x in g.summaries if x.key not in dropped),
            *_afterwards(g.corrections, deleted_corrections, corrections),
        ])  # fmt: skip
        return tuple(sorted((before - after) & self.held))

    def _redacted_decisions(self, deleted: set[str]) -> list[DecisionRecord]:
        """The decision records of the episodes that stay whose texts name the subject, scrubbed: each
        step's subject, reason, repaired name and dating words, and the reply's lines (ids stay ids)."""
        s = self.scrub
        rewritten: list[DecisionRecord] = []
        for record in self.g.decisions:
            if record.episode_uuid in deleted:
                continue
            steps = tuple(
                step.model_copy(update={"subject": s.text(step.subject), "why": s.text(step.why),
                                        "became": s.text(step.became), "dated": s.text(step.dated)})
                for step in record.steps
            )  # fmt: skip
            texts = tuple(s.text(x) for x in record.texts)
            changed = record.model_copy(update={"steps": steps, "texts": texts})
            if changed != record:
                rewritten.append(changed)
        return rewritten

    def _texts(self, write: ForgetWrite) -> Iterable[str]:
        """The texts of the rewritten records whose embedded text changed."""
        for e in write.episodes:
            if ("episode", e.uuid) in self.reembed:
                yield e.content
        for n in write.entities:
            if ("entity", n.uuid) in self.reembed:
                yield n.name
        for f in write.facts:
            if ("fact", f.uuid) in self.reembed:
                yield f.text
        for c in write.communities or ():
            if ("community", c.uuid) in self.reembed:
                yield community_text(c.name, c.summary)


def _afterwards(
    records: Iterable[Episode | Entity | Correction], gone: set[str], rewritten: Sequence[Any]
) -> Iterable[BaseModel]:
    """``records`` as they are afterwards: those of ``gone`` left out, the ``rewritten`` in their place."""
    after: dict[str, BaseModel] = {r.uuid: r for r in records if r.uuid not in gone}
    after.update({r.uuid: r for r in rewritten})
    return after.values()


def _placeholders(records: Iterable[BaseModel]) -> set[tuple[str, int]]:
    """Every ``(kind, number)`` placeholder the texts of ``records`` hold."""
    return {ref for record in records for _, text in texts_of(record) for ref in placeholders_in(text)}


def _ends(fact: Fact) -> tuple[str, str]:
    return fact.source_uuid, fact.target_uuid


def _digest(write: ForgetWrite, ids: Mapping[str, list[str]]) -> str:
    """A fingerprint of everything the write does (its records without embeddings; a community's
    ``updated_at``, the plan's clock, left out: a preview and its apply are planned at two times)."""

    def dump(records: Iterable[Any], exclude: set[str] | None = None) -> list[Any]:
        return [r.model_dump(mode="json", exclude=exclude) for r in records]

    deletes = (write.delete_facts, write.delete_entities, write.delete_episodes, write.delete_corrections)
    body = {
        "deletes": [*deletes, write.conversations_dropped],
        "episodes": dump(write.episodes), "entities": dump(write.entities), "facts": dump(write.facts),
        "corrections": dump(write.corrections), "communities": dump(write.communities or (), {"updated_at"}),
        "decisions": dump(write.decisions), "owed": write.owed, "ids": ids, "vault": write.vault_freed,
    }  # fmt: skip
    return hashlib.sha256(json.dumps(body, sort_keys=True, default=str).encode()).hexdigest()[:32]
