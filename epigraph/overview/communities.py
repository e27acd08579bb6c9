"""Communities of a group: build or update them (clusters, stable ids, model summaries), and read them,
now or as of a time.

- :meth:`Communities.update`: clusters the current facts (``clusters.incremental``; a full Louvain
  ``clusters.detect`` on the first build, with ``rebuild=True``, or when much changed), keeps the id of
  each community that continues an old one, and asks the model (``summarize_communities``, one call per
  ``community_batch``) only for the communities whose members changed, are new, or whose earlier summary
  failed. Everything is written in one ``replace_communities``. A reply the model spoils
  (``StructuredOutputError``) keeps the previous name and summary (a new community gets a name made of
  its best connected members) and leaves the community ``stale``, so the next update asks again; a model
  that cannot be reached raises and nothing is written.
- :meth:`Communities.view`: the stored communities; with ``as_of`` / ``known_at``, the clusters of the
  facts that held then (the same ``TimeFilter`` as every as-of read), each named and summarized by the
  stored community it continues (``clusters.match``): summaries describe the graph as it is, like entity
  summaries; members are those of that time. A cluster of that time that continues no stored community
  is listed with a name made of its members and no summary (``stored=False``).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import networkx as nx

from ..errors import StructuredOutputError
from ..graph.derived import Community, community_text, members_digest
from ..graph.model import Entity, IngestReport, new_uuid, to_utc
from ..graph.store import FactFilter, TimeFilter
from ..pipeline.metering import MeteredEmbedder, MeteredLLM, ReportBuilder
from ..pipeline.state import clip
from ..prompts import summarize_communities as sc
from ..prompts.protocol import LLM
from ..prompts.runtime import run as run_prompt
from . import clusters
from .options import Service


@dataclass(frozen=True, slots=True)
class CommunityView:
    """One community as a view shows it."""

    community: Community
    members: list[Entity]
    """Its best connected members (at most ``OverviewOptions.view_members``), best first."""
    size: int
    """How many members it has."""
    stored: bool = True
    """False: a cluster of the view's time that continues no stored community (no summary)."""

    def to_dict(self) -> dict[str, Any]:
        c = self.community
        return {
            **c.model_dump(mode="json", exclude={"embedding", "summarized", "members"}),
            "size": self.size,
            "stored": self.stored,
            "stale": c.stale,
            "members": [{"uuid": e.uuid, "name": e.name, "summary": e.summary} for e in self.members],
        }


@dataclass(frozen=True, slots=True)
class CommunityUpdate:
    """What an update did and what it cost."""

    communities: list[Community]
    """The group's communities after it, as stored."""
    rebuilt: bool
    """Clustered from scratch (first build, ``rebuild=True``, or much changed) rather than updated."""
    summarized: int
    """Communities whose name and summary the model wrote in this update."""
    kept: int
    """Communities whose members did not change (their summary kept, no call)."""
    dissolved: int
    """Stored communities that no longer exist."""
    report: IngestReport
    """Model calls, tokens, embedding requests and warnings of the update."""
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        r = self.report
        return {
            "communities": len(self.communities), "rebuilt": self.rebuilt, "summarized": self.summarized,
            "kept": self.kept, "dissolved": self.dissolved, "llm_calls": r.llm_calls,
            "input_tokens": r.input_tokens, "output_tokens": r.output_tokens,
            "embedding_requests": r.embedding_requests, "seconds": round(self.seconds, 3),
            "warnings": list(r.warnings),
        }  # fmt: skip


def fallback_name(names: Sequence[str], size: int) -> str:
    """A community's name from its best connected members: ``Alice, Bob and 3 more``."""
    shown = ", ".join(names[:2])
    return (shown + (f" and {size - 2} more" if size > 2 else ""))[:200] or "community"


