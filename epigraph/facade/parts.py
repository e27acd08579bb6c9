"""What a group's handle and its namespaces read of the graph they belong to: the parts
:class:`~epigraph.client.KnowledgeGraph` wires (a Protocol, so the facade never imports the client)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from ..config import Settings
from ..edit import Editor
from ..embed import Embedder
from ..graph.roles import role
from ..graph.store import EditStore, GraphStore
from ..ingestion.ingestor import Ingestor
from ..overview import OverviewOptions
from ..pipeline.options import IngestOptions
from ..prompts.protocol import LLM


class Graph(Protocol):
    """The wired parts of one graph, shared by every handle of it."""

    settings: Settings
    store: GraphStore
    """The core every store implements; a namespace asks for the optional role it needs
    (``graph.roles.role``)."""
    embedder: Embedder
    llm: LLM | None
    options: IngestOptions
    overview_options: OverviewOptions

    async def open(self) -> Any:
        """Set the store up (once) and start the local model when the settings ask for it."""

    @property
    def ingestor(self) -> Ingestor:
        """The graph's one ingestion queue (its group locks serialize corrections with episodes)."""


def editor_of(graph: Graph) -> Editor:
    """The corrections' editor over ``graph``: a correction never runs beside one of the group's episodes
    (it takes the queue's group lock). :class:`~epigraph.errors.StoreRoleMissing` for a store without
    the corrections role (``graph.store.CorrectionLog``)."""
    store = role(graph.store, EditStore, feature="corrections")
    return Editor(store, graph.embedder, graph.llm, graph.options, lock=graph.ingestor.group_lock)


async def asked(graph: Graph, group_ids: str | Sequence[str], text: str) -> str:
    """A query, a question or a name as the groups' texts hold it: with the redaction policy on, each
    value it replaces written as the groups' placeholder for it (``privacy.redactor.Redactor.query``),
    so a raw phone number finds its placeholder's facts and never reaches a model."""
    redactor = graph.ingestor.redactor
    if redactor is None:
        return text
    return await redactor.query([group_ids] if isinstance(group_ids, str) else group_ids, text)


async def opened(graph: Graph) -> Graph:
    """``graph``, once it is open (every method of a handle begins here)."""
    await graph.open()
    return graph
