"""The serve bench's mixed load: ``clients`` concurrent clients against one ``epigraph serve``, each in a
loop for ``seconds``: search, an entity's view, the episodes listing, ask, and POST an episode, chosen at
random by :data:`WEIGHTS` with a pause between requests (a person or an agent at a keyboard, not a closed
loop). The server ingests what they post meanwhile, through the scripted LLM of ``serve_harness``.

Every answer that is not a 2xx (or a request that fails) is an error, counted per route with its first
few texts. What the clients posted and the server accepted (202) is returned, for the audit: every
accepted episode must end ``done``.
"""

from __future__ import annotations

import asyncio
import random
import statistics
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

WEIGHTS = {"search": 30, "entity": 20, "episodes": 15, "ask": 10, "post": 25}
"""How often each route is chosen, in parts of 100."""
PAUSE_S = (0.3, 1.2)
"""A client waits a uniform time in this range between two requests."""

Episode = Callable[[int, int], dict[str, str]]
"""(group index, episode index) -> the episode's JSON body."""
Name = Callable[[int, int], str]
"""(group index, episode index) -> an entity name that episode holds."""


@dataclass
class MixedLoad:
    latencies_ms: dict[str, list[float]] = field(default_factory=lambda: {r: [] for r in WEIGHTS})
    errors: Counter[str] = field(default_factory=Counter)
    samples: list[str] = field(default_factory=list)
    """The first few errors: route, status and text."""
    accepted: dict[str, list[str]] = field(default_factory=dict)
    """Group -> uuids of the episodes the server accepted."""
    accepted_at: dict[str, float] = field(default_factory=dict)
    """Uuid -> ``time.monotonic()`` when its 202 arrived (the machine's clock: any process reads it)."""

    def figures(self) -> dict[str, float]:
        out: dict[str, float] = {
            "requests": float(sum(len(v) for v in self.latencies_ms.values())),
            "errors": float(sum(self.errors.values())),
        }
        for route, values in self.latencies_ms.items():
            out[f"{route}.requests"] = float(len(values))
            out[f"{route}.errors"] = float(self.errors[route])
            if len(values) >= 2:
                out[f"{route}.p50_ms"] = statistics.median(values)
                out[f"{route}.p95_ms"] = statistics.quantiles(values, n=100)[94]
        return out

    def to_json(self) -> dict[str, Any]:
        return {"latencies_ms": self.latencies_ms, "errors": dict(self.errors), "samples": self.samples,
                "accepted": self.accepted, "accepted_at": self.accepted_at}  # fmt: skip

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> MixedLoad:
        return cls(data["latencies_ms"], Counter(data["errors"]), data["samples"], data["accepted"],
                   data.get("accepted_at", {}))  # fmt: skip


class _Clients:
    def __init__(self, client: httpx.AsyncClient, groups: list[str], seeded: int, episode: Episode,
                 name: Name, load: MixedLoad, weights: dict[str, int],
                 posts_per_s: float | None) -> None:  # fmt: skip
        self.client, self.groups, self.episode, self.name, self.load = client, groups, episode, name, load
        self.seeded, self.weights, self.posts_per_s = seeded, weights, posts_per_s
        self.next = dict.fromkeys(range(len(groups)), seeded)
        """Group index -> the index of the next episode to post (unique content, so unique ids)."""
        self.started = time.monotonic()
        self.posted = 0

    def _choose(self, rng: random.Random) -> str:
        """A route by weight; a post past the posting budget becomes a search."""
        route = rng.choices(list(self.weights), list(self.weights.values()))[0]
        if route == "post" and self.posts_per_s is not None:
            if self.posted + 1 > self.posts_per_s * (time.monotonic() - self.started) + 1:
                return "search"
            self.posted += 1
        return route

    async def run(self, seed: int, until: float) -> None:
        rng = random.Random(seed)
        while time.monotonic() < until:
            route = self._choose(rng)
            g = rng.randrange(len(self.groups))
            started = time.perf_counter()
            try:
                response = await self._request(route, g, rng)
                ok, text = response.is_success, f"{response.status_code} {response.text[:200]}"
            except httpx.HTTPError as exc:
                ok, text = False, f"{type(exc).__name__}: {exc}"
                response = None
            self.load.latencies_ms[route].append((time.perf_counter() - started) * 1000)
            if not ok:
                self.load.errors[route] += 1
                if len(self.load.samples) < 10:
                    self.load.samples.append(f"{route}: {text}")
            elif route == "post" and response is not None:
                uuid = response.json()["episodes"][0]["uuid"]
                self.load.accepted.setdefault(self.groups[g], []).append(uuid)
                self.load.accepted_at[uuid] = time.monotonic()
            await asyncio.sleep(rng.uniform(*PAUSE_S))

    async def _request(self, route: str, g: int, rng: random.Random) -> httpx.Response:
        base = f"/v1/groups/{self.groups[g]}"
        known = self.name(g, rng.randrange(self.seeded))  # an entity of a seeded (done) episode
        if route == "search":
            return await self.client.get(f"{base}/search", params={"q": f"{known} knows", "limit": 10})
        if route == "entity":
            return await self.client.get(f"{base}/entities/{known}")
        if route == "episodes":
            return await self.client.get(f"{base}/episodes", params={"limit": 20})
        if route == "ask":
            return await self.client.post(f"{base}/ask", json={"question": f"Whom does {known} know?"})
        i = self.next[g]
        self.next[g] += 1
        return await self.client.post(f"{base}/episodes", json=self.episode(g, i))


async def mixed_load(
    url: str,
    groups: list[str],
    seeded: int,
    clients: int,
    seconds: float,
    episode: Episode,
    name: Name,
    weights: dict[str, int] | None = None,
    posts_per_s: float | None = None,
) -> MixedLoad:
    """``clients`` clients for ``seconds`` against the server at ``url`` whose ``groups`` each hold
    ``seeded`` done episodes (indices 0..seeded-1); they post episodes from index ``seeded`` on, and
    choose routes by ``weights`` (default ``WEIGHTS``; every route of it, a weight of 0 never). With
    ``posts_per_s`` they post at most that many a second together (a post past it is a search)."""
    load = MixedLoad()
    chosen = {route: (weights or WEIGHTS).get(route, 0) for route in WEIGHTS}
    limits = httpx.Limits(max_connections=clients + 4, max_keepalive_connections=clients + 4)
    async with httpx.AsyncClient(base_url=url, timeout=120, limits=limits) as client:
        driver = _Clients(client, groups, seeded, episode, name, load, chosen, posts_per_s)
        until = time.monotonic() + seconds
        await asyncio.gather(*(driver.run(seed, until) for seed in range(clients)))
    return load
