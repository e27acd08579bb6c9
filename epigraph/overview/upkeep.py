"""Keeping the derived records up to date after each batch of ingestion: what the ingestion queue runs
at the end of a batch (:class:`Upkeep`, built by ``KnowledgeGraph`` into its queue), whatever door the
batch came by: ``add_episodes`` / ``ingest`` / ``retry_failed``, a pass of the server's background drain
(HTTP and MCP), a Kafka worker's lane once it ran what it had fetched.

Per group of the batch: the new episodes are folded into their conversations' summaries
(``Conversations.catch_up``: one call per conversation, more for a long backlog) and, when the group
already has communities, those are updated (``Communities.update``: at most one call per
``community_batch`` changed communities). Nothing here runs per episode, so ingestion's calls per
episode stay what the ingest bench measures. A model failure is logged and reported, never raised: the
episodes are stored, and the next update catches up.

After a removal (``Upkeep.after_removal``, called by the queue once the episode is deleted), the
conversation the episode belonged to is reset, so its next update folds the chain again from the start
(without the removed episode).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..embed import Embedder
from ..episodes.events import EpisodeResult, ProgressEvent
from ..episodes.reports import merge_reports
from ..errors import EpigraphError
from ..graph.derived import chain_key
from ..graph.model import Episode, IngestReport
from ..graph.store import OverviewStore
from ..prompts.protocol import LLM
from .communities import Communities, CommunityUpdate
from .conversations import Conversations, ConversationUpdate
from .options import OverviewOptions

log = logging.getLogger("epigraph.overview")


@dataclass(frozen=True)
class OverviewUpdated(ProgressEvent):
    """A group's conversations and communities after a batch, and what that cost (``episode_uuid`` is
    empty and ``index`` -1: it belongs to no one episode)."""

    conversations: list[ConversationUpdate] = field(default_factory=list)
    communities: CommunityUpdate | None = None
    report: IngestReport = field(default_factory=IngestReport)
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (the server's event stream): each update as its ``to_dict``, and the total cost."""
        r = self.report
        return {"type": type(self).__name__, "group_id": self.group_id,
                "conversations": [c.to_dict() for c in self.conversations],
                "communities": self.communities.to_dict() if self.communities else None,
                "llm_calls": r.llm_calls, "input_tokens": r.input_tokens, "output_tokens": r.output_tokens,
                "error": self.error}  # fmt: skip


@dataclass(frozen=True)
class Upkeep:
    """The ingestion queue's after-batch work and its upkeep after a removal
    (``ingestion.batch_end.AfterBatch``): over ``store`` (the
    queue's own, as paced, with the derived-view roles: ``KnowledgeGraph`` builds none for a store
    without them) with this embedder and these options, through the queue's model."""

    store: OverviewStore
    embedder: Embedder
    options: OverviewOptions

    async def __call__(self, llm: LLM | None, results: Sequence[EpisodeResult]) -> list[OverviewUpdated]:
        """Bring the derived records of the groups of ``results`` up to date (see the module docstring)."""
        fresh: dict[str, list[Episode]] = {}
        for result in results:
            if result.ok and not result.skipped:
                fresh.setdefault(result.episode.group_id, []).append(result.episode)
        if llm is None:
            return []
        return [
            await _group(self.store, llm, self.embedder, self.options, group, episodes)
            for group, episodes in fresh.items()
        ]

    async def after_removal(self, llm: LLM, episode: Episode) -> None:
        """``episode`` was removed: its conversation's summary is forgotten, to be folded again from the
        start (nothing for an episode of no conversation)."""
        if chain_key(episode.source_description) is not None:
            conversations = Conversations(self.store, llm, self.embedder, self.options)
            await conversations.reset(episode.group_id, episode.source_description)


async def _group(
    store: OverviewStore,
    llm: LLM,
    embedder: Embedder,
    options: OverviewOptions,
    group: str,
    episodes: list[Episode],
) -> OverviewUpdated:
    conversations: list[ConversationUpdate] = []
    communities: CommunityUpdate | None = None
    error = None
    try:
        if options.conversations_after_batch:
            conversations = await Conversations(store, llm, embedder, options).catch_up(group, episodes)
        if options.communities_after_batch and await store.communities(group):
            communities = await Communities(store, llm, embedder, options).update(group)
    except EpigraphError as exc:  # the model failed or refused: the next update catches up
        error = f"{type(exc).__name__}: {exc}"
        log.warning("after ingestion, group %r: %s (the next update catches up)", group, error)
    for update in conversations:
        if update.error:
            log.warning("conversation %r of group %r: %s", update.key, group, update.error)
    reports = [u.report for u in conversations] + ([communities.report] if communities else [])
    report = IngestReport()
    for part in reports:
        report = merge_reports(report, part)
    return OverviewUpdated(group, "", -1, conversations, communities, report, error)