class Communities(Service):
    """Communities of a store's groups, summarized by ``llm`` (reads need none)."""

    what = "community names and summaries"

    # --- reading ------------------------------------------------------------------------------------
    async def view(
        self, group_id: str, *, as_of: datetime | str | None = None, known_at: datetime | str | None = None
    ) -> list[CommunityView]:
        """The group's communities (see the module docstring for ``as_of`` and ``known_at``)."""
        dated = as_of is not None or known_at is not None
        when = TimeFilter(as_of=_time(as_of), known_at=_time(known_at))
        graph = clusters.weighted_graph(await self.store.fact_endpoints(group_id, FactFilter(time=when)))
        stored = await self.store.communities(group_id)
        if not dated:
            found = [(c, frozenset(c.members), True) for c in stored]
        else:
            found = self._at(group_id, graph, stored)
        ranked = [(c, _by_degree(graph, members), ok) for c, members, ok in found]
        wanted = sorted({u for _, members, _ in ranked for u in members[: self.options.view_members]})
        # the members shown as they were then (graph.entity_time): one not named by then is left out
        entities = {e.uuid: e for e in await self.store.get_entities(group_id, wanted, when)}
        views = []
        for community, members, ok in ranked:
            shown = [entities[u] for u in members[: self.options.view_members] if u in entities]
            if not ok:
                community = community.model_copy(
                    update={"name": fallback_name([e.name for e in shown], len(members))}
                )
            views.append(CommunityView(community, shown, len(members), ok))
        return views

    def _at(
        self, group_id: str, graph: nx.Graph, stored: Sequence[Community]
    ) -> list[tuple[Community, frozenset[str], bool]]:
        found = clusters.detect(graph, min_size=self.options.min_size, resolution=self.options.resolution)
        by_uuid = {c.uuid: c for c in stored}
        continues = clusters.match({c.uuid: frozenset(c.members) for c in stored}, found)
        out = []
        for index, members in enumerate(found):
            uuid = continues.get(index)
            if uuid is not None:
                out.append((by_uuid[uuid].model_copy(update={"members": sorted(members)}), members, True))
            else:
                provisional = Community(
                    uuid=f"unsaved-{members_digest(members)}", group_id=group_id, name="community",
                    members=sorted(members),
                )  # fmt: skip
                out.append((provisional, members, False))
        return out

    # --- updating -----------------------------------------------------------------------------------
    async def update(self, group_id: str, *, rebuild: bool = False) -> CommunityUpdate:
        """Bring the group's communities up to date with its current facts (see the module docstring)."""
        llm, embedder = MeteredLLM(self.need_llm()), MeteredEmbedder(self.embedder)
        started = time.perf_counter()
        report = ReportBuilder(llm, embedder)
        graph = clusters.weighted_graph(await self.store.fact_endpoints(group_id))
        stored = await self.store.communities(group_id)
        old = {c.uuid: frozenset(c.members) for c in stored}
        rebuilt = rebuild or clusters.needs_rebuild(graph, old, self.options.rebuild_share)
        if rebuilt:
            found = clusters.detect(graph, min_size=self.options.min_size, resolution=self.options.resolution)
            ids = clusters.match(old, found)
            pairs = [(ids.get(i), members) for i, members in enumerate(found)]
        else:
            update = clusters.incremental(
                graph, old, min_size=self.options.min_size, resolution=self.options.resolution
            )
            pairs = update.clusters
        by_uuid = {c.uuid: c for c in stored}
        plans = [(by_uuid.get(uuid) if uuid else None, members) for uuid, members in pairs]
        written, summarized, kept = await self._summarized(group_id, graph, plans, llm, embedder, report)
        changed = {c.uuid: c for c in written} != {c.uuid: c for c in stored}
        if changed:  # an update that changes nothing writes nothing
            await self.store.replace_communities(group_id, written)
        fresh = {c.uuid for c in written}
        return CommunityUpdate(
            communities=await self.store.communities(group_id) if changed else stored,
            rebuilt=rebuilt,
            summarized=summarized,
            kept=kept,
            dissolved=sum(1 for c in stored if c.uuid not in fresh),
            report=report.build(),
            seconds=time.perf_counter() - started,
        )

    async def _summarized(
        self,
        group_id: str,
        graph: nx.Graph,
        plans: list[tuple[Community | None, frozenset[str]]],
        llm: LLM,
        embedder: MeteredEmbedder,
        report: ReportBuilder,
    ) -> tuple[list[Community], int, int]:
        """The communities to store (unchanged ones as they were, the others with a new name, summary
        and embedding: the model's, or a fallback when its reply was unusable), how many the model
        named, and how many were kept unchanged."""
        now = self.options.clock()
        ranked = [_by_degree(graph, members) for _, members in plans]
        due = [
            i for i, (before, members) in enumerate(plans)
            if before is None or before.stale or frozenset(before.members) != members
        ]  # fmt: skip
        shown = sorted({u for i in due for u in ranked[i][: self.options.members_shown]})
        entities = {e.uuid: e for e in await self.store.get_entities(group_id, shown)}
        answers = await self._ask(llm, report, [(i, ranked[i], entities) for i in due])
        out: list[Community] = []
        texts: dict[int, str] = {}
        for i, (before, members) in enumerate(plans):
            if i not in due and before is not None:
                out.append(before)
                continue
            names = [entities[u].name for u in ranked[i] if u in entities]
            name, summary, digest = *answers.get(i, ("", "")), members_digest(members)
            if not name:  # no usable reply: keep what there was, ask again next time
                name = before.name if before is not None else fallback_name(names, len(members))
                summary = before.summary if before is not None else ""
                digest = before.summarized if before is not None else ""
            community = Community(
                uuid=before.uuid if before is not None else new_uuid(), group_id=group_id, name=name,
                summary=summary, members=sorted(members), summarized=digest,
                embedding=before.embedding if before is not None else None,
                created_at=before.created_at if before is not None else now, updated_at=now,
            )  # fmt: skip
            if i in answers or community.embedding is None:
                texts[len(out)] = community_text(community.name, community.summary)
            out.append(community)
        if texts:
            vectors = await embedder.embed(list(texts.values()))
            for (position, _), vector in zip(texts.items(), vectors, strict=True):
                out[position] = out[position].model_copy(update={"embedding": [float(x) for x in vector]})
        return out, len(answers), len(plans) - len(due)

    async def _ask(
        self, llm: LLM, report: ReportBuilder, items: list[tuple[int, list[str], Mapping[str, Entity]]]
    ) -> dict[int, tuple[str, str]]:
        """(name, summary) per plan index, from one call per ``community_batch`` communities."""
        size = max(1, self.options.community_batch)
        chunks = [items[i : i + size] for i in range(0, len(items), size)]
        found: dict[int, tuple[str, str]] = {}
        for answer in await asyncio.gather(*(self._ask_chunk(llm, report, chunk) for chunk in chunks)):
            found.update(answer)
        return found

    async def _ask_chunk(
        self, llm: LLM, report: ReportBuilder, chunk: list[tuple[int, list[str], Mapping[str, Entity]]]
    ) -> dict[int, tuple[str, str]]:
        offered: dict[str, int] = {}
        shown = []
        cut = self.options.member_summary_chars
        for number, (index, ranked, entities) in enumerate(chunk, start=1):
            members = [entities[u] for u in ranked[: self.options.members_shown] if u in entities]
            if not members:
                continue
            offered[str(number)] = index
            shown.append(sc.CommunityMembers(
                id=str(number), others=len(ranked) - len(members),
                members=[sc.Member(name=e.name, summary=clip(_flat(e.summary), cut)) for e in members],
            ))  # fmt: skip
        if not shown:
            return {}
        try:
            result = await run_prompt(llm, sc.PROMPT, sc.SummarizeCommunitiesInput(communities=shown))
        except StructuredOutputError as exc:
            report.warn(f"summarize_communities gave no usable reply ({exc}); earlier names kept")
            return {}
        answer: sc.SummarizeCommunitiesOutput = result.value
        out: dict[int, tuple[str, str]] = {}
        for item in answer.communities:
            found = offered.get(item.id)
            name, summary = _flat(item.name), _flat(item.summary)
            if found is None:
                report.warn(f"summarize_communities answered for unknown id {item.id!r}; ignored")
            elif name:
                out[found] = (name[:200], summary[:4000])
        for key, wanted in offered.items():
            if wanted not in out:
                report.warn(f"summarize_communities left community {key} without a name; asked again later")
        return out


def _by_degree(graph: nx.Graph, members: frozenset[str]) -> list[str]:
    """``members`` best connected first (weighted degree in ``graph``), then by uuid."""
    degree = {u: graph.degree(u, weight="weight") if u in graph else 0 for u in members}
    return sorted(members, key=lambda u: (-degree[u], u))


def _flat(text: str) -> str:
    return " ".join(text.split())


def _time(value: datetime | str | None) -> datetime | None:
    return None if value is None else to_utc(value)
