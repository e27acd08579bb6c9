"""The ingestion API: ``Ingestor`` (what ``KnowledgeGraph`` wires to its store, LLM and embedder).

Guarantees:

- idempotent: an episode's id is derived from (group, content hash, reference time) or the caller's id;
  an episode already ``done`` is skipped, one ``pending`` or ``failed`` is run again (a retry);
- atomic: an episode's graph changes are ONE store write together with its ``done`` status; any failure
  saves it ``failed`` with the reason and leaves the graph untouched;
- ordered: episodes of one group run one at a time in the given order (a per-group lock), different
  groups concurrently; LLM concurrency is bounded by the client's one limiter (nothing here adds another);
- observable: every result carries its report (calls and tokens per prompt, embedding requests, round
  trips, per-stage latency, dropped lines, warnings) and ``ingest`` streams typed progress events.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from ..embed import Embedder
from ..graph.model import (
    Entity,
    Episode,
    EpisodeKind,
    EpisodeStatus,
    IncreasingClock,
    IngestReport,
    to_utc,
)
from ..graph.store import DeletionResult, EpisodeWrite, GraphStore
from ..prompts.protocol import LLM
from .episode import ingest_episode
from .events import (
    EpisodeDone,
    EpisodeFailed,
    EpisodeResult,
    EpisodeSaved,
    EpisodeUpdated,
    ProgressEvent,
    SummaryUpdated,
)
from .inputs import EpisodeInput
from .metering import MeteredEmbedder, MeteredLLM, ReportBuilder
from .options import IngestOptions, Mode, SummaryMode
from .reports import merge_reports
from .state import Emit, EpisodeRun
from .summaries import current_facts, summarize

Item = EpisodeInput | Mapping[str, Any]


@dataclass(frozen=True)
class RemovalResult:
    deletion: DeletionResult
    entities: list[Entity] = field(default_factory=list)
    """Touched entities whose summaries were regenerated."""
    report: IngestReport = field(default_factory=IngestReport)


def _ignore(_: ProgressEvent) -> None:
    return None


class Ingestor:
    """Ingests episodes into ``store`` with ``llm`` and ``embedder`` (see the module docstring)."""

    def __init__(
        self, store: GraphStore, llm: LLM, embedder: Embedder, options: IngestOptions | None = None
    ) -> None:
        self.store, self.llm, self.embedder = store, llm, embedder
        self.options = options or IngestOptions()
        self._locks: dict[str, asyncio.Lock] = {}
        self._active: set[str] = set()
        # strictly increasing, so episodes sharing a reference time keep their given order
        self._created_at = IncreasingClock(lambda: self.options.clock())

    # --- public API -----------------------------------------------------------------------------

    async def add_episode(
        self,
        content: str,
        *,
        group_id: str = "default",
        reference_time: datetime,
        kind: EpisodeKind | str = EpisodeKind.MESSAGE,
        name: str = "",
        source_description: str = "",
        episode_id: str | None = None,
        speaker: str | None = None,
        mode: Mode | None = None,
        raise_on_failure: bool = True,
    ) -> EpisodeResult:
        """Ingest one episode. On failure the episode is saved ``failed`` (retry it with
        :meth:`retry_failed`) and the error is raised, unless ``raise_on_failure=False``."""
        item = EpisodeInput(
            content=content,
            reference_time=to_utc(reference_time),
            group_id=group_id,
            kind=EpisodeKind(kind),
            speaker=speaker,
            name=name,
            source_description=source_description,
            episode_id=episode_id,
        )
        errors: list[BaseException] = []
        options = self._options(mode, None)
        result, _ = await self._process(self._episode(item), 0, _ignore, options, errors)
        if errors and raise_on_failure:
            raise errors[0]
        return result

    async def add_episodes(
        self, items: Iterable[Item], *, mode: Mode | None = None, summary_mode: SummaryMode | None = "batch"
    ) -> list[EpisodeResult]:
        """Ingest many episodes: groups concurrently, each group's episodes in order. Failures do not
        stop the batch: they come back as results with ``ok == False`` and ``error`` set."""
        results: dict[int, EpisodeResult] = {}
        async for event in self.ingest(items, mode=mode, summary_mode=summary_mode):
            if isinstance(event, EpisodeDone | EpisodeUpdated | EpisodeFailed) and event.result is not None:
                results[event.index] = event.result
        return [results[i] for i in sorted(results)]

    async def ingest(
        self, items: Iterable[Item], *, mode: Mode | None = None, summary_mode: SummaryMode | None = "batch"
    ) -> AsyncIterator[ProgressEvent]:
        """Ingest many episodes, yielding typed progress events as they happen.

        Each episode gets exactly one ``EpisodeDone`` or ``EpisodeFailed``, after its other events.
        A batch summary refresh at the end of a group yields ``SummaryUpdated`` events and an
        ``EpisodeUpdated`` with the new result of the group's last done episode (it pays for it).
        Closing the iterator early cancels the run; an interrupted episode stays ``pending`` and
        :meth:`retry_failed` picks it up."""
        queue: asyncio.Queue[ProgressEvent | None] = asyncio.Queue()
        options = self._options(mode, summary_mode)
        episodes = [self._episode(EpisodeInput.coerce(item)) for item in items]
        runner = asyncio.create_task(self._run_groups(episodes, options, queue.put_nowait))
        runner.add_done_callback(lambda _: queue.put_nowait(None))
        try:
            while (event := await queue.get()) is not None:
                yield event
            await runner
        finally:
            if not runner.done():
                runner.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await runner

    async def retry_failed(self, group_id: str, *, mode: Mode | None = None) -> list[EpisodeResult]:
        """Run again, in order, the group's failed episodes and those left pending by a crash."""
        stuck: list[Episode] = []
        for status in (EpisodeStatus.FAILED, EpisodeStatus.PENDING):
            stuck += await self.store.episodes(group_id, status=status, limit=1_000_000, newest_first=False)
        stuck = [e for e in stuck if e.uuid not in self._active]
        stuck.sort(key=lambda e: (e.reference_time, e.created_at, e.uuid))
        options = self._options(mode, None)
        results = []
        for index, episode in enumerate(stuck):
            result, _ = await self._process(episode, index, _ignore, options, [])
            results.append(result)
        return results

    async def process(
        self, episode: Episode, *, emit: Emit | None = None, mode: Mode | None = None
    ) -> EpisodeResult:
        """Ingest one episode already built (e.g. stored ``pending`` by a server that accepted it),
        under the group's lock, with its progress events sent to ``emit``; never raises for a failed
        episode (the result says ``ok == False``). A ``done`` episode is skipped."""
        result, _ = await self._process(episode, 0, emit or _ignore, self._options(mode, None), [])
        return result

    async def remove_episode(self, group_id: str, uuid: str) -> RemovalResult:
        """Delete an episode with provenance cleanup (facts it retired are restored) and regenerate
        the summaries of the entities it touched."""
        async with self._lock(group_id):
            deletion = await self.store.delete_episode(group_id, uuid)
            entities, report = await self._refresh(group_id, deletion.touched_entities, carrier=None)
        return RemovalResult(deletion, entities, report)

    async def refresh_summaries(self, group_id: str, entity_uuids: Iterable[str]) -> list[Entity]:
        """Regenerate summaries from currently believed facts (e.g. lazily, before showing them)."""
        async with self._lock(group_id):
            entities, _ = await self._refresh(group_id, list(entity_uuids), carrier=None)
        return entities

    # --- internals ------------------------------------------------------------------------------

    def _options(self, mode: Mode | None, summary_mode: SummaryMode | None) -> IngestOptions:
        options = self.options
        if mode is not None:
            options = replace(options, mode=mode)
        if summary_mode is not None and not (summary_mode == "batch" and options.summary_mode == "off"):
            options = replace(options, summary_mode=summary_mode)
        return options

    def _lock(self, group_id: str) -> asyncio.Lock:
        return self._locks.setdefault(group_id, asyncio.Lock())

    def _episode(self, item: EpisodeInput) -> Episode:
        return item.to_episode(created_at=self._created_at())

    async def _run_groups(self, episodes: list[Episode], options: IngestOptions, emit: Emit) -> None:
        by_group: dict[str, list[tuple[int, Episode]]] = {}
        for index, episode in enumerate(episodes):
            by_group.setdefault(episode.group_id, []).append((index, episode))
        async with asyncio.TaskGroup() as tasks:
            for members in by_group.values():
                tasks.create_task(self._run_group(members, options, emit))

    async def _run_group(
        self, members: list[tuple[int, Episode]], options: IngestOptions, emit: Emit
    ) -> None:
        wanting: set[str] = set()
        last: tuple[int, EpisodeResult] | None = None
        for index, episode in members:
            result, wants = await self._process(episode, index, emit, options, [])
            if result.ok and not result.skipped:
                wanting |= wants
                last = (index, result)
        if wanting and last is not None and options.summary_mode == "batch":
            await self._batch_summaries(last, sorted(wanting), emit)

    async def _process(
        self, episode: Episode, index: int, emit: Emit, options: IngestOptions, errors: list[BaseException]
    ) -> tuple[EpisodeResult, set[str]]:
        async with self._lock(episode.group_id):
            episode, done = await self._save_pending(episode)
            if done is not None:
                result = EpisodeResult(episode=done, skipped=True)
                emit(EpisodeDone(done.group_id, done.uuid, index, result=result))
                return result, set()
            emit(EpisodeSaved(episode.group_id, episode.uuid, index))
            self._active.add(episode.uuid)
            try:
                return await self._run(episode, index, emit, options, errors)
            finally:
                self._active.discard(episode.uuid)

    async def _save_pending(self, episode: Episode) -> tuple[Episode, Episode | None]:
        """Store ``episode`` pending (a stored one keeps its fields) unless it is done; returns what was
        saved and the stored ``done`` episode, if any. The store checks ``done`` again inside the write,
        so one that another process (a Kafka worker) finished since the read is not set back to pending."""
        stored = await self.store.get_episode(episode.group_id, episode.uuid)
        if stored is not None and stored.status == EpisodeStatus.DONE:
            return episode, stored
        if stored is not None:
            episode = stored.model_copy(update={"status": EpisodeStatus.PENDING, "error": None})
        if await self.store.write_episode(EpisodeWrite(episode=episode, unless_done=True)):
            return episode, None
        return episode, await self.store.get_episode(episode.group_id, episode.uuid) or episode

    async def _run(
        self, episode: Episode, index: int, emit: Emit, options: IngestOptions, errors: list[BaseException]
    ) -> tuple[EpisodeResult, set[str]]:
        llm, embedder = MeteredLLM(self.llm), MeteredEmbedder(self.embedder)
        report = ReportBuilder(llm, embedder)
        run = EpisodeRun(episode, self.store, llm, embedder, options, report, emit, index, options.clock())
        try:
            return await ingest_episode(run)
        except Exception as exc:
            errors.append(exc)
            reason = f"{type(exc).__name__}: {exc}"
            failed = episode.model_copy(
                update={"status": EpisodeStatus.FAILED, "error": reason, "report": report.build()}
            )
            await self.store.save_episode(failed)
            result = EpisodeResult(episode=failed)
            emit(EpisodeFailed(episode.group_id, episode.uuid, index, error=reason, result=result))
            return result, set()

    async def _batch_summaries(self, last: tuple[int, EpisodeResult], uuids: list[str], emit: Emit) -> None:
        """One batched summarize call for the group's entities that outgrew composed summaries; its
        cost is added to the report of the group's last episode (written with the summaries)."""
        index, result = last
        episode = result.episode
        async with self._lock(episode.group_id):
            entities, report = await self._refresh(episode.group_id, uuids, carrier=episode)
        for entity in entities:
            emit(SummaryUpdated(episode.group_id, episode.uuid, index, entity_uuid=entity.uuid))
        carrier = episode.model_copy(update={"report": merge_reports(episode.report, report)})
        emit(EpisodeUpdated(episode.group_id, episode.uuid, index, result=replace(result, episode=carrier)))

    async def _refresh(
        self, group_id: str, uuids: list[str], *, carrier: Episode | None
    ) -> tuple[list[Entity], IngestReport]:
        """Model summaries for ``uuids`` (composed ones for small entities), written in one write that
        re-upserts ``carrier`` (an existing episode of the group; the store writes per episode)."""
        llm = MeteredLLM(self.llm)
        report = ReportBuilder(llm, MeteredEmbedder(self.embedder))
        entities = await self.store.get_entities(group_id, uuids)
        if not entities:
            return [], report.build()
        now = self.options.clock()
        facts = await current_facts(self.store, group_id, [e.uuid for e in entities], now)
        use_model = self.options.summary_mode != "off"
        summaries, _ = await summarize(
            llm, self.options, report, [(e, facts[e.uuid]) for e in entities], use_model=use_model
        )
        updated = [
            e.model_copy(update={"summary": summaries[e.uuid]})
            for e in entities
            if e.uuid in summaries and summaries[e.uuid] != e.summary
        ]
        built = report.build()
        if updated:
            if carrier is None:
                carrier = await self._any_episode(group_id)
            else:
                carrier = carrier.model_copy(update={"report": merge_reports(carrier.report, built)})
            await self.store.write_episode(EpisodeWrite(episode=carrier, entities=updated))
        return updated, built

    async def _any_episode(self, group_id: str) -> Episode:
        found = await self.store.episodes(group_id, limit=1)
        if not found:
            raise LookupError(f"group {group_id!r} has entities but no episode to write them with")
        return found[0]
