"""Episode ingestion: extract, resolve, date, invalidate, summarize, write (DESIGN.md §5).

The entry point is :class:`Ingestor`, the one ingestion queue every door uses; ``KnowledgeGraph`` wires
it to its store, LLM and embedder.
"""

from .events import (
    EntityExtracted,
    EntityResolved,
    EpisodeDone,
    EpisodeFailed,
    EpisodeResult,
    EpisodeSaved,
    EpisodeUpdated,
    EpisodeWaiting,
    FactExtracted,
    FactInvalidated,
    ProgressEvent,
    SummaryUpdated,
)
from .ingestor import Ingestor, RemovalResult
from .inputs import EpisodeInput, parse_episode_lines
from .ontology import Ontology
from .options import IngestOptions
from .policy import GroundingPolicy

__all__ = [
    "EntityExtracted",
    "EntityResolved",
    "EpisodeDone",
    "EpisodeFailed",
    "EpisodeInput",
    "EpisodeResult",
    "EpisodeSaved",
    "EpisodeUpdated",
    "EpisodeWaiting",
    "FactExtracted",
    "FactInvalidated",
    "GroundingPolicy",
    "IngestOptions",
    "Ingestor",
    "Ontology",
    "ProgressEvent",
    "RemovalResult",
    "SummaryUpdated",
    "parse_episode_lines",
]
