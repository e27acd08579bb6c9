"""Conversation chains and their running summaries.

A chain is the episodes of a group that share a source (``graph.derived.chain_key``), in chain order:
reference time, then recording time, then uuid, whatever order they arrived in (the store reads them in
that order; ``Conversation.previous`` / ``next`` walk it). Its summary is folded from the new episodes
only: those recorded after the newest episode already folded in (``covered_until``, system time), so an
episode that arrives late, dated before what the summary covers, is still new to it (and marked for the
model as late). New episodes are folded in recording order, ``conversation_tokens`` of text per call; a
call that fails stops the update after the calls before it (their episodes stay folded, the rest wait).
The store writes a summary version by version (``save_conversation_summary``), so of two updaters of one
chain, one stores its summary and the other's is dropped (``conflict``), never both folded twice.

An episode recorded before the mark that is done only later (a failed episode retried) would be passed
by: :meth:`Conversations.catch_up`, which the ingestion queue runs after each batch (``upkeep``: library
batches and retries, the server's drains, Kafka lanes), folds such a chain again from the start, and
removing an episode resets its chain's summary the same way.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ..errors import LLMError, UsageError
from ..graph.derived import ConversationSummary, chain_key
from ..graph.model import Episode, EpisodeStatus, IngestReport
from ..graph.store import Chain, ChainRead
from ..pipeline.metering import MeteredEmbedder, MeteredLLM, ReportBuilder
from ..pipeline.state import clip
from ..prompts import summarize_conversation as scv
from ..prompts.protocol import LLM
from ..prompts.runtime import run as run_prompt
from ..tokens import aload_encoding, count_text_tokens
from .options import Service

NONE_YET = "(none yet)"


@dataclass(frozen=True, slots=True)
class ChainView:
    """One chain of a group and its summary, if it has one."""

    chain: Chain
    summary: ConversationSummary | None

    @property
    def key(self) -> str:
        return self.chain.key

    @property
    def unsummarized(self) -> int:
        """Episodes of the chain not folded into its summary (pending and failed ones included)."""
        return max(0, self.chain.episodes - (self.summary.episodes if self.summary else 0))

    def to_dict(self) -> dict[str, Any]:
        c = self.chain
        return {"key": c.key, "episodes": c.episodes, "first_at": c.first_at.isoformat(),
                "last_at": c.last_at.isoformat(), "unsummarized": self.unsummarized,
                "summary": summary_dict(self.summary)}  # fmt: skip


@dataclass(frozen=True, slots=True)
class Conversation:
    """A chain's summary and its episodes in chain order (the latest ``limit`` of them)."""

    key: str
    summary: ConversationSummary | None
    episodes: list[Episode]
    total: int
    """Episodes in the chain (``episodes`` may hold only the latest)."""

    def previous(self, uuid: str) -> Episode | None:
        """The episode before ``uuid`` in the chain (None for the first one shown, or an unknown uuid)."""
        index = self._index(uuid)
        return self.episodes[index - 1] if index is not None and index > 0 else None

    def next(self, uuid: str) -> Episode | None:
        """The episode after ``uuid`` in the chain (None for the last one, or an unknown uuid)."""
        index = self._index(uuid)
        return self.episodes[index + 1] if index is not None and index + 1 < len(self.episodes) else None

    def _index(self, uuid: str) -> int | None:
        return next((i for i, e in enumerate(self.episodes) if e.uuid == uuid), None)

    def to_dict(self) -> dict[str, Any]:
        """The summary and the episodes, each with the uuids of its previous and next one."""
        episodes = []
        for i, e in enumerate(self.episodes):
            data = e.model_dump(mode="json", exclude={"content_embedding", "report"})
            data["previous"] = self.episodes[i - 1].uuid if i > 0 else None
            data["next"] = self.episodes[i + 1].uuid if i + 1 < len(self.episodes) else None
            episodes.append(data)
        return {
            "key": self.key,
            "total": self.total,
            "summary": summary_dict(self.summary),
            "episodes": episodes,
        }


