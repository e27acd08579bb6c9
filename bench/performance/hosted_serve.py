"""The hosted bench's serve row: ``epigraph serve`` (a real subprocess, ``serve_harness.ServerProcess``)
configured as the library rows are (the simulated provider at the tier, its limits known to the client,
OpenAI embeddings from it, the embedded store), and ``serve_load``'s mixed clients: ``clients`` of them
for ``seconds``, each reading (search, an entity's view, the episodes listing, ask) and posting LoCoMo
turns (``hosted_turns.groups``) to the groups it is given, each already holding ``SEEDED`` done turns.

The clients post at most ``posts_per_min`` turns a minute together (a post past that budget is a
search; ``READS`` with a ``post`` weight of ``POST_WEIGHT``): a server asked for more than its provider
allows only queues, and the row would measure the queue. Every group's progress is followed on its
event stream (``GET .../events``) for accepted-to-done; after the clients stop, the queue drains and
every accepted episode is audited (done, failed or lost). The provider's embeddings here are its unit
vectors, not MiniLM: one encoder serializes the provider's embedding requests, which would make every
search wait behind the ingestion's (a hosted provider serves them in parallel); no quality is read.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx

from bench.performance.hosted_figures import (
    latencies,
    limit_share,
    percentile,
    refused,
    server_errors,
    until_share,
)
from bench.performance.hosted_provider import SimProvider, Tier
from bench.performance.hosted_rows import hosted_settings
from bench.performance.serve import cpu_s
from bench.performance.serve_load import mixed_load
from bench.shared.serve_harness import ServerProcess
from epigraph.episodes.inputs import EpisodeInput

SEEDED = 4
"""Turns per group ingested before the clients start (the entities they read)."""
READS = {"search": 30, "entity": 20, "episodes": 15, "ask": 2}
"""The clients' reading mix (``serve_load.WEIGHTS`` with fewer asks: each is a model call, and at a
provider's limits an ask costs what an episode's extraction does)."""


POST_WEIGHT = 25
"""Posts wanted, beside ``READS``: more than the budget lets through, so the budget sets the rate."""


def server_env(settings: Any, db: Path) -> dict[str, str]:
    """``hosted_settings`` as the server's environment (``EPIGRAPH_*``)."""
    from bench.shared.serve_harness import server_env as base

    values = {
        "EPIGRAPH_LLM_BASE_URL": settings.llm_base_url,
        "EPIGRAPH_LLM_API_KEY": settings.llm_api_key.get_secret_value(),
        "EPIGRAPH_LLM_MODEL": settings.llm_model,
        "EPIGRAPH_LLM_RPM": str(settings.llm_rpm),
        "EPIGRAPH_LLM_TPM": str(settings.llm_tpm),
        "EPIGRAPH_LLM_MAX_IN_FLIGHT": str(settings.llm_max_in_flight),
        "EPIGRAPH_LLM_TIMEOUT": "60",
        "EPIGRAPH_LLM_MAX_ATTEMPTS": "5",
        "EPIGRAPH_LLM_MAX_RETRY_SECONDS": "120",
        "EPIGRAPH_EMBEDDER": "openai",
        "EPIGRAPH_EMBED_BASE_URL": settings.embed_base_url,
        "EPIGRAPH_EMBED_API_KEY": settings.embed_api_key.get_secret_value(),
        "EPIGRAPH_EMBED_MODEL": settings.embed_model,
        "EPIGRAPH_EMBED_DIM": str(settings.embed_dim),
    }
    return base(db, settings.llm_base_url, **values)


class Bodies:
    """Each group's turns as the HTTP API takes them; ``episode(g, i)`` and ``name(g, i)`` for the load."""

    def __init__(self, items: Sequence[EpisodeInput]) -> None:
        self.groups: list[str] = list(dict.fromkeys(i.group_id for i in items))
        self.turns = {g: [i for i in items if i.group_id == g] for g in self.groups}

    def episode(self, g: int, i: int) -> dict[str, str]:
        turns = self.turns[self.groups[g]]
        turn = turns[i % len(turns)]
        return {
            "content": turn.content,
            "speaker": turn.speaker or "",
            "reference_time": turn.reference_time.isoformat(),
        }

    def name(self, g: int, i: int) -> str:
        return self.turns[self.groups[g]][i].speaker or ""


async def _follow(
    url: str, group: str, done: dict[str, float], failed: set[str], stop: asyncio.Event
) -> None:
    """Record when each of the group's episodes is done (or failed), from its event stream."""
    async with httpx.AsyncClient(base_url=url, timeout=None) as client:
        async with client.stream("GET", f"/v1/groups/{group}/events") as stream:
            async for line in stream.aiter_lines():
                if stop.is_set():
                    return
                if not line.startswith("data: "):
                    continue
                event = json.loads(line[6:])
                if event.get("type") == "EpisodeDone":
                    done.setdefault(event["episode_uuid"], time.monotonic())
                elif event.get("type") == "EpisodeFailed":
                    failed.add(event["episode_uuid"])


