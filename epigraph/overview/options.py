"""Knobs of the derived records (communities and conversation summaries), with the reason for each default."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from ..embed import Embedder
from ..errors import ConfigError
from ..graph.model import utc_now
from ..graph.store import OverviewStore
from ..prompts.protocol import LLM


@dataclass(frozen=True)
class OverviewOptions:
    """How communities and conversation summaries are computed and when they are kept up to date."""

    communities_after_batch: bool = True
    """After each batch of ingestion (``add_episodes`` / ``ingest`` / retries, a server drain's pass, a
    Kafka lane's batch: the queue's ``after_batch``), update the communities of the groups that already
    have some (one summarize call per ``community_batch`` changed communities;
    usually one). A group gets its first communities from ``build_communities`` only: nobody pays for
    them unasked."""
    conversations_after_batch: bool = True
    """After each batch of ingestion, fold the new episodes of each chain they belong to into its summary (one
    call per chain per batch, more when its new text exceeds ``conversation_tokens``)."""
    min_size: int = 2
    """Clusters of fewer entities are no community (their entities belong to none)."""
    resolution: float = 1.0
    """Louvain's resolution: above 1, more and smaller communities; below 1, fewer and larger ones."""
    rebuild_share: float = 0.5
    """An update re-clusters everything (instead of placing the new entities) when the entities added
    to or gone from the fact graph since are more than this share of those already in a community."""
    community_batch: int = 8
    """Communities per summarize_communities call (each call's output is bounded by its count)."""
    members_shown: int = 12
    """The best connected members a community's summary is written from (the others are counted)."""
    member_summary_chars: int = 240
    """Each shown member's summary is cut to this many characters."""
    view_members: int = 50
    """Members listed per community by a view (the best connected first); ``size`` counts them all."""
    conversation_tokens: int = 1500
    """New episode text per summarize_conversation call; more new text makes more calls, in order."""
    episode_chars: int = 400
    """Each new episode is cut to this many characters in that call."""
    summary_chars: int = 1500
    """A conversation summary longer than this (a model ignoring the length asked) is cut."""
    max_new_episodes: int = 5000
    """Most episodes one conversation update reads; the rest wait for the next update."""
    clock: Callable[[], datetime] = field(default=utc_now)


class Service:
    """What the overview's services share: a store, a model (reads need none), an embedder, options."""

    what = "the overview"

    def __init__(
        self,
        store: OverviewStore,
        llm: LLM | None,
        embedder: Embedder,
        options: OverviewOptions | None = None,
    ) -> None:
        self.store, self.llm, self.embedder = store, llm, embedder
        self.options = options or OverviewOptions()

    def need_llm(self) -> LLM:
        """The model, or ConfigError naming what needs one."""
        if self.llm is None:
            raise ConfigError(f"{self.what} are written by a model: configure an LLM")
        return self.llm
