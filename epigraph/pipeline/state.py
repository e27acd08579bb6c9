"""The working state of one episode's run, shared by the stages (no globals, nothing persisted)."""

from __future__ import annotations

import uuid as uuidlib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..graph.model import Episode
from ..graph.store import GraphStore
from .events import ProgressEvent
from .metering import MeteredEmbedder, MeteredLLM, ReportBuilder
from .options import IngestOptions

if TYPE_CHECKING:
    from .bulk import Prefetched

Emit = Callable[[ProgressEvent], None]


def clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: max(0, limit - 1)].rstrip() + "…"


@dataclass
class EpisodeRun:
    episode: Episode
    store: GraphStore
    llm: MeteredLLM
    embedder: MeteredEmbedder
    options: IngestOptions
    report: ReportBuilder
    emit: Emit
    index: int
    now: datetime
    prefetched: Prefetched | None = None
    """Bulk mode: this turn's lines from its window's one extraction call (``pipeline.bulk``)."""

    @property
    def group_id(self) -> str:
        return self.episode.group_id

    def event(self, kind: type[ProgressEvent], **fields: Any) -> None:
        self.emit(kind(group_id=self.group_id, episode_uuid=self.episode.uuid, index=self.index, **fields))

    def child_uuid(self, kind: str, key: str) -> str:
        """Deterministic ids for what this episode creates: a rerun after a failure creates the same ids."""
        return str(uuidlib.uuid5(uuidlib.UUID(self.episode.uuid), f"{kind}\x00{key}"))
