"""Ask the graph: one context assembled without the model and one answering call, or a small bounded
agent that looks facts up; either way an answer with citations.

- :mod:`.options` — the paths (``context``, ``agent``, ``auto``; :data:`DEFAULT_MODE`) and ``AskOptions``;
- :mod:`.chunks` — the one chunk schema (``AskChunk``), ``Answer``, ``Citation``, ``AskUsage``;
- :mod:`.dialog` — one question's dialog: its path's retrieval steps, then the streamed answer;
- :mod:`.context` — the one-call context: named parts (facts, entities, episodes) within a budget;
- :mod:`.agent` — the agent's loop (plan, look up, observe);
- :mod:`.lookups` — fact search, entity view, episodes, with the dialog's time rules;
- :mod:`.observations` — the numbered facts and episodes the model sees, within a token budget;
- :mod:`.citations` — cited ids checked as the answer streams, and the grammar that makes a
  grammar-capable model cite.

Use it through :meth:`epigraph.KnowledgeGraph.ask`; :func:`dialog` is the same without the client.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from datetime import datetime

from ..embed import Embedder
from ..errors import UsageError
from ..graph.model import utc_now
from ..graph.store import GraphReads
from ..prompts.protocol import LLM
from ..search.filters import make_filters
from .chunks import (
    CHUNK_TYPES,
    Answer,
    AskChunk,
    AskUsage,
    ChunkType,
    Citation,
    answer_of,
    check_dialog,
    collect,
)
from .citations import CitationFilter, cited_answer_grammar
from .dialog import NOTHING, Dialog, answer_request, can_stream
from .lookups import Lookup, Lookups
from .options import ASK_MODES, DEFAULT_MODE, AskMode, AskOptions, ask_mode

__all__ = [
    "ASK_MODES",
    "CHUNK_TYPES",
    "DEFAULT_MODE",
    "NOTHING",
    "Answer",
    "AskChunk",
    "AskMode",
    "AskOptions",
    "AskUsage",
    "ChunkType",
    "Citation",
    "CitationFilter",
    "Lookup",
    "Lookups",
    "answer_of",
    "answer_request",
    "ask_mode",
    "can_stream",
    "check_dialog",
    "cited_answer_grammar",
    "collect",
    "dialog",
]


def dialog(
    store: GraphReads,
    embedder: Embedder,
    llm: LLM,
    group_id: str,
    question: str,
    *,
    as_of: datetime | str | None = None,
    known_at: datetime | str | None = None,
    options: AskOptions | None = None,
    stream_answer: bool = True,
    mode: str | None = None,
) -> AsyncGenerator[AskChunk, None]:
    """The chunks of one question's dialog (see :mod:`.dialog`; ``mode``: :mod:`.options`, None for
    :data:`DEFAULT_MODE`). Bad arguments raise at once."""
    text = question.strip()
    if not text:
        raise UsageError("ask needs a non-empty question")
    path = ask_mode(mode)
    times = make_filters(group_id, as_of=as_of, known_at=known_at)  # validated, UTC
    when, known = times.as_of, times.known_at
    opts = options or AskOptions()
    now = when or utc_now()
    lookups = Lookups(
        store, embedder, group_id, as_of=when, known_at=known, now=now,
        facts_limit=opts.facts_per_lookup, episodes_limit=opts.episodes_per_lookup,
    )  # fmt: skip
    run = Dialog(
        llm, lookups, text, now=now, known_at=known, options=opts, stream_answer=stream_answer, mode=path
    )
    return run.chunks()
