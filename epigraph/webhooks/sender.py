"""The deliveries: :class:`Webhooks` posts each episode's ``episode.done`` or ``episode.failed`` to
every URL, signed (:mod:`.signing`), in the background, so ingestion never waits on a receiver.

Each delivery is tried up to ``attempts`` times: a 2xx answer delivers it; any other answer, a timeout
or a connection failure waits ``backoff`` seconds (doubled after each try, at most 5 minutes) and tries
again. After the last try it is a **dead letter**: counted (:attr:`Webhooks.stats`, the server's
metrics and stats) and logged with the receiver's host only (a URL may carry a token). So are the
deliveries refused because ``queue`` were already waiting or in flight, and those still waiting when the
graph closes (after a grace period). Deliveries are not persisted: a process that dies loses the ones in
flight (the episodes' statuses stay in the store, for a receiver that reconciles).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace
from urllib.parse import urlsplit

import httpx

from ..config import Settings
from ..episodes.events import EpisodeResult
from ..errors import ConfigError
from ..graph.model import new_uuid
from ..version import __version__
from .payload import EVENTS, event_of, payload
from .signing import DELIVERY, EVENT, SIGNATURE, sign

log = logging.getLogger("epigraph.webhooks")

MAX_WAIT_S = 300.0


@dataclass
class WebhookStats:
    delivered: int = 0
    retries: int = 0
    """Tries after a first one that failed."""
    dead_letters: int = 0
    """Deliveries given up: every try failed, the queue was full, or the graph closed first."""
    outstanding: int = 0
    """Deliveries waiting or in flight now."""


class Webhooks:
    """Deliveries of episode events to ``urls``, signed with ``secret`` (see the module docstring).
    ``transport``: the httpx transport (tests; default: the network)."""

    def __init__(
        self,
        urls: Sequence[str],
        secret: str,
        *,
        events: Collection[str] = EVENTS,
        attempts: int = 5,
        backoff: float = 1.0,
        timeout: float = 10.0,
        queue: int = 1000,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.urls, self._secret, self.events = list(urls), secret, frozenset(events)
        self.attempts, self.backoff, self.timeout, self.queue = attempts, backoff, timeout, queue
        self._transport = transport
        self._client: httpx.AsyncClient | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._stats = WebhookStats()

    def __repr__(self) -> str:  # never the URLs (they may hold tokens) nor the secret
        return f"Webhooks({len(self.urls)} receiver(s), events={sorted(self.events)})"

    @property
    def stats(self) -> WebhookStats:
        return replace(self._stats, outstanding=len(self._tasks))

    # --- the queue's side: never waits -------------------------------------------------------------
    def episode_finished(self, result: EpisodeResult) -> None:
        """Queue the episode's event for every receiver (``Ingestor(watch=...)``) and return at once."""
        event = event_of(result)
        if event not in self.events:
            return
        delivery = new_uuid()
        body = json.dumps(payload(result, delivery), ensure_ascii=False).encode()
        for url in self.urls:
            if len(self._tasks) >= self.queue:
                self._dead(url, event, f"{self.queue} deliveries already waiting")
                continue
            task = asyncio.get_running_loop().create_task(self._deliver(url, event, delivery, body))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    # --- the deliveries --------------------------------------------------------------------------------
    async def _deliver(self, url: str, event: str, delivery: str, body: bytes) -> None:
        why = ""
        for attempt in range(1, self.attempts + 1):
            if attempt > 1:
                self._stats.retries += 1
                await asyncio.sleep(min(self.backoff * 2 ** (attempt - 2), MAX_WAIT_S))
            try:
                headers = self._headers(event, delivery, body)
                response = await self._http().post(url, content=body, headers=headers)
            except httpx.HTTPError as exc:
                why = f"{type(exc).__name__}"
                continue
            if 200 <= response.status_code < 300:
                self._stats.delivered += 1
                return
            why = f"HTTP {response.status_code}"
        self._dead(url, event, f"{self.attempts} tries, the last: {why}")

    def _headers(self, event: str, delivery: str, body: bytes) -> dict[str, str]:
        return {
            "Content-Type": "application/json",
            "User-Agent": f"epigraph/{__version__}",
            EVENT: event,
            DELIVERY: delivery,
            SIGNATURE: sign(self._secret, body, int(time.time())),
        }

    def _http(self) -> httpx.AsyncClient:
        if self._client is None or self._client.is_closed:
            self._client = httpx.AsyncClient(timeout=self.timeout, transport=self._transport)
        return self._client

    def _dead(self, url: str, event: str, why: str) -> None:
        self._stats.dead_letters += 1
        log.warning("webhook %s to %s is a dead letter: %s", event, urlsplit(url).hostname, why)

    # --- the end -----------------------------------------------------------------------------------
    async def drain(self, within: float | None = None) -> bool:
        """Wait for the deliveries waiting or in flight (at most ``within`` seconds); whether all ended."""
        if self._tasks:
            await asyncio.wait(set(self._tasks), timeout=within)
        return not self._tasks

    async def close(self, grace: float = 5.0) -> None:
        """Let the deliveries in flight end (``grace`` seconds at most), give up the rest (dead letters)
        and close the connections. The webhooks can be used again afterwards."""
        await self.drain(grace)
        left = list(self._tasks)
        for task in left:
            task.cancel()
        if left:
            await asyncio.wait(left)
            self._stats.dead_letters += len(left)
            log.warning("%d webhook deliveries given up: the graph closed first", len(left))
        if self._client is not None:
            await self._client.aclose()
            self._client = None


def webhooks_from_settings(settings: Settings) -> Webhooks | None:
    """The webhooks the settings name (``EPIGRAPH_WEBHOOK_*``), or None without URLs. ConfigError for a
    URL that is not http(s) (named by its position, never shown), URLs without a secret, or an event
    that is not one of ``episode.done`` / ``episode.failed``."""
    if settings.webhook_urls is None:
        return None
    urls = settings.webhook_urls.get_secret_value().replace(",", " ").split()
    for number, url in enumerate(urls, 1):
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ConfigError(f"EPIGRAPH_WEBHOOK_URLS: entry {number} is not an http(s) URL")
    if not urls:
        return None
    if settings.webhook_secret is None or not settings.webhook_secret.get_secret_value():
        raise ConfigError("EPIGRAPH_WEBHOOK_URLS needs EPIGRAPH_WEBHOOK_SECRET: every delivery is signed")
    events = [e.strip() for e in settings.webhook_events.split(",") if e.strip()]
    unknown = sorted(set(events) - set(EVENTS))
    if unknown or not events:
        given = unknown or events
        raise ConfigError(f"EPIGRAPH_WEBHOOK_EVENTS: one or both of {', '.join(EVENTS)}, not {given}")
    return Webhooks(
        urls, settings.webhook_secret.get_secret_value(), events=events, attempts=settings.webhook_attempts,
        backoff=settings.webhook_backoff, timeout=settings.webhook_timeout, queue=settings.webhook_queue,
    )  # fmt: skip
