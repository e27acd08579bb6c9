"""What every method group of the facade reads from the graph it is part of: the attributes that
:class:`~epigraph.client.KnowledgeGraph` sets, and its ``open`` and ``ingestor``."""

from __future__ import annotations

from typing import Any

from ..config import Settings
from ..embed import Embedder
from ..graph.store import GraphStore
from ..ingestion.ingestor import Ingestor
from ..overview import OverviewOptions
from ..pipeline.options import IngestOptions
from ..prompts.protocol import LLM


class GraphParts:
    """The shared state of the facade's method groups (set by ``KnowledgeGraph.__init__``)."""

    settings: Settings
    group_id: str
    store: GraphStore
    embedder: Embedder
    llm: LLM | None
    options: IngestOptions
    overview: OverviewOptions

    async def open(self) -> Any:
        """Set the store up (once) and start the local model when the settings ask for it."""
        raise NotImplementedError

    @property
    def ingestor(self) -> Ingestor:
        """The graph's one ingestion queue (its group locks serialize corrections with episodes)."""
        raise NotImplementedError