async def _pending(client: httpx.AsyncClient, groups: Sequence[str]) -> int:
    pending = 0
    for group in groups:
        pending += int((await client.get(f"/v1/groups/{group}/stats")).json()["pending_episodes"])
    return pending


async def _drain(url: str, groups: Sequence[str], timeout_s: float) -> bool:
    async with httpx.AsyncClient(base_url=url, timeout=60) as client:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if await _pending(client, groups) == 0:
                return True
            await asyncio.sleep(1.0)
    return False


async def _statuses(url: str, accepted: dict[str, list[str]]) -> dict[str, int]:
    counts = {"done": 0, "failed": 0, "lost": 0}
    async with httpx.AsyncClient(base_url=url, timeout=60) as client:
        for group, ids in accepted.items():
            listed = (await client.get(f"/v1/groups/{group}/episodes", params={"limit": 1000})).json()[
                "episodes"
            ]
            status = {e["uuid"]: e["status"] for e in listed}
            counts["done"] += sum(status.get(u) == "done" for u in ids)
            counts["failed"] += sum(status.get(u) == "failed" for u in ids)
            counts["lost"] += sum(status.get(u) in (None, "pending") for u in ids)
    return counts


async def _seed(url: str, bodies: Bodies) -> None:
    async with httpx.AsyncClient(base_url=url, timeout=120) as client:
        for g, group in enumerate(bodies.groups):
            batch = {"episodes": [bodies.episode(g, i) for i in range(SEEDED)]}
            (await client.post(f"/v1/groups/{group}/episodes/batch", json=batch)).raise_for_status()


async def serve_row(
    sim: SimProvider,
    tier: Tier,
    items: Sequence[EpisodeInput],
    *,
    clients: int,
    seconds: float,
    posts_per_min: float,
    max_in_flight: int,
    workdir: Path,
    drain_s: float,
) -> dict[str, float]:
    """Seed, load, drain, audit; the row's figures."""
    bodies = Bodies(items)
    env = server_env(
        hosted_settings(sim.url, tier, max_in_flight, workdir / "graph.db"), workdir / "graph.db"
    )
    server = ServerProcess(env, workdir / "serve.log").start()
    try:
        await _seed(server.url, bodies)
        await _drain(server.url, bodies.groups, drain_s)
        started = time.monotonic()
        cpu_started = cpu_s(server.proc.pid) if server.proc else 0.0
        done: dict[str, float] = {}
        failed: set[str] = set()
        stop = asyncio.Event()
        followers = [asyncio.create_task(_follow(server.url, g, done, failed, stop)) for g in bodies.groups]
        weights = {**READS, "post": POST_WEIGHT}
        load = await mixed_load(
            server.url,
            bodies.groups,
            SEEDED,
            clients,
            seconds,
            bodies.episode,
            bodies.name,
            weights,
            posts_per_min / 60,
        )
        drained = await _drain(server.url, bodies.groups, drain_s)
        stop.set()
        await asyncio.sleep(2.0)  # the last events reach the followers
        for task in followers:
            task.cancel()
        await asyncio.gather(*followers, return_exceptions=True)
        counts = await _statuses(server.url, load.accepted)
        server_cpu = (cpu_s(server.proc.pid) if server.proc else 0.0) - cpu_started
    finally:
        server.stop()
    stats = sim.stats()
    accepted_at = load.accepted_at
    waits = [done[u] - t for u, t in accepted_at.items() if u in done]
    finished = [done[u] for u in accepted_at if u in done]
    wall = (max(finished) - started) if finished else 0.0
    chat = {**stats["chat"], "admissions": [a for a in stats["chat"]["admissions"] if a[0] >= started]}
    figures: dict[str, float] = {
        "clients": float(clients),
        "seconds": seconds,
        "posts_offered_per_min": posts_per_min,
        "accepted": float(len(accepted_at)),
        "done": float(counts["done"]),
        "failed": float(counts["failed"]),
        "lost": float(counts["lost"]),
        "drained": float(drained),
        "messages_per_min": round(len(finished) / wall * 60, 2) if wall else 0.0,
        "http_429": float(refused(stats)),
        "http_5xx": float(server_errors(stats)),
        "request_errors": float(sum(load.errors.values())),
        "server_cpu_share": round(server_cpu / (time.monotonic() - started), 3),
    }
    figures.update(limit_share(chat, tier, until_share(finished)))
    figures.update(latencies("accepted_to_done", waits))
    for route in ("search", "entity", "ask"):
        values = load.latencies_ms[route]
        if len(values) >= 2:
            figures[f"{route}_p50_ms"] = round(statistics.median(values), 1)
            figures[f"{route}_p95_ms"] = round(percentile(values, 0.95), 1)
    for sample in load.samples:
        print(f"    serve: {sample}", flush=True)
    return figures
