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
from dataclasses import dataclass, replace
from typing import Any

from ..errors import ConflictError
from .derived import community_text
from .forget_planner import GroupRecords, Kind, Planner
from .forgetting import RECORD_PREFIX, ForgetRecord, ForgetRequest, ForgetWrite
from .store_records import DumpItem
from .temporal import is_current

_RECORD_NAMESPACE = uuidlib.UUID("2b9c6f0e-5d8a-4f61-9a0e-7c3d1e4b8f52")


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
    placeholders its redaction vault holds a value for (``held``; see the module docstring): the
    planner's steps run (``forget_planner``), then the write, its ids, counts, digest and record."""
    p = Planner(GroupRecords.of(items, request.group_id), request, held)
    g = p.g
    naming = {
        uuid
        for uuid, ep in g.episodes.items()
        if g.mentioned.get(uuid, set()) & p.subjects or p.names_in_episode(ep)
    }
    deleted = set(request.episodes) & g.episodes.keys()
    if request.mentioning == "delete":
        deleted |= naming
    removed, orphans = p.removed_facts(deleted)
    gone_entities = p.subjects | orphans
    facts, redacted_facts, detached = p.kept_facts(removed, deleted)
    final = {**{u: f for u, f in g.facts.items() if u not in removed}, **{f.uuid: f for f in facts}}
    touched = p.touched(removed, redacted_facts, gone_entities)
    entities, owed = p.kept_entities(gone_entities, touched, final)
    episodes = p.redacted_episodes(naming - deleted)
    communities, dissolved, rewritten_communities = p.communities(gone_entities)
    dropped, refold = p.conversations(deleted, episodes)
    deleted_corrections, corrections = p.corrections(gone_entities | set(removed), deleted)
    freed = p.vault_freed(deleted, final, gone_entities, entities, episodes, communities, dropped,
                          deleted_corrections, corrections)  # fmt: skip
    decisions = p.redacted_decisions(deleted)
    kept_retired = sorted(
        f.uuid
        for f in final.values()
        if f.invalidated_by is not None
        and (f.invalidated_by.fact_uuid in removed or f.invalidated_by.episode_uuid in deleted)
    )
    ids = {
        "entities": sorted(p.subjects),
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
        "aliases": sum(len(g.entities[u].aliases) for u in p.subjects),
        "facts_current": current,
        "facts_retired": len(removed) - current,
        "episodes_mentioning": len(naming),
        "conversations_reset": len(dropped),
        "names_unused": p.scrub.unused,
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
        reembed=frozenset(p.reembed),
        texts=tuple(dict.fromkeys(p.texts(write))),
        ids=ids,
        counts=counts,
        digest=digest,
        conversations=tuple(sorted(refold)),
    )


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
