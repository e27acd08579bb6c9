"""Episode claims: no two processes on one store run the same episode (and spend its LLM calls) at once.

Before it runs an episode, the ingestion queue claims it in the store (``GraphStore.claim_episode``: an
owner and an expiry, taken atomically); while the run lasts, :func:`holding` renews the claim every third
of its length; at the end (done, failed or cancelled) it releases it. An episode claimed by another live
owner is not run: the queue looks at it again every ``poll_s`` and runs it only if the claim lapsed with
the episode still pending (its owner crashed), or skips it once the owner finished it. Correctness does not
rest on claims (``EpisodeWrite.unless_done`` keeps a write single-effect even when a frozen owner outlives
its claim); claims keep the cost single.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import socket
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from ..errors import StoreError
from ..graph.model import Episode
from ..graph.store import EpisodeLog

log = logging.getLogger("epigraph.ingest")

CLAIM_SECONDS = 60.0
"""How long a claim lasts unless renewed: the longest an episode of a crashed process waits for another."""


def process_owner() -> str:
    """A claim owner naming this process (host and pid, for people) and this queue (a random part)."""
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"


@dataclass(frozen=True)
class Leases:
    """How one ingestion queue claims episodes."""

    seconds: float = CLAIM_SECONDS
    """A claim's length; it is renewed every third of it while the run lasts."""
    poll_s: float = 1.0
    """How often an episode claimed by another owner is looked at again."""
    owner: str = field(default_factory=process_owner)

    def __post_init__(self) -> None:
        if not self.seconds > 0 or not self.poll_s > 0:
            raise ValueError(f"claims need a positive length and poll interval, not {self}")


@contextlib.asynccontextmanager
async def holding(store: EpisodeLog, episode: Episode, leases: Leases) -> AsyncIterator[None]:
    """Inside: ``episode``'s claim (already taken) is renewed in the background; on leaving it is
    released. A store failure at release is logged, not raised: the claim then lapses by itself."""
    renewal = renewing(store, episode, leases)
    try:
        yield
    finally:
        renewal.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await renewal
        try:
            await store.release_episode(episode.group_id, episode.uuid, leases.owner)
        except StoreError as exc:
            log.warning("releasing the claim on episode %s failed (it lapses): %s", episode.uuid, exc)


def renewing(store: EpisodeLog, episode: Episode, leases: Leases) -> asyncio.Task[None]:
    """``episode``'s claim (already taken) renewed in the background until the task is cancelled; the
    claim is not released then (``holding`` releases; an episode run ahead hands its claim on to its
    commit's ``holding``: ``lookahead``)."""
    return asyncio.create_task(_renew(store, episode, leases), name=f"claim:{episode.uuid}")


async def _renew(store: EpisodeLog, episode: Episode, leases: Leases) -> None:
    while True:
        await asyncio.sleep(leases.seconds / 3)
        try:
            claim = await store.claim_episode(episode.group_id, episode.uuid, leases.owner, leases.seconds)
        except StoreError as exc:
            log.warning("renewing the claim on episode %s failed: %s", episode.uuid, exc)
            continue
        if claim is None or claim.owner != leases.owner:
            # It lapsed (this process stalled) and another owner took it: both runs go on, the store
            # keeps the first write (unless_done), the other is reported a duplicate.
            log.warning("the claim on episode %s was lost to %s", episode.uuid, claim and claim.owner)
            return
