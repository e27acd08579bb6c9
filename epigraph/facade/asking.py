"""A group handle's questions (``GroupHandle.ask``): the chunks of :func:`epigraph.ask.dialog` over the
handle's graph, once it is open, with the question's personal data replaced first."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import aclosing
from datetime import datetime

from ..ask import AskChunk, AskMode, AskOptions, dialog
from ..errors import ConfigError
from .parts import Graph, asked, opened


async def asking(
    graph: Graph,
    group_id: str,
    question: str,
    as_of: datetime | str | None,
    known_at: datetime | str | None,
    streaming: bool,
    options: AskOptions | None,
    mode: AskMode | None,
) -> AsyncIterator[AskChunk]:
    """The chunks answering ``question`` from ``group_id``'s graph (``GroupHandle.ask`` says what each
    argument does); ConfigError when the graph has no LLM."""
    g = await opened(graph)
    if g.llm is None:
        raise ConfigError(
            "ask needs an LLM: set EPIGRAPH_LLM_MODEL and EPIGRAPH_LLM_BASE_URL (or "
            "EPIGRAPH_LLM_API_KEY), or pass llm= to KnowledgeGraph"
        )
    question = await asked(g, group_id, question)  # a raw value never reaches the model
    chunks = dialog(
        g.store, g.embedder, g.llm, group_id, question,
        as_of=as_of, known_at=known_at, options=options, stream_answer=streaming, mode=mode,
    )  # fmt: skip
    async with aclosing(chunks) as dialog_chunks:
        async for chunk in dialog_chunks:
            yield chunk
