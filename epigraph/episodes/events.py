"""What ingestion returns: per-episode results and the typed progress events of ``Ingestor.ingest``.

Events report the progress of an episode's run as it happens (an entity resolved, a fact found to be
retired, a summary recomposed); nothing is persisted until the episode's one atomic write, which
``EpisodeDone`` announces. An ``EpisodeFailed`` after such events means none of them reached the graph.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from ..graph.model import Entity, Episode, EpisodeStatus, Fact, IngestReport

DUPLICATE = "skipped as a duplicate: the episode was already done by another writer; nothing was written"
"""The report warning of a run whose write the store refused (``EpisodeWrite.unless_done``)."""


@dataclass(frozen=True)
class EpisodeResult:
    """One episode's outcome: what it wrote and what it cost.

    ``entities``: the entities it created or updated; ``facts``: the facts it created and the existing
    facts it restated (provenance extended); ``invalidated``: the facts it retired, as stored after
    retirement (``invalidated_by`` set); ``skipped``: the episode was already done (nothing changed), before
    the run or, reported as :data:`DUPLICATE`, by another writer during it.
    """

    episode: Episode
    entities: list[Entity] = field(default_factory=list)
    facts: list[Fact] = field(default_factory=list)
    invalidated: list[Fact] = field(default_factory=list)
    skipped: bool = False

    @property
    def report(self) -> IngestReport:
        return self.episode.report

    @property
    def ok(self) -> bool:
        return self.episode.status == EpisodeStatus.DONE

    @property
    def error(self) -> str | None:
        return self.episode.error


@dataclass(frozen=True)
class ProgressEvent:
    group_id: str
    episode_uuid: str
    index: int
    """Position of the episode in the ingested sequence (0-based)."""


@dataclass(frozen=True)
class EpisodeSaved(ProgressEvent):
    pass


@dataclass(frozen=True)
class EpisodeWaiting(ProgressEvent):
    """Another process holds the episode's claim (``ingestion.claims``): it is not run here unless the
    claim lapses with the episode still pending; once the owner finishes it, it is skipped."""

    owner: str = ""
    until: datetime | None = None


@dataclass(frozen=True)
class EntityExtracted(ProgressEvent):
    name: str = ""


@dataclass(frozen=True)
class EntityResolved(ProgressEvent):
    name: str = ""
    entity_uuid: str = ""
    outcome: str = ""
    """``new``, ``exact`` (name/alias match, no model), ``merged`` (by the model) or ``distinct``."""


@dataclass(frozen=True)
class FactExtracted(ProgressEvent):
    text: str = ""


@dataclass(frozen=True)
class FactInvalidated(ProgressEvent):
    fact_uuid: str = ""
    by_fact_uuid: str = ""


@dataclass(frozen=True)
class SummaryUpdated(ProgressEvent):
    entity_uuid: str = ""


@dataclass(frozen=True)
class EpisodeDone(ProgressEvent):
    result: EpisodeResult | None = None


@dataclass(frozen=True)
class EpisodeUpdated(ProgressEvent):
    """A done episode's result changed afterwards: the batch summary refresh at the end of a group is
    charged to the group's last done episode (its report grows by the summarize call)."""

    result: EpisodeResult | None = None


@dataclass(frozen=True)
class EpisodeFailed(ProgressEvent):
    error: str = ""
    result: EpisodeResult | None = None
