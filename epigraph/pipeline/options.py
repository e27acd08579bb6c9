"""Ingestion options: every knob of the pipeline, with the reason for its default."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from ..graph.model import utc_now
from .ontology import Ontology

Mode = Literal["separate", "combined"]
SummaryMode = Literal["episode", "batch", "off"]

DEFAULT_RELATION_FAMILIES: tuple[frozenset[str], ...] = (
    frozenset({"LIVES_IN", "LIVED_IN", "RESIDES_IN", "MOVED_TO", "MOVED_FROM", "LOCATED_IN", "BASED_IN"}),
    frozenset({"WORKS_AT", "WORKS_FOR", "WORKED_AT", "EMPLOYED_BY", "JOINED", "LEFT", "HIRED_BY", "QUIT"}),
    frozenset({"MARRIED_TO", "DATING", "ENGAGED_TO", "DIVORCED_FROM", "PARTNER_OF", "BROKE_UP_WITH"}),
    frozenset({"STUDIES_AT", "STUDIED_AT", "ENROLLED_IN", "GRADUATED_FROM"}),
    frozenset({"OWNS", "OWNED", "SOLD", "BOUGHT"}),
)
"""Relations that can contradict each other across different targets (moving city, changing job).
Facts sharing one endpoint are contradiction candidates only when their relations are equal or in one
family; facts on the same endpoint pair always are."""


@dataclass(frozen=True)
class IngestOptions:
    """How episodes are ingested. The defaults meet the cost budget in ``bench/ingest_bench.py``."""

    mode: Mode = "separate"
    """``separate``: extract_entities then extract_facts (parallel with entity resolution);
    ``combined``: one extract_combined call (cheaper; compare with the bench)."""
    ontology: Ontology = field(default_factory=Ontology)
    context_tokens: int = 400
    """Token cap of the previous-episodes window sent to entity (or combined) extraction."""
    fact_context_tokens: int = 120
    """Smaller window for fact extraction: the entities are already resolved, only references remain."""
    context_episodes: int = 8
    """At most this many previous episodes are read before the token cap is applied."""
    clip_chars: int = 600
    """Episode text sent to resolution prompts is clipped to this many characters."""
    max_entity_candidates: int = 10
    max_fact_candidates: int = 8
    fact_batch: int = 6
    """New facts per resolve_fact call (each with its own candidate block); 1 = one fact per call."""
    vector_threshold: float = 0.82
    """Name cosine at or above which a vector hit is a plausible duplicate (lexical rules catch the rest)."""
    summary_mode: SummaryMode = "episode"
    """``episode``: at most one summarize call per episode; ``batch``: one per group at the end of
    ``add_episodes`` / ``ingest`` (entities get composed summaries in between; ``add_episode`` alone
    then leaves composed summaries, see ``Ingestor.refresh_summaries``); ``off``: composed only.
    ``add_episodes`` and ``ingest`` use ``batch`` unless told otherwise."""
    summary_compose_max: int = 4
    """An entity with at most this many current facts gets its facts joined as the summary, no model."""
    summary_facts_max: int = 15
    summary_batch: int = 20
    """Entities per summarize call."""
    relation_families: tuple[frozenset[str], ...] = DEFAULT_RELATION_FAMILIES
    clock: Callable[[], datetime] = utc_now
    """System time (created_at / expired_at); injectable for reproducible tests."""
