"""The rules of a forgetting, step by step: from one group's records (``GroupRecords``, a dump's items)
and a :class:`~.forgetting.ForgetRequest`, the :class:`Planner` works out what goes (subjects, episodes,
facts, orphans, corrections) and what is rewritten, names replaced by the placeholder (facts, entities
and their composed summaries, episodes, communities, conversation summaries, corrections, decision
records), and which vault values are freed. ``forget_plan.plan_forgetting`` runs the steps and assembles
the write, its counts and digest (the rules in full: ``forget_plan``'s docstring).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from .corrections import Correction, GraphSlice
from .decisions import DecisionRecord
from .derived import Community, ConversationSummary, chain_key, community_text, compose_summary
from .forgetting import ForgetRequest, ForgetWrite
from .model import Entity, Episode, Fact, Mention, content_hash
from .placeholders import placeholders_in
from .scrub import Scrubber
from .store_records import DumpItem
from .temporal import first_stated, is_current
from .texts import texts_of

Kind = str
"""``episode``, ``entity``, ``fact`` or ``community``: what a rewritten record with a vector is."""


@dataclass(slots=True)
class GroupRecords:
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
    def of(cls, items: Iterable[DumpItem], group_id: str) -> GroupRecords:
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


class Planner:
    """The steps of one plan over one group's records: each says what goes or how a record is rewritten
    (the rules: ``forget_plan``'s docstring); ``reembed`` collects the rewritten records whose embedded
    text changed."""

    def __init__(self, group: GroupRecords, request: ForgetRequest, held: Iterable[tuple[str, int]]) -> None:
        self.g = group
        self.request = request
        self.held = set(held)
        self.scrub = Scrubber(request.names, request.placeholder)
        self.subjects = set(request.entities) & group.entities.keys()
        self.reembed: set[tuple[Kind, str]] = set()

    # --- what goes --------------------------------------------------------------------------------
    def names_in_episode(self, ep: Episode) -> bool:
        return any(self.scrub.finds(text) for _, text in texts_of(ep))

    def removed_facts(self, deleted: set[str]) -> tuple[dict[str, Fact], set[str]]:
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
    def kept_facts(
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

    def touched(self, removed: Mapping[str, Fact], reworded: set[str], gone: set[str]) -> set[str]:
        """The entities whose summaries are rebuilt: the ends of removed or reworded facts (but those
        that go) and those whose own text names the subject."""
        ends = {e for f in removed.values() for e in _ends(f)}
        ends |= {e for u in reworded for e in _ends(self.g.facts[u])}
        s = self.scrub
        for uuid, entity in self.g.entities.items():
            if any(s.finds(text) for _, text in texts_of(entity)):
                ends.add(uuid)
        return ends - gone

    def kept_entities(
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

    def redacted_episodes(self, naming: set[str]) -> list[Episode]:
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

    def communities(self, gone: set[str]) -> tuple[list[Community], set[str], set[str]]:
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

    def conversations(self, deleted: set[str], rewritten: list[Episode]) -> tuple[set[str], set[str]]:
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

    def corrections(self, gone: set[str], deleted: set[str]) -> tuple[set[str], list[Correction]]:
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

    def vault_freed(
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

    def redacted_decisions(self, deleted: set[str]) -> list[DecisionRecord]:
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

    def texts(self, write: ForgetWrite) -> Iterable[str]:
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
