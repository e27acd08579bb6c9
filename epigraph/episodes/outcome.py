"""What the per-episode algorithm hands the queue: the one write an episode wants, and its result.

The algorithm (``pipeline.episode.ingest_episode``) reads the graph and computes; it writes nothing and
decides no status. It returns an :class:`EpisodeOutcome`, and the queue's runner (``ingestion.runner``)
stamps the episode ``done`` with its report, performs the write (``EpisodeWrite.unless_done``: of two
writers of one episode exactly one takes effect) and announces it (``EpisodeDone``), or saves the
episode ``failed`` when the run raised.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..graph.store import EpisodeWrite
from .events import EpisodeResult
from .verdicts import Verdict


@dataclass(frozen=True)
class EpisodeOutcome:
    """One episode's run, computed and not yet written.

    ``write``: everything the episode adds or changes (entities, facts, mentions, the summaries it leaves
    owed), its episode as it was run (still ``pending``, its report not yet built); ``result``: what the
    episode changed, for its caller (its entities, its new and restated facts, the facts it retired), with
    that same episode. The runner puts the stamped episode into both. ``verdicts``: what the gates of the
    names and facts rooms refused or changed on the way, in order (``verdicts``)."""

    write: EpisodeWrite
    result: EpisodeResult
    verdicts: tuple[Verdict, ...] = ()
