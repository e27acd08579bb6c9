"""The ``communities`` scope's retrievers: BM25 over each community's name and summary, and cosine with
its embedding, ranked in memory.

A group holds few communities (tens to hundreds; ``overview.clusters`` groups thousands of entities in
each), so a search reads them all with one ``ViewReads.communities`` call per group (a store without that
optional role has none) and ranks them here:
``rank-bm25``'s BM25+ over the words of ``name`` (twice, so a name match outranks a passing mention) and
``summary`` without English stop words (plain BM25 scores turn negative when a word is in most of a few
documents, BM25+ stays positive), and numpy for the cosine. No store index is kept for them; past
some ten thousand communities a group would want one. Communities are searched as they are now (their
summaries describe the current graph); a view of them as of a time is ``KnowledgeGraph.communities``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from rank_bm25 import BM25Plus

from ..graph.derived import Community
from ..graph.roles import optional
from ..graph.store import GraphReads, Hit, ViewReads
from ..language import LUCENE_STOP_WORDS
from ..language import words as all_words


def words(text: str) -> list[str]:
    """Case-folded words of ``text`` without English stop words (the stores' list)."""
    return [w for w in (m.casefold() for m in all_words(text)) if w not in LUCENE_STOP_WORDS]


async def of_groups(store: GraphReads, group_ids: Sequence[str]) -> list[Community]:
    """The groups' communities; none for a store without the derived views (``ViewReads``)."""
    views = optional(store, ViewReads)
    found: list[Community] = []
    if views is None:
        return found
    for group_id in group_ids:
        found += await views.communities(group_id)
    return found


def bm25(communities: Sequence[Community], query: str, limit: int) -> list[Hit[Community]]:
    """Communities sharing a word with ``query``, best BM25 first (ties: larger, then by name)."""
    terms = words(query)
    if not communities or not terms:
        return []
    docs = [words(f"{c.name} {c.name} {c.summary}") for c in communities]
    scores = BM25Plus([d or ["\x00"] for d in docs]).get_scores(terms)
    hits = [
        Hit(c, float(s)) for c, s, d in zip(communities, scores, docs, strict=True) if set(terms) & set(d)
    ]
    return sorted(hits, key=lambda h: (-h.score, -len(h.item.members), h.item.name))[:limit]


def cosine(communities: Sequence[Community], vector: Sequence[float], limit: int) -> list[Hit[Community]]:
    """Communities with an embedding, by cosine with ``vector``."""
    query = np.asarray(vector, dtype=np.float64)
    norm = float(np.linalg.norm(query))
    hits = []
    for c in communities:
        if c.embedding is None or len(c.embedding) != len(query) or norm == 0.0:
            continue
        v = np.asarray(c.embedding, dtype=np.float64)
        scale = float(np.linalg.norm(v)) * norm
        if scale > 0.0:
            hits.append(Hit(c, float(v @ query) / scale))
    return sorted(hits, key=lambda h: (-h.score, h.item.name))[:limit]
