"""The working state of one episode's run, shared by the stages (no globals, nothing persisted)."""

from __future__ import annotations

import uuid as uuidlib
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ..episodes.events import ProgressEvent
from ..graph.model import Episode
from ..graph.store import GraphReads
from ..prompts.extraction import EntityLine, FactLine
from ..prompts.runtime import PromptResult
from .metering import CallRecord, MeteredEmbedder, MeteredLLM, ReportBuilder
from .options import IngestOptions

Emit = Callable[[ProgressEvent], None]


def clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: max(0, limit - 1)].rstrip() + "…"


@dataclass
class Prefetched:
    """A turn's lines from its window's call; the first turn of a window also carries the call."""

    lines: list[EntityLine | FactLine] = field(default_factory=list)
    records: list[CallRecord] = field(default_factory=list)
    """The window call's record (charged to the first turn only)."""
    result: PromptResult[Any] | None = None
    """The window call's result (first turn only): what it dropped and why it ended."""
    delivered: bool = True
    """False when the window call failed, or its reply was cut before its first line: the turn
    extracts on its own, and reports the failed call and is charged for it."""


@dataclass
class EpisodeRun:
    episode: Episode
    store: GraphReads
    """What the run reads the graph through: reads only (the queue performs the write it returns)."""
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