@dataclass(frozen=True, slots=True)
class ConversationUpdate:
    """What one chain's update did and what it cost."""

    key: str
    summary: ConversationSummary | None
    """The chain's summary after the update, as stored."""
    folded: int
    """Episodes folded in by this update."""
    conflict: bool = False
    """Another updater stored its summary first; this one's was dropped."""
    error: str | None = None
    """Why the update stopped early (the model failed); what was folded before stands."""
    report: IngestReport = field(default_factory=IngestReport)

    def to_dict(self) -> dict[str, Any]:
        r = self.report
        return {"key": self.key, "folded": self.folded, "conflict": self.conflict, "error": self.error,
                "summary": summary_dict(self.summary), "llm_calls": r.llm_calls,
                "input_tokens": r.input_tokens, "output_tokens": r.output_tokens}  # fmt: skip


def summary_dict(summary: ConversationSummary | None) -> dict[str, Any] | None:
    return None if summary is None else summary.model_dump(mode="json")


class Conversations(Service):
    """The chains of a store's groups and their summaries, written by ``llm`` (reads need none)."""

    what = "conversation summaries"

    # --- reading ------------------------------------------------------------------------------------
    async def chains(self, group_id: str) -> list[ChainView]:
        chains = await self.store.chains(group_id)
        summaries = {s.key: s for s in await self.store.conversation_summaries(group_id)}
        return [ChainView(c, summaries.get(c.key)) for c in chains]

    async def conversation(self, group_id: str, key: str, *, limit: int = 50) -> Conversation | None:
        """The chain ``key``'s summary and latest ``limit`` episodes; None when the chain has none."""
        episodes = await self.store.chain_episodes(group_id, key, ChainRead(limit=limit, newest_first=True))
        if not episodes:
            return None
        summaries = await self.store.conversation_summaries(group_id, [key])
        total = next((c.episodes for c in await self.store.chains(group_id) if c.key == key), len(episodes))
        return Conversation(key, summaries[0] if summaries else None, episodes[::-1], total)

    # --- updating -----------------------------------------------------------------------------------
    async def update_all(
        self, group_id: str, keys: list[str] | None = None, *, rebuild: bool = False
    ) -> list[ConversationUpdate]:
        """Update the chains ``keys`` (default: every chain with episodes not folded in yet), in key order."""
        self.need_llm()
        if keys is None:
            keys = [v.key for v in await self.chains(group_id) if v.unsummarized or rebuild]
        return [await self.update(group_id, key, rebuild=rebuild) for key in sorted(set(keys))]

    async def catch_up(self, group_id: str, episodes: list[Episode]) -> list[ConversationUpdate]:
        """Fold ``episodes`` (just ingested) into their chains' summaries. A chain holding one recorded
        before its summary's mark (a failed episode retried) is folded again from the start: the mark
        would pass it by."""
        keys = sorted({k for e in episodes if (k := chain_key(e.source_description)) is not None})
        stored = {s.key: s for s in await self.store.conversation_summaries(group_id, keys)}
        updates = []
        for key in keys:
            mark = stored[key].covered_until if key in stored else None
            behind = mark is not None and any(
                e.created_at <= mark for e in episodes if e.source_description == key
            )
            updates.append(await self.update(group_id, key, rebuild=behind))
        return updates

    async def update(self, group_id: str, key: str, *, rebuild: bool = False) -> ConversationUpdate:
        """Fold the chain's new episodes into its summary (all of them again with ``rebuild``)."""
        llm = self.need_llm()
        if chain_key(key) is None:
            raise UsageError(
                f"not a conversation key: {key[:80]!r} (1-512 characters, no control characters)"
            )
        if rebuild:
            await self.reset(group_id, key)
        found = await self.store.conversation_summaries(group_id, [key])
        stored = found[0] if found else None
        read = ChainRead(
            recorded_after=stored.covered_until if stored else None,
            status=EpisodeStatus.DONE,
            limit=self.options.max_new_episodes,
        )
        new = await self.store.chain_episodes(group_id, key, read)
        metered = MeteredLLM(llm)
        report = ReportBuilder(metered, MeteredEmbedder(self.embedder))
        if not new:
            return ConversationUpdate(key, stored, 0, report=report.build())
        text, folded, error = await self._fold(metered, report, key, stored, new)
        if not folded:
            return ConversationUpdate(key, stored, 0, error=error, report=report.build())
        times = [e.reference_time for e in folded]
        bounds = [t for t in (stored.first_at, stored.last_at) if t is not None] if stored else []
        summary = ConversationSummary(
            group_id=group_id, key=key, summary=text,
            episodes=(stored.episodes if stored else 0) + len(folded),
            first_at=min(times + bounds), last_at=max(times + bounds),
            covered_until=max(e.created_at for e in folded),
            version=(stored.version + 1) if stored else 1, updated_at=self.options.clock(),
        )  # fmt: skip
        if not await self.store.save_conversation_summary(summary):
            now = await self.store.conversation_summaries(group_id, [key])
            return ConversationUpdate(key, now[0] if now else None, 0, True, error, report.build())
        return ConversationUpdate(key, summary, len(folded), error=error, report=report.build())

    async def reset(self, group_id: str, key: str) -> None:
        """Forget the chain's summary, so the next update folds the whole chain again."""
        found = await self.store.conversation_summaries(group_id, [key])
        if found and found[0].covered_until is not None:
            empty = ConversationSummary(
                group_id=group_id, key=key, version=found[0].version + 1, updated_at=self.options.clock()
            )
            await self.store.save_conversation_summary(empty)

    async def _fold(
        self,
        llm: LLM,
        report: ReportBuilder,
        key: str,
        stored: ConversationSummary | None,
        new: list[Episode],
    ) -> tuple[str, list[Episode], str | None]:
        """The summary with ``new`` folded in, batch by batch in recording order; the episodes folded and
        why it stopped early, if it did."""
        await aload_encoding()
        text = stored.summary if stored else ""
        covered = stored.last_at if stored else None
        folded: list[Episode] = []
        for batch in self._batches(sorted(new, key=lambda e: (e.created_at, e.uuid))):
            data = scv.SummarizeConversationInput(
                conversation=key, summary=text or NONE_YET, episodes=self._lines(batch, covered)
            )
            try:
                result = await run_prompt(llm, scv.PROMPT, data)
            except LLMError as exc:
                report.warn(f"summarize_conversation failed ({exc}); {len(folded)} episodes folded in")
                return text, folded, f"{type(exc).__name__}: {exc}"
            reply = " ".join(str(result.value or "").split())
            if not reply:
                report.warn("summarize_conversation gave an empty reply; the summary was kept")
                return text, folded, "empty reply"
            text = clip(reply, self.options.summary_chars)
            folded += batch
            latest = max(e.reference_time for e in batch)
            covered = latest if covered is None else max(covered, latest)
        return text, folded, None

    def _batches(self, episodes: list[Episode]) -> list[list[Episode]]:
        batches: list[list[Episode]] = [[]]
        used = 0
        for episode in episodes:
            cost = count_text_tokens(clip(episode.content, self.options.episode_chars)) + 8
            if batches[-1] and used + cost > self.options.conversation_tokens:
                batches.append([])
                used = 0
            batches[-1].append(episode)
            used += cost
        return batches

    def _lines(self, batch: list[Episode], covered: datetime | None) -> str:
        ordered = sorted(batch, key=lambda e: (e.reference_time, e.created_at, e.uuid))
        return "\n".join(
            f"[{e.reference_time:%Y-%m-%d}] {clip(' '.join(e.content.split()), self.options.episode_chars)}"
            + (" (arrived late)" if covered is not None and e.reference_time < covered else "")
            for e in ordered
        )
